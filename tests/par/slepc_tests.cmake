# The SLEPc eigensolver over MPI (src/par/slepc.c) against ARPACK + KLU: the same eigenvalues to
# 1e-10 and the same mode shapes on 1, 2 and 4 (oversubscribed) ranks. Included when
# MBLIN_SLEPC_FOUND (cmake/slepc.cmake) and a launcher (MBLIN_MPIEXEC, cmake/par.cmake).
add_executable(test_slepc ${CMAKE_CURRENT_SOURCE_DIR}/par/test_slepc.c ${MBLIN_SLEPC_SOURCES})
target_include_directories(test_slepc PRIVATE ${PROJECT_SOURCE_DIR}/tests ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(test_slepc PRIVATE mblin_static PkgConfig::SLEPC MPI::MPI_C)
# Sanitized build: address and undefined-behaviour checks stay on; leak detection is off, since
# Open MPI, PETSc and their OpenBLAS keep allocations until exit in components they have unloaded
# by then (LeakSanitizer's report names no module to suppress); mblin's own code is leak-checked by
# the rest of the suite, the ARPACK path being the same code without the engine.
set(slepc_asan_env "")
if(MBLIN_SANITIZE)
  set(slepc_asan_env "ASAN_OPTIONS=detect_leaks=0:abort_on_error=1")
endif()
# NAME RANKS MODEL [NEV SHIFT SHIFT_IM]
function(mblin_slepc_test name ranks model)
  add_test(NAME ${name} COMMAND timeout 300 ${MBLIN_MPIEXEC} --allow-run-as-root --oversubscribe -n ${ranks}
           $<TARGET_FILE:test_slepc> ${model} ${ARGN} WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(${name} PROPERTIES ENVIRONMENT "OPENBLAS_NUM_THREADS=1;${slepc_asan_env}")
  if(ranks GREATER 1)
    # Open MPI's ranks spin while they wait for each other: beside another test on a 2-core machine
    # one of them is descheduled and the others spin for its time slice (test_slepc_cli took 97 s
    # in a full run, 5 s alone). Several ranks run alone (RUN_SERIAL; tests/README.md).
    set_tests_properties(${name} PROPERTIES RUN_SERIAL TRUE)
  endif()
endfunction()
foreach(p 1 2 4)
  # the flexible double pendulum of source 001 (n_p = 50 per link): the symmetric path (GHEP)
  mblin_slepc_test(slepc_flex_pendulum_np${p} ${p} examples/flexible_pendulum_beams.yaml 20)
  # a damped hanging chain of 300 masses (n = 600, m = 300): the first-order pencil (GNHEP)
  mblin_slepc_test(slepc_chain_np${p} ${p} tests/par/chain_N300.yaml 20)
  # a gyroscopic rotor of 50 discs (n = 200): the 10 eigenvalues nearest the complex shift 300i
  mblin_slepc_test(slepc_rotor_complex_shift_np${p} ${p} tests/par/rotor_N50.yaml 10 0 300)
endforeach()
# the command line: --eigensolver slepc against the default ARPACK path (JSON keys, eigenvalues, shapes)
if(PYTHON3)
  add_test(NAME test_slepc_cli COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/par/slepc_cli_test.py
           $<TARGET_FILE:mblin_cli> ${MBLIN_MPIEXEC} WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(test_slepc_cli PROPERTIES ENVIRONMENT "OPENBLAS_NUM_THREADS=1;${slepc_asan_env}" TIMEOUT 1500 RUN_SERIAL TRUE)
endif()
