mblin_add_test(test_mechanism ${CMAKE_CURRENT_SOURCE_DIR}/mech/test_mechanism.c)
