# tests of src/la
mblin_add_test(test_la_dense ${CMAKE_CURRENT_SOURCE_DIR}/la/test_la_dense.c)
