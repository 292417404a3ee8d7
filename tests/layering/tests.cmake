# The floors of docs/architecture.md hold (issues 28 and 66): includes (internal and public
# headers) and calls (nm on this build's objects) only downward, no circle of folders, no call
# circle of more than two files inside src/model, no *_internal.h included from outside its
# folder, libmblin.so exporting exactly the API, the thin clients on the API only, no file past
# 1,000 lines nor function past 150. The plain build only (it reads this build's object files;
# the sanitized build has the same sources).
find_program(PYTHON3 python3)
find_program(MBLIN_NM nm)
if(PYTHON3 AND MBLIN_NM AND NOT MBLIN_SANITIZE)
  add_test(NAME test_layering COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/layering/check.py ${CMAKE_BINARY_DIR}
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endif()
# Each check of check.py fails on an injected fault: small synthetic trees compiled with this
# build's C compiler in a temporary directory (tests/layering/selftest.py); it reads no build.
if(PYTHON3 AND MBLIN_NM)
  add_test(NAME test_layering_selftest COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/layering/check.py --self-test)
  set_tests_properties(test_layering_selftest PROPERTIES ENVIRONMENT "CC=${CMAKE_C_COMPILER}" TIMEOUT 120)
endif()
