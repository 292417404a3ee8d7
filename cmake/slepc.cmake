# SLEPc eigensolver over MPI (src/par/slepc.c; docs/parallel.md "SLEPc eigensolver").
# MBLIN_SLEPC: ON by default when pkg-config finds SLEPc (libslepc-real-dev, which brings PETSc and
# Open MPI); the SLEPc code is built only into the plugin libmblin_par.so (never into libmblin or the
# command line). MBLIN_SLEPC_FOUND tells the rest of the build. Its tests run under mpiexec
# (MBLIN_MPIEXEC, with --allow-run-as-root --oversubscribe: the tests run as root in the CI container).
option(MBLIN_SLEPC "Build the SLEPc eigensolver (--eigensolver slepc) into the MPI plugin" ON)
set(MBLIN_SLEPC_FOUND OFF)
if(MBLIN_SLEPC)
  pkg_check_modules(SLEPC IMPORTED_TARGET slepc)
  find_package(MPI COMPONENTS C)
  if(SLEPC_FOUND AND MPI_C_FOUND)
    set(MBLIN_SLEPC_FOUND ON)
    set(MBLIN_SLEPC_SOURCES ${PROJECT_SOURCE_DIR}/src/par/slepc.c)
    find_program(MBLIN_MPIEXEC NAMES mpiexec mpirun)
    set(MBLIN_MPIEXEC_FLAGS --allow-run-as-root --oversubscribe)
  else()
    message(WARNING "mblin: the SLEPc eigensolver is not built (libslepc-real-dev or MPI missing; make setup installs them)")
  endif()
endif()
