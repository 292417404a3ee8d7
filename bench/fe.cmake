mblin_add_bench(bench_fe_reduce ${CMAKE_CURRENT_SOURCE_DIR}/bench_fe_reduce.c)
