list(APPEND MBLIN_SOURCES
  src/report/report.c
  src/report/compare.c
)
