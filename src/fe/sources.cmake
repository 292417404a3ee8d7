list(APPEND MBLIN_SOURCES
  src/fe/part.c
  src/fe/calculix.c
  src/fe/nastran.c
  src/fe/spider.c
  src/fe/reduce.c
  src/fe/invariants.c
)
