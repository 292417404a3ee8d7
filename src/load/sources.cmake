list(APPEND MBLIN_SOURCES
  src/load/load.c
)
