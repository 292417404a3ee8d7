list(APPEND MBLIN_SOURCES
  src/codegen/symlin.c
  src/codegen/symlin_elim.c
  src/codegen/symlin_moving.c
  src/codegen/symlin_special.c
  src/codegen/symlin_newton.c
  src/codegen/symlin_ode.c
  src/codegen/symlin_verify.c
  src/codegen/symlin_outputs.c
  src/codegen/emit.c
  src/codegen/latex.c
  src/codegen/expand.c
)
