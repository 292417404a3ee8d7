# tests of src/la
mblin_add_test(test_la_dense ${CMAKE_CURRENT_SOURCE_DIR}/la/test_la_dense.c)
mblin_add_test(test_la_sparse ${CMAKE_CURRENT_SOURCE_DIR}/la/test_la_sparse.c)
mblin_add_test(test_la_gpl ${CMAKE_CURRENT_SOURCE_DIR}/la/test_la_gpl.c)
mblin_add_test(test_la_eigs ${CMAKE_CURRENT_SOURCE_DIR}/la/test_la_eigs.c)
mblin_add_test(test_la_equil ${CMAKE_CURRENT_SOURCE_DIR}/la/test_la_equil.c)
mblin_add_test(test_la_match ${CMAKE_CURRENT_SOURCE_DIR}/la/test_la_match.c)
mblin_add_test(test_la_eigs_quad ${CMAKE_CURRENT_SOURCE_DIR}/la/test_la_eigs_quad.c)
mblin_add_test(test_la_tridiag ${CMAKE_CURRENT_SOURCE_DIR}/la/test_la_tridiag.c)
