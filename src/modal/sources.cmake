list(APPEND MBLIN_SOURCES
  src/modal/modal.c
)
