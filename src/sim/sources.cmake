list(APPEND MBLIN_SOURCES
  src/sim/sim.c
  src/sim/start.c
  src/sim/validate.c
  src/sim/random.c
  src/sim/psd.c
  src/sim/accel.c
  src/sim/ssode.c
)
