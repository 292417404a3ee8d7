# The MPI plugin libmblin_par.so (src/par/, docs/parallel.md "Architecture"). The command-line tool
# never links MPI, PETSc or SLEPc: cli/par_load.c loads the plugin with dlopen when the tool runs
# under mpirun (or an option asks for it), from the tool's directory or the install's libdir. The
# plugin is not linked against libmblin: the tool exports its own mbl* symbols to it
# (cmake/cli_exports.list, a dynamic list: only those, so that the plugin's MPI/PETSc dependencies
# never bind to the tool's static OpenBLAS or LAPACK), one copy of the library per process.
find_package(MPI COMPONENTS C QUIET)
option(MBLIN_MPI "Build the MPI plugin libmblin_par.so (mpirun -n P mblin sweep ...; needs libopenmpi-dev)" ${MPI_C_FOUND})

target_include_directories(mblin_cli PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src ${CMAKE_CURRENT_SOURCE_DIR}/include)
target_compile_definitions(mblin_cli PRIVATE MBLIN_PAR_LIBDIR="${CMAKE_INSTALL_FULL_LIBDIR}"
  MBLIN_PAR_RELLIBDIR="${CMAKE_INSTALL_LIBDIR}")
target_link_libraries(mblin_cli PRIVATE ${CMAKE_DL_LIBS})
target_link_options(mblin_cli PRIVATE "-Wl,--dynamic-list=${CMAKE_CURRENT_SOURCE_DIR}/cmake/cli_exports.list")
set_property(TARGET mblin_cli APPEND PROPERTY LINK_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/cmake/cli_exports.list)

set(MBLIN_PAR_BUILT OFF)
if(MBLIN_MPI)
  if(NOT MPI_C_FOUND)
    message(FATAL_ERROR "MBLIN_MPI=ON but MPI was not found (Debian: libopenmpi-dev openmpi-bin; make setup installs them)")
  endif()
  # MODULE: loaded with dlopen only; next to build/mblin (the tool looks there first)
  add_library(mblin_par MODULE ${CMAKE_CURRENT_SOURCE_DIR}/src/par/mpi.c)
  # only its entry table is exported (mblin_par_entry, marked default visibility in mpi.c)
  set_target_properties(mblin_par PROPERTIES PREFIX "lib" OUTPUT_NAME mblin_par C_VISIBILITY_PRESET hidden
    LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
  target_include_directories(mblin_par PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src ${CMAKE_CURRENT_SOURCE_DIR}/include)
  target_link_libraries(mblin_par PRIVATE MPI::MPI_C)
  add_dependencies(mblin_cli mblin_par)
  install(TARGETS mblin_par LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  set(MBLIN_PAR_BUILT ON)
  # FindMPI's launcher (/usr/bin/mpiexec: Open MPI derives its prefix from the path, and /bin/mpiexec
  # of a merged-/usr system gives the prefix "/", which it refuses)
  set(MBLIN_MPIEXEC ${MPIEXEC_EXECUTABLE})
  message(STATUS "mblin: MPI plugin libmblin_par.so (MBLIN_MPI)")
endif()
