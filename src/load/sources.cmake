list(APPEND MBLIN_SOURCES
  src/load/load.c
  src/load/copy.c
)
