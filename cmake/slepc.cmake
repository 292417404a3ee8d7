# SLEPc eigensolver over MPI (src/par/slepc.c; docs/parallel.md "SLEPc eigensolver").
# MBLIN_SLEPC: ON by default; built when pkg-config finds SLEPc (libslepc-real-dev, which brings PETSc
# with MUMPS) and the MPI plugin libmblin_par.so is built (cmake/par.cmake, MBLIN_MPI): the SLEPc code
# goes into that plugin only, never into libmblin or the command-line tool (`--eigensolver slepc`
# loads the plugin). MBLIN_SLEPC_FOUND tells the tests (tests/par/slepc_tests.cmake).
option(MBLIN_SLEPC "Build the SLEPc eigensolver (--eigensolver slepc) into the MPI plugin" ON)
set(MBLIN_SLEPC_FOUND OFF)
if(MBLIN_SLEPC)
  pkg_check_modules(SLEPC IMPORTED_TARGET slepc)
  if(SLEPC_FOUND AND MBLIN_PAR_BUILT)
    set(MBLIN_SLEPC_FOUND ON)
    set(MBLIN_SLEPC_SOURCES ${PROJECT_SOURCE_DIR}/src/par/slepc.c)
    target_sources(mblin_par PRIVATE ${MBLIN_SLEPC_SOURCES})
    target_compile_definitions(mblin_par PRIVATE MBLIN_PAR_SLEPC=1)
    target_link_libraries(mblin_par PRIVATE PkgConfig::SLEPC)
    message(STATUS "mblin: SLEPc eigensolver in the MPI plugin (MBLIN_SLEPC)")
  else()
    message(WARNING "mblin: the SLEPc eigensolver is not built (libslepc-real-dev, or the MPI plugin, missing; make setup installs them)")
  endif()
endif()
