list(APPEND MBLIN_SOURCES
  src/expr/graph.c
  src/expr/diff.c
  src/expr/print.c
  src/expr/parse.c
  src/expr/tape.c
)
