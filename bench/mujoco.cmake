# bench_mujoco: mblin against MuJoCo on the same URDF (only when Debian's libmujoco-dev is installed;
# it is not a dependency of mblin).
find_path(MUJOCO_INCLUDE_DIR mujoco/mujoco.h)
find_library(MUJOCO_LIB mujoco)
if(MUJOCO_INCLUDE_DIR AND MUJOCO_LIB)
  mblin_add_bench(bench_mujoco ${CMAKE_CURRENT_SOURCE_DIR}/bench_mujoco.c)
  target_include_directories(bench_mujoco PRIVATE ${MUJOCO_INCLUDE_DIR})
  target_link_libraries(bench_mujoco PRIVATE ${MUJOCO_LIB} PkgConfig::LAPACKE)
endif()
