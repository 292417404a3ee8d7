list(APPEND MBLIN_SOURCES
  src/sim/sim.c
  src/sim/validate.c
)
