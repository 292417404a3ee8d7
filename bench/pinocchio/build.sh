#!/bin/sh
# Builds the Pinocchio peer of bench/robot_peers.py (issue 69), bench/peer_pinocchio.cpp, from a
# Pinocchio 3.x source tree, without Pinocchio's CMake and never as part of mblin's build.
#
# Pinocchio's algorithms (aba-derivatives.hpp, frames.hpp, ...) are header-only templates; only its
# URDF reader (src/parsers/urdf/model.cpp, utils.cpp) is compiled, against Debian's liburdfdom-dev,
# with Eigen's and Boost's headers (libeigen3-dev, libboost-dev; `make bench-setup` installs them
# and g++). The headers Pinocchio's CMake would generate (its jrl-cmakemodules submodule) are the
# hand-written stand-ins in bench/pinocchio/gen/; the version comes from the tree's package.xml.
#
# usage: bench/pinocchio/build.sh SOURCE OUT [EXTRA_FLAGS...]
#   SOURCE  a Pinocchio source tree (git clone https://github.com/stack-of-tasks/pinocchio; the
#           submodule is not needed) or a bare git directory (its HEAD is exported with git archive)
#   OUT     where the objects and OUT/peer_pinocchio go (created)
#   EXTRA_FLAGS  added to the compiler's flags, e.g. -march=native: the default -O3 without -march
#           is Pinocchio's own CMake default, with which Eigen vectorizes with SSE2 only; with
#           -march=native it uses AVX (and FMA) where the CPU has them
# Both the URDF reader and the peer are compiled with the same flags (Eigen's alignment, and so
# the layout of Pinocchio's model, depends on them). About 2-3 minutes of compiling.
# Example: bench/pinocchio/build.sh ~/pinocchio /tmp/pino && bench/pinocchio/build.sh ~/pinocchio /tmp/pino-native -march=native
set -e
if [ $# -lt 2 ]; then
    echo "usage: $0 SOURCE OUT [EXTRA_FLAGS...]" >&2
    exit 2
fi
SRC=$1
OUT=$2
shift 2
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
if [ ! -f "$SRC/include/pinocchio/algorithm/aba-derivatives.hpp" ]; then
    if git --git-dir="$SRC" rev-parse --verify -q HEAD >/dev/null 2>&1; then
        rm -rf "$OUT/src"
        mkdir -p "$OUT/src"
        git --git-dir="$SRC" archive HEAD | tar -x -C "$OUT/src"
        SRC=$OUT/src
    else
        echo "$0: $SRC is neither a Pinocchio source tree (include/pinocchio/algorithm/aba-derivatives.hpp) nor a git directory" >&2
        exit 1
    fi
fi
SRC=$(cd "$SRC" && pwd)
VERSION=$(sed -n 's:.*<version>\([0-9]*\)\.\([0-9]*\)\.\([0-9]*\)</version>.*:\1 \2 \3:p' "$SRC/package.xml" | head -1)
if [ -z "$VERSION" ]; then
    echo "$0: no <version>X.Y.Z</version> in $SRC/package.xml" >&2
    exit 1
fi
set -- $VERSION "$@"
MAJOR=$1 MINOR=$2 PATCH=$3
shift 3
if [ "$MAJOR" -ne 3 ]; then
    echo "$0: Pinocchio $MAJOR.$MINOR.$PATCH: the stand-in headers in $HERE/gen are for Pinocchio 3.x" >&2
    exit 1
fi
FLAGS="-std=c++17 -O3 -DNDEBUG -I$HERE/gen -I$SRC/include -I/usr/include/eigen3
 -DPINOCCHIO_MAJOR_VERSION=$MAJOR -DPINOCCHIO_MINOR_VERSION=$MINOR -DPINOCCHIO_PATCH_VERSION=$PATCH
 -DPINOCCHIO_WITH_URDFDOM -DPINOCCHIO_URDFDOM_TYPEDEF_SHARED_PTR -DPINOCCHIO_URDFDOM_USE_STD_SHARED_PTR"
CXX=${CXX:-g++}
: >"$OUT/build.log"
echo "Pinocchio $MAJOR.$MINOR.$PATCH from $SRC: $CXX -std=c++17 -O3 -DNDEBUG $*"
# the compiler's notes on Pinocchio's templates are long and not ours: kept in OUT/build.log
for f in model utils; do
    $CXX $FLAGS "$@" -w -c "$SRC/src/parsers/urdf/$f.cpp" -o "$OUT/urdf_$f.o" >>"$OUT/build.log" 2>&1 ||
        { tail -20 "$OUT/build.log" >&2; exit 1; }
done
$CXX $FLAGS "$@" -w "$HERE/../peer_pinocchio.cpp" "$OUT/urdf_model.o" "$OUT/urdf_utils.o" -lurdfdom_model \
    -o "$OUT/peer_pinocchio" >>"$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log" >&2; exit 1; }
echo "$OUT/peer_pinocchio"
