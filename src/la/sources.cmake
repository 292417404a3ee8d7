list(APPEND MBLIN_SOURCES
  src/la/dense.c
  src/la/dense_eig.c
  src/la/dense_rcond.c
  src/la/dense_cod.c
  src/la/csc.c
  src/la/klu.c
  src/la/klu_saddle.c
  src/la/klu_amd_memo.c
  src/la/match.c
  src/la/gpl.c
  src/la/eigs.c
  src/la/eigs_refine.c
  src/la/eigs_refine_quad.c
  src/la/blas_info.c
  src/la/sym_check.c
)
