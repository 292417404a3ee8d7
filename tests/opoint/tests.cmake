mblin_add_test(test_opoint ${CMAKE_CURRENT_SOURCE_DIR}/opoint/test_opoint.c)
mblin_add_test(test_converge ${CMAKE_CURRENT_SOURCE_DIR}/opoint/test_converge.c)
mblin_add_test(test_held_velocities ${CMAKE_CURRENT_SOURCE_DIR}/opoint/test_held_velocities.c)
mblin_add_test(test_jac_once ${CMAKE_CURRENT_SOURCE_DIR}/opoint/test_jac_once.c)
