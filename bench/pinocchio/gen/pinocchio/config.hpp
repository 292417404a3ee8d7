// hand-written stand-in for the file jrl-cmakemodules generates (a build of Pinocchio 3.x without its cmake
// submodule, for bench/peer_pinocchio.cpp only: bench/pinocchio/build.sh)
#ifndef PINOCCHIO_CONFIG_HPP
#define PINOCCHIO_CONFIG_HPP
/* bench/pinocchio/build.sh passes the source tree's version (package.xml) as -D flags */
#ifndef PINOCCHIO_MAJOR_VERSION
#define PINOCCHIO_MAJOR_VERSION 3
#define PINOCCHIO_MINOR_VERSION 7
#define PINOCCHIO_PATCH_VERSION 0
#endif
#define PINOCCHIO_VERSION_STR2(x) #x
#define PINOCCHIO_VERSION_STR(a, b, c) PINOCCHIO_VERSION_STR2(a.b.c)
#define PINOCCHIO_VERSION PINOCCHIO_VERSION_STR(PINOCCHIO_MAJOR_VERSION, PINOCCHIO_MINOR_VERSION, PINOCCHIO_PATCH_VERSION)
#define PINOCCHIO_VERSION_AT_LEAST(major, minor, patch) \
  (PINOCCHIO_MAJOR_VERSION > major || (PINOCCHIO_MAJOR_VERSION >= major && \
  (PINOCCHIO_MINOR_VERSION > minor || (PINOCCHIO_MINOR_VERSION >= minor && PINOCCHIO_PATCH_VERSION >= patch))))
#define PINOCCHIO_VERSION_AT_MOST(major, minor, patch) \
  (PINOCCHIO_MAJOR_VERSION < major || (PINOCCHIO_MAJOR_VERSION <= major && \
  (PINOCCHIO_MINOR_VERSION < minor || (PINOCCHIO_MINOR_VERSION <= minor && PINOCCHIO_PATCH_VERSION <= patch))))
#define PINOCCHIO_DLLIMPORT __attribute__((visibility("default")))
#define PINOCCHIO_DLLEXPORT __attribute__((visibility("default")))
#define PINOCCHIO_DLLLOCAL __attribute__((visibility("hidden")))
#define PINOCCHIO_DLLAPI PINOCCHIO_DLLEXPORT
#define PINOCCHIO_LOCAL PINOCCHIO_DLLLOCAL
#define PINOCCHIO_EXPLICIT_INSTANTIATION_DECLARATION_DLLAPI PINOCCHIO_DLLAPI
#define PINOCCHIO_EXPLICIT_INSTANTIATION_DEFINITION_DLLAPI PINOCCHIO_DLLAPI
#endif
