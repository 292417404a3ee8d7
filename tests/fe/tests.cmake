# Tests of src/fe: the FE part readers, the Craig-Bampton reduction and the invariants (issue 67).
# the CalculiX and Nastran readers: ccx runs on tests/fe/data/block.inp at test time
mblin_add_test(test_fe_read ${CMAKE_CURRENT_SOURCE_DIR}/fe/test_fe_read.c)
mblin_add_test(test_fe_reduce ${CMAKE_CURRENT_SOURCE_DIR}/fe/test_fe_reduce.c)
# the FE side of the example (gmsh, ccx) against values without mblin, and mblin's beam body
if(MBLIN_PYTHON3_NUMPY)
  add_test(NAME test_ccx_example COMMAND ${MBLIN_PYTHON3_NUMPY} ${CMAKE_CURRENT_SOURCE_DIR}/fe/ccx_example_test.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(test_ccx_example PROPERTIES SKIP_RETURN_CODE 77)
  # the link as a modal body against CalculiX itself (issue 67, item 5)
  add_test(NAME test_fe_ccx COMMAND ${MBLIN_PYTHON3_NUMPY} ${CMAKE_CURRENT_SOURCE_DIR}/fe/fe_ccx_test.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(test_fe_ccx PROPERTIES SKIP_RETURN_CODE 77)
endif()
