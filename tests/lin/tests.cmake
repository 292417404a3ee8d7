# tests of src/lin are listed here
mblin_add_test(test_methods ${CMAKE_CURRENT_SOURCE_DIR}/lin/test_methods.c)
