# tests of src/expr are listed here
mblin_add_test(test_expr_build ${CMAKE_CURRENT_SOURCE_DIR}/expr/test_expr_build.c)
mblin_add_test(test_expr_diff ${CMAKE_CURRENT_SOURCE_DIR}/expr/test_expr_diff.c)
mblin_add_test(test_expr_parse ${CMAKE_CURRENT_SOURCE_DIR}/expr/test_expr_parse.c)
mblin_add_test(test_expr_tape ${CMAKE_CURRENT_SOURCE_DIR}/expr/test_expr_tape.c)
mblin_add_test(test_expr_alloc ${CMAKE_CURRENT_SOURCE_DIR}/expr/test_expr_alloc.c)
mblin_add_test(test_expr_wide ${CMAKE_CURRENT_SOURCE_DIR}/expr/test_expr_wide.c)
mblin_add_test(test_expr_reserve ${CMAKE_CURRENT_SOURCE_DIR}/expr/test_expr_reserve.c)
mblin_add_test(test_expr_bound ${CMAKE_CURRENT_SOURCE_DIR}/expr/test_expr_bound.c)
