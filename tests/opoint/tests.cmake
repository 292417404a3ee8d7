mblin_add_test(test_opoint ${CMAKE_CURRENT_SOURCE_DIR}/opoint/test_opoint.c)
