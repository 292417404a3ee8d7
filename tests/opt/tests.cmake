# mbl_optimize (src/opt, issue 71): the tuned mass damper's equal-damping optimum from four starts,
# the gradients against central differences, a tracked mode through a crossing, the errors
mblin_add_test(test_optimize ${CMAKE_CURRENT_SOURCE_DIR}/opt/test_optimize.c)
# mblin optimize: a two-mass chain's frequency out of a band against a NumPy brute-force scan from
# three starts, the progress lines and final report, usage errors and an infeasible problem (needs
# numpy and scipy)
if(MBLIN_PYTHON3_NUMPY)
  add_test(NAME test_optimize_cli COMMAND ${MBLIN_PYTHON3_NUMPY} ${CMAKE_CURRENT_SOURCE_DIR}/opt/optimize_cli_test.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endif()
