# tests of src/lin are listed here
mblin_add_test(test_methods ${CMAKE_CURRENT_SOURCE_DIR}/lin/test_methods.c)
mblin_add_test(test_scaling ${CMAKE_CURRENT_SOURCE_DIR}/lin/test_scaling.c)
