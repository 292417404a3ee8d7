# The HTML report's page template (web/report.html) is embedded into the library at build time.
set(MBLIN_REPORT_TEMPLATE_C ${CMAKE_CURRENT_BINARY_DIR}/report_template.c)
add_custom_command(
  OUTPUT ${MBLIN_REPORT_TEMPLATE_C}
  COMMAND ${CMAKE_COMMAND} -DIN=${CMAKE_CURRENT_SOURCE_DIR}/web/report.html -DOUT=${MBLIN_REPORT_TEMPLATE_C}
          -DNAME=report_page_template -P ${CMAKE_CURRENT_SOURCE_DIR}/cmake/embed.cmake
  DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/web/report.html ${CMAKE_CURRENT_SOURCE_DIR}/cmake/embed.cmake
  COMMENT "Embedding web/report.html")
list(APPEND MBLIN_SOURCES
  src/report/report.c
  src/report/export.c
  src/report/obuf.c
  src/report/compare.c
  src/report/html.c
  src/report/output.c
  src/report/sparsity.c
  ${MBLIN_REPORT_TEMPLATE_C}
)
