mblin_add_bench(bench_sim ${CMAKE_CURRENT_SOURCE_DIR}/bench_sim.c)
