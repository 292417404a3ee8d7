list(APPEND MBLIN_SOURCES
  src/fe/spider.c
  src/fe/reduce.c
  src/fe/invariants.c
)
