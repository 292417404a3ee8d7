# The command line, end to end (needs python3, installed by `make setup`).
find_program(PYTHON3 python3)
if(PYTHON3)
  add_test(NAME test_cli COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/cli/cli_test.py $<TARGET_FILE:mblin_cli>
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endif()
