list(APPEND MBLIN_SOURCES
  src/modal/modal.c
  src/modal/order.c
)
