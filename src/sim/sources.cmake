list(APPEND MBLIN_SOURCES
  src/sim/sim.c
  src/sim/start.c
  src/sim/validate.c
)
