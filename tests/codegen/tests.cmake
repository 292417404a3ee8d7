mblin_add_test(test_codegen ${CMAKE_CURRENT_SOURCE_DIR}/codegen/test_codegen.c)
mblin_add_test(test_symbolic ${CMAKE_CURRENT_SOURCE_DIR}/codegen/test_symbolic.c)
mblin_add_test(test_codegen_point ${CMAKE_CURRENT_SOURCE_DIR}/codegen/test_codegen_point.c)
