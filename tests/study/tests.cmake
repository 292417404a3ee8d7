# tests of src/study (sensitivities, boundaries) are listed here
mblin_add_test(test_sensitivity ${CMAKE_CURRENT_SOURCE_DIR}/study/test_sensitivity.c)
