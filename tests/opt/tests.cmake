# mbl_optimize (src/opt, issue 71): the tuned mass damper's equal-damping optimum from four starts,
# the gradients against central differences, a tracked mode through a crossing, the errors
mblin_add_test(test_optimize ${CMAKE_CURRENT_SOURCE_DIR}/opt/test_optimize.c)
