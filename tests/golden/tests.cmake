# Every example's output byte for byte as recorded (issue 28: a restructuring changes no number):
# golden.py runs the tool on every model file with every method and a list of study commands under
# one forced OpenBLAS kernel and compares digests with outputs.sha256. The plain build only (the
# sanitized tool would take minutes and prints the same bytes). Two workers: two processors.
find_program(PYTHON3 python3)
if(PYTHON3 AND NOT MBLIN_SANITIZE)
  add_test(NAME test_golden_outputs COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/golden/golden.py
           $<TARGET_FILE:mblin_cli> -j 2 WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(test_golden_outputs PROPERTIES ENVIRONMENT "OPENBLAS_NUM_THREADS=1"
                       SKIP_RETURN_CODE 77 PROCESSORS 2 TIMEOUT 600)
endif()
