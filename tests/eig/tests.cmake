# tests of src/eig
mblin_add_test(test_eig ${CMAKE_CURRENT_SOURCE_DIR}/eig/test_eig.c)
