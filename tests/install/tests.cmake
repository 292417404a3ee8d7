# The installed package (issue 33, item 7): cmake --install into a temporary prefix, then a consumer
# that says only find_package(mblin) builds against mblin::mblin and mblin::mblin_static and runs
# (needs python3 with NumPy: MBLIN_PYTHON3_NUMPY, tests/model/tests.cmake).
if(MBLIN_PYTHON3_NUMPY AND NOT MBLIN_SANITIZE AND NOT MBLIN_FUZZ)
  add_test(NAME test_install_cmake COMMAND ${MBLIN_PYTHON3_NUMPY} ${CMAKE_CURRENT_SOURCE_DIR}/install/install_test.py
           ${CMAKE_COMMAND} ${CMAKE_BINARY_DIR} WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endif()
# pip install of the Python package (pyproject.toml, setup.py) into a temporary venv of Debian's
# /usr/bin/python3 with its system site packages, offline (python3-venv, python3-pip,
# python3-setuptools: make setup); the extension comes from this build tree
if(MBLIN_PYTHON_BUILT AND NOT MBLIN_SANITIZE AND NOT MBLIN_FUZZ)
  add_test(NAME test_install_pip COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/install/pip_test.py
           ${CMAKE_BINARY_DIR} WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endif()
