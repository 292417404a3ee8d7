list(APPEND MBLIN_SOURCES
  src/lin/eval.c
  src/lin/budget.c
  src/lin/eigsort.c
  src/lin/select.c
  src/lin/augmented.c
  src/lin/methods.c
  src/lin/common.c
  src/lin/reduce.c
  src/lin/partition.c
  src/lin/nullspace.c
  src/lin/projection.c
  src/lin/descriptor.c
  src/lin/penalty.c
  src/lin/penalty_sparse.c
  src/lin/fd.c
  src/lin/sparse_pencil.c
)
