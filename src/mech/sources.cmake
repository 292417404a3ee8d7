list(APPEND MBLIN_SOURCES
  src/mech/tree.c
)
