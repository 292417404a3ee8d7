# A sweep over MPI ranks through the plugin (docs/parallel.md): bench_sweep_mpi, run as one process
# and under mpiexec -n P. Like the tool, it exports its mbl* symbols to the plugin.
if(MBLIN_PAR_BUILT)
  mblin_add_bench(bench_sweep_mpi ${CMAKE_CURRENT_SOURCE_DIR}/bench_sweep_mpi.c)
  target_compile_definitions(bench_sweep_mpi PRIVATE MBLIN_PAR_PLUGIN="$<TARGET_FILE:mblin_par>")
  target_link_options(bench_sweep_mpi PRIVATE "-Wl,--dynamic-list=${PROJECT_SOURCE_DIR}/cmake/cli_exports.list")
  target_link_libraries(bench_sweep_mpi PRIVATE ${CMAKE_DL_LIBS})
  add_dependencies(bench_sweep_mpi mblin_par)
endif()
