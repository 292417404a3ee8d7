mblin_add_test(test_mechanism ${CMAKE_CURRENT_SOURCE_DIR}/mech/test_mechanism.c)
mblin_add_test(test_mech_checks ${CMAKE_CURRENT_SOURCE_DIR}/mech/test_mech_checks.c)
mblin_add_test(test_tree ${CMAKE_CURRENT_SOURCE_DIR}/mech/test_tree.c)
mblin_add_test(test_relative ${CMAKE_CURRENT_SOURCE_DIR}/mech/test_relative.c)
