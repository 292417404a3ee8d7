mblin_add_bench(bench_relin ${CMAKE_CURRENT_SOURCE_DIR}/bench_relin.c)
mblin_add_bench(bench_flex ${CMAKE_CURRENT_SOURCE_DIR}/bench_flex.c)
mblin_add_bench(bench_flex_table ${CMAKE_CURRENT_SOURCE_DIR}/bench_flex_table.c)
mblin_add_bench(tape_sizes ${CMAKE_CURRENT_SOURCE_DIR}/tape_sizes.c)
