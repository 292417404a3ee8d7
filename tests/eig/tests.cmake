# tests of src/eig
mblin_add_test(test_eig ${CMAKE_CURRENT_SOURCE_DIR}/eig/test_eig.c)
# zero modes decided per eigenvalue (issue 30, item 3), through the command line
find_program(PYTHON3 python3)
if(PYTHON3)
  add_test(NAME test_eig_zero_modes COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/eig/zero_modes_test.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endif()
# dgeev's mode shapes against NumPy's null vectors, backward errors below 1e-12 (the scaling
# balancer's retry, branch s17-mparam)
if(MBLIN_PYTHON3_NUMPY)
  add_test(NAME test_eig_dgeev_shapes COMMAND ${MBLIN_PYTHON3_NUMPY} ${CMAKE_CURRENT_SOURCE_DIR}/eig/dgeev_shapes_test.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endif()
