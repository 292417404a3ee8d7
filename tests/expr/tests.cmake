# tests of src/expr are listed here
mblin_add_test(test_expr_build ${CMAKE_CURRENT_SOURCE_DIR}/expr/test_expr_build.c)
mblin_add_test(test_expr_diff ${CMAKE_CURRENT_SOURCE_DIR}/expr/test_expr_diff.c)
