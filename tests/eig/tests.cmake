# tests of src/eig
mblin_add_test(test_eig ${CMAKE_CURRENT_SOURCE_DIR}/eig/test_eig.c)
# zero modes decided per eigenvalue (issue 30, item 3), through the command line
find_program(PYTHON3 python3)
if(PYTHON3)
  add_test(NAME test_eig_zero_modes COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/eig/zero_modes_test.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endif()
