# tests of src/sim: simulation (closed forms, drift), the stabilization's Hessian, the signal fit,
# validation of the linear models; the CLI's simulate and validate
mblin_add_test(test_sim ${CMAKE_CURRENT_SOURCE_DIR}/sim/test_sim.c)
find_program(PYTHON3 python3)
if(PYTHON3)
  add_test(NAME test_sim_cli COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/sim/test_sim_cli.py $<TARGET_FILE:mblin_cli>
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endif()
# valgrind memcheck on the plain build (valgrind and the sanitizers do not mix)
find_program(VALGRIND valgrind)
if(VALGRIND AND NOT MBLIN_SANITIZE)
  add_test(NAME test_sim_valgrind COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/sim/valgrind_sim.sh $<TARGET_FILE:mblin_cli>
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(test_sim_valgrind PROPERTIES ENVIRONMENT "OPENBLAS_NUM_THREADS=1")
endif()
# issue 30: the start at the solved point's ODE states and the mode's ODE part, a sweep's CSV read
# by its header, unstable modes in validate, work limits refused before the work (needs numpy)
if(MBLIN_PYTHON3_NUMPY)
  add_test(NAME test_sim_start_cli COMMAND ${MBLIN_PYTHON3_NUMPY} ${CMAKE_CURRENT_SOURCE_DIR}/sim/test_sim_start_cli.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endif()
# issue 65, item 13: Ctrl-C and --progress during simulate's and validate's integration, validate's
# time budget (--max-time) refused at once with its estimate
if(PYTHON3)
  add_test(NAME test_sim_interrupt COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/sim/sim_interrupt_test.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endif()
# issue 70, item 5: Welch's PSD against closed forms, the band-limited random input against its
# definition (C); simulate's --input random and --psd against numpy/scipy, and source 000's
# rotor-stator on a random base: the PSD's peaks at the linear model's frequencies (Python)
mblin_add_test(test_psd ${CMAKE_CURRENT_SOURCE_DIR}/sim/test_psd.c)
if(MBLIN_PYTHON3_NUMPY)
  add_test(NAME test_psd_cli COMMAND ${MBLIN_PYTHON3_NUMPY} ${CMAKE_CURRENT_SOURCE_DIR}/sim/test_psd_cli.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endif()
# issue 70, item 3: simulate --integrator ssode (coordinate partitioning) against the pendulum's angle
# ODE (scipy), IDA on a slider-crank that repartitions, the four-bar and the rotor-stator ramp
if(MBLIN_PYTHON3_NUMPY)
  add_test(NAME test_ssode_cli COMMAND ${MBLIN_PYTHON3_NUMPY} ${CMAKE_CURRENT_SOURCE_DIR}/sim/test_ssode_cli.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endif()
# s43: --input naming one input twice refused, a huge input refused at the start naming it, every
# command's number option named in its complaint
if(PYTHON3)
  add_test(NAME test_sim_input_cli COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/sim/test_sim_input_cli.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(test_sim_input_cli PROPERTIES ENVIRONMENT "PYTHONDONTWRITEBYTECODE=1")
endif()
