# The command-line tool linked statically against the libraries Debian ships as static archives
# (libyaml, LAPACKE, OpenBLAS, ARPACK-ng, SuiteSparse, libgfortran, libquadmath, libstdc++,
# libgomp) and without position-independent code: a small model's whole process loaded 23 shared
# libraries and applied 12,000 relocations before main (about 11 ms of 19-33 ms). Only glibc
# (libc, libm) stays shared; libmetis (no static archive in Debian; CHOLMOD and SPQR need it) is
# loaded with dlopen by cmake/static_cli/metis_lazy.c when a factorization first orders by METIS. libxml2
# (URDF import; its archive would pull ICU, lzma and zlib in) is not linked: cmake/static_cli/xml_lazy.c loads
# it with dlopen when a URDF file is read.
# Licence: the static tool contains the LGPL-2.1+ SuiteSparse parts (KLU, AMD, COLAMD, BTF),
# BSD LAPACK/OpenBLAS/ARPACK-ng/SUNDIALS, MIT libyaml, the GPL-2.0+ FFTW 3 (src/sim's validate;
# linked shared before, which made the distributed tool a GPL combination just the same) and,
# with MBLIN_WITH_GPL, the GPL-2.0+ CHOLMOD modules and SPQR: the tool is distributed under the
# GPL as it was when linked dynamically; the LGPL parts' relinking requirement the public source
# and this build satisfy. The shared and static mblin libraries
# are unchanged (they link the shared libraries). docs/benchmarks.md has the measurements.
# Sets MBLIN_CLI_LINK (what mblin_cli links) and MBLIN_CLI_STATIC.
option(MBLIN_STATIC_CLI "Link the command-line tool statically against the available static libraries" ON)
set(MBLIN_CLI_LINK mblin_static)
set(MBLIN_CLI_STATIC OFF)
set(MBLIN_CLI_SIM_STATIC OFF)
if(MBLIN_STATIC_CLI AND NOT MBLIN_SANITIZE)
  set(_names yaml lapacke arpack)
  if(MBLIN_WITH_GPL)
    list(APPEND _names spqr cholmod)
  endif()
  list(APPEND _names klu amd colamd btf ccolamd camd suitesparseconfig)
  set(_archives "")
  set(_ok ON)
  foreach(n ${_names})
    find_library(MBLIN_A_${n} NAMES lib${n}.a)
    if(NOT MBLIN_A_${n})
      set(_ok OFF)
    endif()
    list(APPEND _archives ${MBLIN_A_${n}})
  endforeach()
  # OpenBLAS: the archive next to the shared library pkg-config found (openblas-pthread/)
  find_library(MBLIN_A_openblas NAMES libopenblas.a HINTS ${BLAS_LIBRARY_DIRS} NO_DEFAULT_PATH)
  if(NOT MBLIN_A_openblas)
    find_library(MBLIN_A_openblas NAMES libopenblas.a)
  endif()
  execute_process(COMMAND ${CMAKE_C_COMPILER} -print-file-name=libgfortran.a OUTPUT_VARIABLE _gf
    OUTPUT_STRIP_TRAILING_WHITESPACE)
  execute_process(COMMAND ${CMAKE_C_COMPILER} -print-file-name=libquadmath.a OUTPUT_VARIABLE _qm
    OUTPUT_STRIP_TRAILING_WHITESPACE)
  execute_process(COMMAND ${CMAKE_C_COMPILER} -print-file-name=libstdc++.a OUTPUT_VARIABLE _sx
    OUTPUT_STRIP_TRAILING_WHITESPACE)
  execute_process(COMMAND ${CMAKE_C_COMPILER} -print-file-name=libgomp.a OUTPUT_VARIABLE _gomp
    OUTPUT_STRIP_TRAILING_WHITESPACE)
  foreach(f ${_gf} ${_qm} ${_sx} ${_gomp})
    if(NOT IS_ABSOLUTE "${f}" OR NOT EXISTS "${f}")
      set(_ok OFF)
    endif()
  endforeach()
  if(MBLIN_WITH_GPL)
    find_library(MBLIN_SO_metis NAMES metis libmetis.so.5) # Debian: only the runtime library
    if(NOT MBLIN_SO_metis)
      set(_ok OFF)
    endif()
  endif()
  find_library(MBLIN_SO_xml2 NAMES xml2 libxml2.so.2)
  if(NOT MBLIN_SO_xml2)
    set(_ok OFF)
  endif()
  if(_ok AND MBLIN_A_openblas)
    set(MBLIN_CLI_STATIC ON)
    # libxml2 is not linked: cmake/static_cli/xml_lazy.c loads it with dlopen at the first URDF read, so
    # that every other run skips loading it and ICU, libstdc++, zlib and lzma with it
    target_sources(mblin_cli PRIVATE ${CMAKE_CURRENT_LIST_DIR}/static_cli/xml_lazy.c)
    # libquadmath's printf hooks refused (cmake/static_cli/printf_hooks.c): registered, they sent every printf
    # of the tool down glibc's slow path
    target_sources(mblin_cli PRIVATE ${CMAKE_CURRENT_LIST_DIR}/static_cli/printf_hooks.c)
    # NLopt (only shared in Debian; only `mblin optimize` uses it) is loaded with dlopen at its first use
    target_sources(mblin_cli PRIVATE ${CMAKE_CURRENT_LIST_DIR}/static_cli/nlopt_lazy.c)
    target_include_directories(mblin_cli PRIVATE ${NLOPT_INCLUDE_DIRS})
    target_link_options(mblin_cli PRIVATE -Wl,--wrap=register_printf_type -Wl,--wrap=register_printf_modifier
      -Wl,--wrap=register_printf_specifier)
    target_include_directories(mblin_cli PRIVATE ${LIBXML2_INCLUDE_DIRS})
    # SUNDIALS (IDA, its KLU module, sparse matrix, serial vector) and FFTW 3 as archives too, ahead
    # of KLU's (the KLU module calls its int64 entry points, which libklu.a carries): the shared
    # ones loaded seven more libraries (and a second KLU) into every run, though only simulate and
    # validate use them. Any archive missing: they stay shared (MBLIN_SIM_LIBS).
    set(_sim_archives "")
    set(MBLIN_CLI_SIM_STATIC ON)
    foreach(n sundials_ida sundials_cvode sundials_sunlinsolklu sundials_sunmatrixsparse sundials_nvecserial sundials_generic fftw3)
      find_library(MBLIN_A_${n} NAMES lib${n}.a)
      if(MBLIN_A_${n})
        list(APPEND _sim_archives ${MBLIN_A_${n}})
      elseif(NOT n STREQUAL "sundials_generic") # SUNDIALS 6 has it, older ones do not
        set(MBLIN_CLI_SIM_STATIC OFF)
      endif()
    endforeach()
    if(NOT MBLIN_CLI_SIM_STATIC)
      set(_sim_archives "")
    endif()
    # METIS (only a shared library in Debian) is not linked either: cmake/static_cli/metis_lazy.c loads it at
    # CHOLMOD's or SPQR's first nested-dissection ordering; and libgcc is linked statically
    # (-static-libgcc: its unwinder for libgfortran's backtrace). A run then loads only glibc's
    # libc and libm: two shared objects fewer to map, relocate and search at every start.
    if(MBLIN_WITH_GPL)
      target_sources(mblin_cli PRIVATE ${CMAKE_CURRENT_LIST_DIR}/static_cli/metis_lazy.c)
    endif()
    target_link_options(mblin_cli PRIVATE -static-libgcc)
    # the tool ends by _exit after flushing its streams (cli/par_load.c): the archives' exit
    # handlers (OpenBLAS's unmapping of its buffer) cost about 1 ms per run
    target_compile_definitions(mblin_cli PRIVATE MBLIN_CLI_FAST_EXIT=1)
    set(MBLIN_CLI_LINK $<TARGET_FILE:mblin_static> ${_sim_archives} ${_archives} ${MBLIN_A_openblas} ${_gf} ${_qm} ${_sx} ${_gomp}
      ${MATH_LIB} Threads::Threads ${CMAKE_DL_LIBS})
    # The code a run touches, laid out together: on the virtual machines mblin is measured on, a
    # first touch of a code page costs a page fault of several us (the kernel maps 64 KiB around
    # it), and the bicycle's 600 functions lay scattered over the 30 MB of code (each LAPACK
    # routine in its own place in OpenBLAS's archive). lld places the functions named in
    # static_cli/hot_symbols.txt first, in that order (each function in its own section:
    # -ffunction-sections); the machine code is the same, only its addresses move. The list is
    # made by bench/hot_symbols.py from callgrind runs of the everyday commands; a name the build
    # lacks is skipped. Without lld (ld.lld, Debian's lld) the tool links as before.
    find_program(MBLIN_LLD NAMES ld.lld)
    if(MBLIN_LLD)
      target_compile_options(mblin_obj PRIVATE -ffunction-sections)
      target_compile_options(mblin_cli PRIVATE -ffunction-sections)
      target_link_options(mblin_cli PRIVATE -fuse-ld=lld
        -Wl,--symbol-ordering-file=${CMAKE_CURRENT_LIST_DIR}/static_cli/hot_symbols.txt -Wl,--no-warn-symbol-ordering)
      set_property(TARGET mblin_cli APPEND PROPERTY LINK_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/static_cli/hot_symbols.txt)
      message(STATUS "mblin: command-line tool's hot code ordered by lld (cmake/static_cli/hot_symbols.txt)")
    endif()
    message(STATUS "mblin: command-line tool linked statically (MBLIN_STATIC_CLI)")
  else()
    message(STATUS "mblin: static archives missing, command-line tool linked dynamically")
  endif()
endif()
