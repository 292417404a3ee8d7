# The floors of docs/architecture.md hold (issue 28): includes and calls (nm on this build's
# objects) only downward, no two folders using each other, libmblin.so exporting exactly the API,
# the thin clients on the API only, no file past 1,000 lines nor function past 150. The plain
# build only (it reads this build's object files; the sanitized build has the same sources).
find_program(PYTHON3 python3)
find_program(MBLIN_NM nm)
if(PYTHON3 AND MBLIN_NM AND NOT MBLIN_SANITIZE)
  add_test(NAME test_layering COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/layering/check.py ${CMAKE_BINARY_DIR}
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endif()
