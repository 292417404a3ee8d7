# tests of src/study (sensitivities, boundaries) are listed here
mblin_add_test(test_sensitivity ${CMAKE_CURRENT_SOURCE_DIR}/study/test_sensitivity.c)
find_program(PYTHON3 python3)
if(PYTHON3)
  add_test(NAME test_cli_study COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/study/cli_study_test.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endif()
