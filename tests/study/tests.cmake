mblin_add_test(test_study ${CMAKE_CURRENT_SOURCE_DIR}/study/test_study.c)
# mblin sweep / mblin freqresp end to end: files, plots, bad input
find_program(PYTHON3 python3)
if(PYTHON3)
  add_test(NAME test_study_cli COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/study/test_study_cli.py $<TARGET_FILE:mblin_cli>
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endif()
# tests of src/study: sensitivities and boundaries
mblin_add_test(test_sensitivity ${CMAKE_CURRENT_SOURCE_DIR}/study/test_sensitivity.c)
if(PYTHON3)
  add_test(NAME test_cli_study COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/study/cli_study_test.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endif()
# stability boundaries from +-50 % of each closed form (issue 29)
mblin_add_test(test_boundary ${CMAKE_CURRENT_SOURCE_DIR}/study/test_boundary.c)
# one mode numbering (linearize, sensitivity, sweep, boundary) and mbl_mode_pick
mblin_add_test(test_modes ${CMAKE_CURRENT_SOURCE_DIR}/study/test_modes.c)
# mblin freqresp, every input to every output, against SciPy and NumPy (issue 33, item 4)
if(MBLIN_PYTHON3_NUMPY)
  add_test(NAME test_freqresp_mimo COMMAND ${MBLIN_PYTHON3_NUMPY} ${CMAKE_CURRENT_SOURCE_DIR}/study/freqresp_mimo_test.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endif()
# mblin floquet: Mathieu against SciPy and Abramowitz & Stegun's transition curves, Kapitza's
# threshold, exponents = linearize's eigenvalues on time-invariant models, shooting a forced
# Duffing orbit against SciPy (issue 36, items 1 and 2; needs numpy and scipy)
if(MBLIN_PYTHON3_NUMPY)
  add_test(NAME test_floquet COMMAND ${MBLIN_PYTHON3_NUMPY} ${CMAKE_CURRENT_SOURCE_DIR}/study/floquet_test.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endif()
# mblin floquet --mbc: Coleman's ground resonance against the closed form in multi-blade
# coordinates, the band's edges, one stiffer blade against a SciPy simulation (issue 36, item 3)
if(MBLIN_PYTHON3_NUMPY)
  add_test(NAME test_floquet_mbc COMMAND ${MBLIN_PYTHON3_NUMPY} ${CMAKE_CURRENT_SOURCE_DIR}/study/mbc_test.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endif()
# Floquet mode shapes and backward errors against NumPy's SVD null vectors of Phi - mu I on every
# Floquet example (issue 36, "silent wrong answers": dgeev shapes; needs numpy)
if(MBLIN_PYTHON3_NUMPY)
  add_test(NAME test_floquet_shapes COMMAND ${MBLIN_PYTHON3_NUMPY} ${CMAKE_CURRENT_SOURCE_DIR}/study/floquet_shapes_test.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endif()
# the mechanism single-track car swept over Cf in place: the fast path's tracked branches equal the
# reload path's and the closed form (branch s17-mparam)
mblin_add_test(test_sweep_mech_car ${CMAKE_CURRENT_SOURCE_DIR}/study/test_sweep_mech_car.c)
# mblin floquet at its edges: the period checked against the model, the work estimated before
# integrating, the integrator's failures and option errors in the tool's words, MBC's verdict
# (issue 65, items 3, 4, 12, 15, 20; needs numpy and scipy)
if(MBLIN_PYTHON3_NUMPY)
  add_test(NAME test_floquet_edges COMMAND ${MBLIN_PYTHON3_NUMPY} ${CMAKE_CURRENT_SOURCE_DIR}/study/floquet_edges_test.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endif()
# studies on the model given: sweeps and boundaries of a model loaded from a string, mbl_model_copy,
# a relative data file found by the copies (issue 66, item 4)
mblin_add_test(test_study_copy ${CMAKE_CURRENT_SOURCE_DIR}/study/test_study_copy.c)
