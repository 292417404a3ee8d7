# The command line, end to end (needs python3, installed by `make setup`).
find_program(PYTHON3 python3)
if(PYTHON3)
  add_test(NAME test_cli COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/cli/cli_test.py $<TARGET_FILE:mblin_cli>
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  # codegen with hostile paths and names (issue 30): compiles (cc), imports (python3 with NumPy) and runs
  # (octave, when installed) the generated code
  # issue 30, items 1 and 7: singular states refused by every method, sweep and sensitivity; residual
  # accelerations of a given point noted
  # issue 35, item 3: linearize.at: trim against closed forms (single-track car, conical pendulum)
  add_test(NAME test_trim COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/cli/trim_test.py $<TARGET_FILE:mblin_cli>
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  # issue 35, item 3: at: trim of a mechanism (trim.turn) against a steady-turn balance and closed forms
  if(MBLIN_PYTHON3_NUMPY)
    add_test(NAME test_trim_mech COMMAND ${MBLIN_PYTHON3_NUMPY} ${CMAKE_CURRENT_SOURCE_DIR}/cli/trim_mech_test.py
             $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  endif()
  # issue 35: a new user's tour of data sets, rolling wheels and trim (regressions of what broke)
  add_test(NAME test_newuser COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/cli/newuser_test.py $<TARGET_FILE:mblin_cli>
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  add_test(NAME test_singular_states COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/cli/singular_states_test.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  add_test(NAME test_codegen_inject COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/cli/codegen_inject_test.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  # symbolic and codegen with user ODE states against linearize (issue 30, item 4)
  add_test(NAME test_symbolic_ode COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/cli/symbolic_ode_test.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  # symbolic's parameters (a URDF's joint angles are not symbols) and its check against linearize (item 5)
  add_test(NAME test_symbolic_params COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/cli/symbolic_params_test.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  # codegen and symbolic refuse too large a model before the work, with the estimate (item 17)
  add_test(NAME test_symbolic_limits COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/cli/symbolic_limits_test.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  # issue 33, item 6: usage errors exit 2 in every command (an option naming what the model lacks),
  # --opt=VALUE in every command
  add_test(NAME test_cli_conventions COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/cli/conventions_test.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  # issue 33, item 6: redundant constraints advise the methods that take them; a kinetic energy without
  # der() is named (M = d2T/dv2 zero)
  # issue 33, item 3: --progress lines, the bar on a terminal, SIGINT during a load and a sweep (exit
  # 130, no partial outputs)
  add_test(NAME test_cli_progress COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/cli/progress_test.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  add_test(NAME test_cli_messages COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/cli/messages_test.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  # issue 33, item 1: held velocities at a given point (--set-velocity)
  add_test(NAME test_cli_held_velocities COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/cli/held_velocities_test.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  # issue 31, item 2: linearize loads with forward-mode Jacobian values (--symbolic-jacobian: built symbolically)
  add_test(NAME test_cli_forward_jacobian COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/cli/forward_jacobian_test.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  # issue 33, item 2: outputs of multipliers in projection, descriptor, penalty; --outputs a,b
  add_test(NAME test_cli_outputs COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/cli/outputs_test.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  # issue 33, item 6: every command's JSON output against its schema (docs/schema/); needs
  # python3-jsonschema (make setup): a python3 first in PATH without it (pyenv) falls back to Debian's
  # /usr/bin/python3; with neither the test fails, saying so
  set(MBLIN_PYTHON3_JSONSCHEMA ${PYTHON3})
  execute_process(COMMAND ${PYTHON3} -c "import jsonschema" RESULT_VARIABLE _mblin_js_rc OUTPUT_QUIET ERROR_QUIET)
  if(NOT _mblin_js_rc EQUAL 0 AND EXISTS /usr/bin/python3)
    set(MBLIN_PYTHON3_JSONSCHEMA /usr/bin/python3)
  endif()
  add_test(NAME test_json_schema COMMAND ${MBLIN_PYTHON3_JSONSCHEMA} ${CMAKE_CURRENT_SOURCE_DIR}/cli/json_schema_test.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  # a relative-coordinate mechanism's dense velocity transformation (B, Bdot, dB/dq) under --mem-budget:
  # left out of --json and -o with the reason (issue 69: the 2000-loop four-bar in relative coordinates)
  add_test(NAME test_vtrans_budget COMMAND ${MBLIN_PYTHON3_JSONSCHEMA} ${CMAKE_CURRENT_SOURCE_DIR}/cli/vtrans_budget_test.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  # the inputs of the fuzz targets (tests/fuzz) that showed a bug of the command line (issue 30)
  add_test(NAME test_cli_fuzz_regress COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/cli/fuzz_regress_test.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endif()
# valgrind memcheck on the plain build (valgrind and the sanitizers do not mix)
find_program(VALGRIND valgrind)
if(VALGRIND AND NOT MBLIN_SANITIZE)
  add_test(NAME test_valgrind COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/valgrind_test.sh $<TARGET_FILE:mblin_cli>
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(test_valgrind PROPERTIES ENVIRONMENT "OPENBLAS_NUM_THREADS=1")
endif()
# BLAS on one thread before OpenBLAS starts its workers (needs strace; the static tool, see
# cmake/static_cli.cmake: a dynamically linked tool cannot act before its libraries' constructors)
find_program(STRACE strace)
if(PYTHON3 AND STRACE AND MBLIN_CLI_STATIC)
  add_test(NAME test_cli_startup COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/cli/startup_test.py $<TARGET_FILE:mblin_cli>
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endif()
# METIS loaded at its first call (cmake/static_cli/metis_lazy.c, the static tool's METIS): this program links
# only that file, as the tool does
if(MBLIN_WITH_GPL)
  add_executable(test_metis_lazy ${CMAKE_CURRENT_SOURCE_DIR}/cli/test_metis_lazy.c ${PROJECT_SOURCE_DIR}/cmake/static_cli/metis_lazy.c)
  target_include_directories(test_metis_lazy PRIVATE ${PROJECT_SOURCE_DIR}/tests)
  target_link_libraries(test_metis_lazy PRIVATE Threads::Threads ${CMAKE_DL_LIBS})
  add_test(NAME test_metis_lazy COMMAND test_metis_lazy)
endif()
# issue 65, items 14 and 20: no output written through a link planted at its name; a bad option value
# echoed by its first 40 characters
if(PYTHON3)
  add_test(NAME test_cli_output_links COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/cli/output_links_test.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endif()
# issue 66, item 5: one help line per command (cli/main.c's table) and one text per option
if(PYTHON3)
  add_test(NAME test_cli_help COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/cli/help_test.py $<TARGET_FILE:mblin_cli>
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endif()
# issue 68, item E: --allow-user-code. A library of user routines whose constructor leaves a marker
# file (tests/cli/user_marker.c; the Python tests load it too): a refused model must not load it
if(PYTHON3 AND NOT MBLIN_FUZZ)
  add_library(mblin_user_marker MODULE ${CMAKE_CURRENT_SOURCE_DIR}/cli/user_marker.c)
  target_include_directories(mblin_user_marker PRIVATE ${PROJECT_SOURCE_DIR}/include)
  set_target_properties(mblin_user_marker PROPERTIES PREFIX "" LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/cli)
  add_test(NAME test_cli_user_code COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/cli/user_code_test.py
           $<TARGET_FILE:mblin_cli> $<TARGET_FILE:mblin_user_marker> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endif()
# linearize --time T: a driven model's point at time T against closed forms (issue 70, item 8)
if(PYTHON3)
  add_test(NAME test_linearize_time COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/cli/linearize_time_test.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(test_linearize_time PROPERTIES ENVIRONMENT "OPENBLAS_NUM_THREADS=1;PYTHONDONTWRITEBYTECODE=1")
endif()
# symbolic: exact rationals instead of non-terminating decimals, M-hat and K-hat of source 002's
# double pendulum equal to its closed forms in exact arithmetic (issue 70, item 8)
if(PYTHON3)
  add_test(NAME test_symbolic_rational COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/cli/symbolic_rational_test.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(test_symbolic_rational PROPERTIES ENVIRONMENT "OPENBLAS_NUM_THREADS=1;PYTHONDONTWRITEBYTECODE=1")
endif()
