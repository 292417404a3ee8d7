# The HTML report in headless Chromium (Debian `chromium`, installed by `make setup`): skipped
# (exit 77) when Chromium is absent. Not under the sanitizers: the browser is the slow part and
# the C side of the report is exercised by the CLI tests there.
find_program(PYTHON3 python3)
if(PYTHON3 AND NOT MBLIN_SANITIZE)
  add_test(NAME test_report_browser COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/report/report_test.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(test_report_browser PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 900
                       ENVIRONMENT "OPENBLAS_NUM_THREADS=1")
  # the numbers the page prints and the axes it draws (issue 30, item 11)
  add_test(NAME test_report_numbers COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/report/numbers_test.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(test_report_numbers PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600
                       ENVIRONMENT "OPENBLAS_NUM_THREADS=1")
endif()
mblin_add_test(test_draw ${CMAKE_CURRENT_SOURCE_DIR}/report/test_draw.c)
mblin_add_test(test_version ${CMAKE_CURRENT_SOURCE_DIR}/report/test_version.c)
mblin_add_test(test_numfmt ${CMAKE_CURRENT_SOURCE_DIR}/report/test_numfmt.c)
# the eigen table's damped frequency against source 003's Table 5.2 (issue 70, item 7)
if(PYTHON3)
  add_test(NAME test_eigen_table COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/report/eigen_table_test.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(test_eigen_table PROPERTIES ENVIRONMENT "OPENBLAS_NUM_THREADS=1;PYTHONDONTWRITEBYTECODE=1")
endif()
