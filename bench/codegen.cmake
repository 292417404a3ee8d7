mblin_add_bench(bench_codegen ${CMAKE_CURRENT_SOURCE_DIR}/bench_codegen.c)
target_link_libraries(bench_codegen PRIVATE ${CMAKE_DL_LIBS})
