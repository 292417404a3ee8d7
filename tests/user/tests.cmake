# User routines (issue 68): the test libraries (cmake/user_routines.cmake puts them beside the
# examples' in MBLIN_USER_LIB_DIR; a test program gets that folder as its compile definition
# MBLIN_USER_LIB_DIR) and the routines called directly against sympy.
foreach(lib bad_abi no_abi nan_routine err_routine wrong_partials plain)
  mblin_user_library(${lib} ${CMAKE_CURRENT_SOURCE_DIR}/user/${lib}.c)
endforeach()
set(MBLIN_USER_TEST_LIBS tire_mf motor bad_abi no_abi nan_routine err_routine wrong_partials plain)
mblin_add_test(test_user_routines ${CMAKE_CURRENT_SOURCE_DIR}/user/test_user_routines.c)
target_compile_definitions(test_user_routines PRIVATE MBLIN_USER_LIB_DIR="${MBLIN_USER_LIB_DIR}")
target_link_libraries(test_user_routines PRIVATE ${CMAKE_DL_LIBS})
add_dependencies(test_user_routines ${MBLIN_USER_TEST_LIBS})
# the example models with routines (examples/user) against the built-in Magic Formula and the
# expression language, through the library's API
mblin_add_test(test_user_models ${CMAKE_CURRENT_SOURCE_DIR}/user/test_user_models.c)
target_compile_definitions(test_user_models PRIVATE MBLIN_USER_LIB_DIR="${MBLIN_USER_LIB_DIR}")
add_dependencies(test_user_models ${MBLIN_USER_TEST_LIBS})
