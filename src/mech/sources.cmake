list(APPEND MBLIN_SOURCES
  src/mech/tree.c
  src/mech/urdf.c
)
