# tests of src/lin are listed here
mblin_add_test(test_methods ${CMAKE_CURRENT_SOURCE_DIR}/lin/test_methods.c)
mblin_add_test(test_scaling ${CMAKE_CURRENT_SOURCE_DIR}/lin/test_scaling.c)
mblin_add_test(test_relin ${CMAKE_CURRENT_SOURCE_DIR}/lin/test_relin.c)
mblin_add_test(test_relin_dense ${CMAKE_CURRENT_SOURCE_DIR}/lin/test_relin_dense.c)
mblin_add_test(test_mass_condition ${CMAKE_CURRENT_SOURCE_DIR}/lin/test_mass_condition.c)
mblin_add_test(test_relin_jac ${CMAKE_CURRENT_SOURCE_DIR}/lin/test_relin_jac.c)
mblin_add_test(test_err_clusters ${CMAKE_CURRENT_SOURCE_DIR}/lin/test_err_clusters.c)
mblin_add_test(test_lin_oneshot ${CMAKE_CURRENT_SOURCE_DIR}/lin/test_lin_oneshot.c)
# penalty's and descriptor's error estimates bound their deviations (issue 30, item 9), through the CLI
find_program(PYTHON3 python3)
if(PYTHON3)
  add_test(NAME test_lin_estimates COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/lin/estimates_test.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endif()
# fd's velocity Newton stops at its rounding floor (issue 31, item 1), through the CLI
if(PYTHON3)
  add_test(NAME test_lin_fd_floor COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/lin/fd_floor_test.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endif()
mblin_add_test(test_select_given ${CMAKE_CURRENT_SOURCE_DIR}/lin/test_select_given.c)

# issue 65, items 6 and 7: augmented's condition limit (cond_max), penalty at a point whose tangent
# space has a massless direction, compare's exit status; through the CLI
if(PYTHON3)
  add_test(NAME test_lin_edges COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/lin/edges_test.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endif()

# issue 69, item 1: URDF chains' A and B against a 40-digit reference (tests/lin/chain_reference.py
# wrote tests/lin/data/*.txt.gz); zlib reads them (libxml2-dev brings zlib1g-dev)
find_package(ZLIB REQUIRED)
mblin_add_test(test_tree_accuracy ${CMAKE_CURRENT_SOURCE_DIR}/lin/test_tree_accuracy.c)
target_link_libraries(test_tree_accuracy PRIVATE ZLIB::ZLIB)

# issue 70, item 1: mblin sparsity (orders and nonzeros of the four-bar's matrices by hand, the
# factors' counts, the spy plots, bad input) and linearize -o's Matrix Market coordinate lists
if(PYTHON3)
  add_test(NAME test_lin_sparsity COMMAND ${MBLIN_PYTHON3_NUMPY} ${CMAKE_CURRENT_SOURCE_DIR}/lin/sparsity_test.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endif()

# issue 70, item 6: the penalty method's alpha, xi, omega from the model file and the command line,
# and its linearization at the penalty system's own rest point, against closed forms (through the CLI)
if(PYTHON3)
  add_test(NAME test_lin_penalty_options COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/lin/penalty_options_test.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endif()
# issue 70, item 6: descriptor's variant with zero spurious eigenvalues (source 001 Sec. 3.2), through the CLI
if(PYTHON3)
  add_test(NAME test_lin_descriptor_zero COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/lin/descriptor_zero_test.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endif()
# issue 70, item 6: general penalty matrices Xi, Theta, Omega (source 001 Eq. 11-12) from the model
# file and the command line, against closed forms and a change of the constraint basis (through the CLI)
if(PYTHON3)
  add_test(NAME test_lin_penalty_matrices COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/lin/penalty_matrices_test.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endif()
