# src/sim: SUNDIALS IDA with its KLU linear solver (Debian libsundials-dev 6.x) and FFTW 3;
# src/study/floquet.c: SUNDIALS CVODE (Adams, fixed-point iteration) for the variational equations
# (libfftw3-dev). Sets MBLIN_SIM_LIBS (shared libraries: SUNDIALS' KLU module is built on
# SuiteSparse's int64 KLU entry points, which the static command-line tool does not carry).
find_path(SUNDIALS_INCLUDE_DIR ida/ida.h REQUIRED)
set(MBLIN_SIM_LIBS "")
foreach(lib sundials_ida sundials_cvode sundials_sunlinsolklu sundials_sunmatrixsparse sundials_nvecserial)
  find_library(MBLIN_SO_${lib} NAMES ${lib} REQUIRED)
  list(APPEND MBLIN_SIM_LIBS ${MBLIN_SO_${lib}})
endforeach()
find_library(MBLIN_SO_sundials_generic NAMES sundials_generic)
if(MBLIN_SO_sundials_generic)
  list(APPEND MBLIN_SIM_LIBS ${MBLIN_SO_sundials_generic})
endif()
pkg_check_modules(FFTW3 REQUIRED fftw3)
find_library(MBLIN_SO_fftw3 NAMES fftw3 HINTS ${FFTW3_LIBRARY_DIRS} REQUIRED)
list(APPEND MBLIN_SIM_LIBS ${MBLIN_SO_fftw3})
