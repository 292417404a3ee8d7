list(APPEND MBLIN_SOURCES
  src/model/source.c
  src/model/model.c
  src/model/diag.c
  src/model/ustates.c
  src/model/ext.c
  src/model/ffr.c
  src/model/rtree.c
  src/model/ffr3.c
  src/model/dae_deriv.c
  src/model/vtrans.c
  src/model/dae_eval.c
  src/model/ffr_num.c
  src/model/pmech_num.c
)
