# Tests of src/fe: the FE part readers, the Craig-Bampton reduction and the invariants (issue 67).
# the CalculiX and Nastran readers: ccx runs on tests/fe/data/block.inp at test time
mblin_add_test(test_fe_read ${CMAKE_CURRENT_SOURCE_DIR}/fe/test_fe_read.c)
mblin_add_test(test_fe_reduce ${CMAKE_CURRENT_SOURCE_DIR}/fe/test_fe_reduce.c)
