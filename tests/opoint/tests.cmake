mblin_add_test(test_opoint ${CMAKE_CURRENT_SOURCE_DIR}/opoint/test_opoint.c)
mblin_add_test(test_converge ${CMAKE_CURRENT_SOURCE_DIR}/opoint/test_converge.c)
