# User routines (include/mblin/user.h, docs/user-routines.md): the example routines of examples/user/
# as loadable libraries, one per file (lib<name>.so), in MBLIN_USER_LIB_DIR, where the tests find them
# (tests/user/tests.cmake adds its test libraries there with the same function). They include
# mblin/user.h only and link against no part of mblin, as a user's library does.
set(MBLIN_USER_LIB_DIR ${CMAKE_BINARY_DIR}/examples/user)
function(mblin_user_library name source)
  add_library(${name} MODULE ${source})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/include)
  target_link_libraries(${name} PRIVATE ${MATH_LIB})
  set_target_properties(${name} PROPERTIES PREFIX "lib" LIBRARY_OUTPUT_DIRECTORY ${MBLIN_USER_LIB_DIR})
endfunction()
mblin_user_library(tire_mf ${PROJECT_SOURCE_DIR}/examples/user/tire_mf.c)
mblin_user_library(motor ${PROJECT_SOURCE_DIR}/examples/user/motor.c)
