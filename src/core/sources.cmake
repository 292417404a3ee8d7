list(APPEND MBLIN_SOURCES
  src/core/status.c
  src/core/alloc.c
)
