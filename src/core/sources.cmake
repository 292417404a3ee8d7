list(APPEND MBLIN_SOURCES
  src/core/status.c
  src/core/progress.c
  src/core/alloc.c
  src/core/json.c
  src/core/numfmt.c
)
