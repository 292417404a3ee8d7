list(APPEND MBLIN_SOURCES
  src/mech/beam.c
)
