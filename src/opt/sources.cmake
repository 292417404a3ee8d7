list(APPEND MBLIN_SOURCES
  src/opt/optimize.c
  src/opt/opt_eval.c
  src/opt/opt_kkt.c
  src/opt/opt_valley.c
  src/opt/opt_frf.c
  src/opt/opt_crit.c
  src/opt/opt_expr.c
)
