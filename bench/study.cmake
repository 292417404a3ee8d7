mblin_add_bench(bench_sweep ${CMAKE_CURRENT_SOURCE_DIR}/bench_sweep.c)
