# Eigenvalues independent of the OpenBLAS kernel (issue 27): every model file of examples/ and
# tests/ under the machine's own kernel and under forced ones (agree.py; `make test-kernels` runs
# the other numerical tests under forced kernels). The plain build only: a numerical property, and
# the sanitized tool would take minutes. Two workers, so it counts as two processors.
find_program(PYTHON3 python3)
if(PYTHON3 AND NOT MBLIN_SANITIZE)
  add_test(NAME test_kernels_agree COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/kernels/agree.py
           $<TARGET_FILE:mblin_cli> -j 2 WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(test_kernels_agree PROPERTIES ENVIRONMENT "OPENBLAS_NUM_THREADS=1"
                       SKIP_RETURN_CODE 77 PROCESSORS 2 TIMEOUT 600)
endif()
