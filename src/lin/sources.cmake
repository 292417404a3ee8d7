list(APPEND MBLIN_SOURCES
  src/lin/select.c
  src/lin/augmented.c
)
