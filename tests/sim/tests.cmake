# tests of src/sim: simulation (closed forms, drift), the stabilization's Hessian, the signal fit,
# validation of the linear models; the CLI's simulate and validate
mblin_add_test(test_sim ${CMAKE_CURRENT_SOURCE_DIR}/sim/test_sim.c)
find_program(PYTHON3 python3)
if(PYTHON3)
  add_test(NAME test_sim_cli COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/sim/test_sim_cli.py $<TARGET_FILE:mblin_cli>
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endif()
