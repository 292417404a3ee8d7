list(APPEND MBLIN_SOURCES
  src/mech/mechanism.c
  src/mech/util.c
  src/mech/body.c
  src/mech/joint.c
  src/mech/force.c
  src/mech/measure.c
  src/mech/beam.c
  src/mech/beam3.c
  src/mech/modal_body.c
  src/mech/relative.c
  src/mech/tree.c
  src/mech/urdf.c
  src/mech/pmech.c
)
