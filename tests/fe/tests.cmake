# Tests of src/fe: the FE part readers, the Craig-Bampton reduction and the invariants (issue 67).
