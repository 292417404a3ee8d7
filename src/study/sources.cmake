list(APPEND MBLIN_SOURCES
  src/study/sensitivity.c
  src/study/boundary.c
)
