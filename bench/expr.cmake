mblin_add_bench(bench_expr ${CMAKE_CURRENT_SOURCE_DIR}/bench_expr.c)
mblin_add_bench(bench_fwd ${CMAKE_CURRENT_SOURCE_DIR}/bench_fwd.c)
