# Every reference in docs/*.md and README.md resolves: Markdown links and their #anchors, repository
# paths, and written section references (`docs/x.md, "Section"`): links.py.
find_program(PYTHON3 python3)
if(PYTHON3)
  add_test(NAME test_docs_links COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/docs/links.py
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(test_docs_links PROPERTIES ENVIRONMENT "PYTHONDONTWRITEBYTECODE=1")
endif()
# docs/tutorial.md: every command on the page prints what the page shows, every picture is its
# command's (tutorial_test.py).
if(PYTHON3)
  add_test(NAME test_docs_tutorial COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/docs/tutorial_test.py
           $<TARGET_FILE:mblin_cli> WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(test_docs_tutorial PROPERTIES ENVIRONMENT "PYTHONDONTWRITEBYTECODE=1")
endif()
