list(APPEND MBLIN_SOURCES
  src/codegen/symlin.c
  src/codegen/emit.c
  src/codegen/latex.c
  src/codegen/expand.c
)
