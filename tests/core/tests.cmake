mblin_add_test(test_core ${CMAKE_CURRENT_SOURCE_DIR}/core/test_core.c)
mblin_add_test(test_progress ${CMAKE_CURRENT_SOURCE_DIR}/core/test_progress.c)
