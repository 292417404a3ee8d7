mblin_add_test(test_mechanism ${CMAKE_CURRENT_SOURCE_DIR}/mech/test_mechanism.c)
mblin_add_test(test_mech_checks ${CMAKE_CURRENT_SOURCE_DIR}/mech/test_mech_checks.c)
mblin_add_test(test_tree ${CMAKE_CURRENT_SOURCE_DIR}/mech/test_tree.c)
mblin_add_test(test_relative ${CMAKE_CURRENT_SOURCE_DIR}/mech/test_relative.c)
if(MBLIN_PYTHON3_NUMPY)
  add_test(NAME test_fourbar_eq412 COMMAND ${MBLIN_PYTHON3_NUMPY} ${CMAKE_CURRENT_SOURCE_DIR}/mech/test_fourbar_eq412.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endif()
