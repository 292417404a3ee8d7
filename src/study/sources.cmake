list(APPEND MBLIN_SOURCES
  src/study/sweep.c
  src/study/track.c
  src/study/freqresp.c
  src/study/svg.c
  src/study/sensitivity.c
  src/study/boundary.c
)
