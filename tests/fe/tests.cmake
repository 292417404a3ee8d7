# Tests of src/fe: the FE part readers, the Craig-Bampton reduction and the invariants (issue 67).
mblin_add_test(test_fe_reduce ${CMAKE_CURRENT_SOURCE_DIR}/fe/test_fe_reduce.c)
