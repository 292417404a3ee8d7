mblin_add_test(test_codegen ${CMAKE_CURRENT_SOURCE_DIR}/codegen/test_codegen.c)
