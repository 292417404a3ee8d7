list(APPEND MBLIN_SOURCES
  src/eig/eig.c
)
