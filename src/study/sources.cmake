list(APPEND MBLIN_SOURCES
  src/study/sweep.c
  src/study/sweep_point.c
  src/study/sweep_dist.c
  src/study/sweep_critical.c
  src/study/sweep_write.c
  src/study/track.c
  src/study/freqresp.c
  src/study/svg.c
  src/study/sensitivity.c
  src/study/sens_point.c
  src/study/sens_pencil.c
  src/study/sens_spen.c
  src/study/boundary.c
  src/study/compare.c
  src/study/mode_pick.c
  src/study/floquet.c
)
