# The sweep's distribution (mbl_sweep_dist) without MPI: thread-ranks and a shared-memory gather, so
# the split, packing and failure paths run in every build (sanitizers, valgrind) with the library alone.
mblin_add_test(test_sweep_dist ${CMAKE_CURRENT_SOURCE_DIR}/par/test_sweep_dist.c)
target_link_libraries(test_sweep_dist PRIVATE Threads::Threads)
# mblin under mpirun (cmake/par.cmake, docs/parallel.md): run when the MPI plugin is built and an
# MPI launcher is found (make setup installs openmpi-bin). Ranks are oversubscribed on small
# machines; as root Open MPI needs OMPI_ALLOW_RUN_AS_ROOT (the script sets it).
if(MBLIN_PAR_BUILT AND MBLIN_MPIEXEC AND PYTHON3)
  add_test(NAME test_mpi_sweep COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/par/mpi_sweep_test.py
           $<TARGET_FILE:mblin_cli> ${MBLIN_MPIEXEC} $<TARGET_FILE:mblin_par> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set(mpi_env "OPENBLAS_NUM_THREADS=1")
  if(MBLIN_SANITIZE)
    # Open MPI keeps allocations until exit: its libraries' leaks are not ours. Their stacks need the
    # slow unwinder (Open MPI is built without frame pointers: the fast one stops at the first
    # frame, in an unnamed module) and the MCA components kept loaded to be named.
    string(APPEND mpi_env ";LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_SOURCE_DIR}/par/lsan.supp:fast_unwind_on_malloc=0")
    string(APPEND mpi_env ";OMPI_MCA_mca_base_component_disable_dlclose=1;PMIX_MCA_mca_base_component_disable_dlclose=1")
    string(APPEND mpi_env ";MBLIN_SANITIZED=1")
  endif()
  # its ranks spin while they wait: it runs alone (tests/par/slepc_tests.cmake says why)
  set_tests_properties(test_mpi_sweep PROPERTIES ENVIRONMENT "${mpi_env}" TIMEOUT 1500 RUN_SERIAL TRUE)
endif()
