# The MuJoCo peer (bench/peers.py): built when libmujoco-dev is installed (`make bench-setup`).
find_path(MUJOCO_INCLUDE_DIR mujoco/mujoco.h)
find_library(MUJOCO_LIB mujoco)
if(MUJOCO_INCLUDE_DIR AND MUJOCO_LIB)
  add_executable(peer_mujoco ${CMAKE_CURRENT_SOURCE_DIR}/peer_mujoco.c)
  target_include_directories(peer_mujoco PRIVATE ${MUJOCO_INCLUDE_DIR})
  target_link_libraries(peer_mujoco PRIVATE ${MUJOCO_LIB} PkgConfig::LAPACKE PkgConfig::BLAS)
endif()
