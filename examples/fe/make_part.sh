#!/bin/sh
# The flexible link's FE matrices, end to end (docs/fe-parts.md):
#   1. gmsh meshes link.geo (quadratic tetrahedra) and writes it in CalculiX's format with the
#      physical groups as node sets (END_A, END_B, BAR);
#   2. filter_mesh.awk drops the end faces' surface elements gmsh also writes (CalculiX would take
#      them for plane-stress elements);
#   3. ccx runs JOB.inp (*FREQUENCY, SOLVER=MATRIXSTORAGE) and writes JOB.sti, JOB.mas, JOB.dof.
# Leaves JOB.inp, JOB_mesh.inp, alu.inp, JOB.sti, JOB.mas, JOB.dof (and ccx's logs) in DIR, with
# the reference decks JOB_*.inp beside them (tests/fe/ccx_reference.py runs those).
#
# usage: make_part.sh [-o DIR] [-j JOB] [-g GEO] [gmsh options...]
#   -o DIR   where the files go (default: this script's folder)
#   -j JOB   the deck JOB.inp of this folder to run (default: link); its mesh is JOB_mesh.inp
#   -g GEO   the geometry (default: link.geo of this folder)
#   gmsh options, e.g. -setnumber lc 0.01 (element size), -setnumber L 1 (length): link.geo's
#   parameters.
# Exit status: nonzero, with a one-line message, when gmsh or ccx fails or a file is missing.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
dir=$here
job=link
geo=$here/link.geo
while [ $# -gt 0 ]; do
    case $1 in
        -o) dir=$2; shift 2 ;;
        -j) job=$2; shift 2 ;;
        -g) geo=$2; shift 2 ;;
        -h|--help) sed -n '2,17p' "$0" | cut -c3-; exit 0 ;;
        *) break ;;
    esac
done
die() { echo "make_part.sh: $*" >&2; exit 1; }
command -v gmsh >/dev/null || die "gmsh not found (make setup installs it)"
command -v ccx >/dev/null || die "ccx not found (make setup installs calculix-ccx)"
[ -f "$here/$job.inp" ] || die "$here/$job.inp: no such deck"
[ -f "$geo" ] || die "$geo: no such geometry"
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
if [ "$dir" != "$here" ]; then
    cp "$here/alu.inp" "$dir/"
    for f in "$here/$job".inp "$here/$job"_*.inp; do
        case $f in *_mesh.inp) continue ;; esac
        [ -f "$f" ] && cp "$f" "$dir/"
    done
fi

# 1, 2: the mesh
gmsh -3 "$geo" "$@" -setnumber Mesh.SaveGroupsOfNodes 1 -format inp -o "$dir/${job}_gmsh.inp" \
    >"$dir/${job}_gmsh.log" 2>&1 || die "gmsh failed on $geo (see $dir/${job}_gmsh.log)"
awk -f "$here/filter_mesh.awk" "$dir/${job}_gmsh.inp" >"$dir/${job}_mesh.inp"
rm -f "$dir/${job}_gmsh.inp"
grep -q '^\*NSET,NSET=END_A' "$dir/${job}_mesh.inp" || die "$dir/${job}_mesh.inp: no node set END_A"

# 3: the matrices (one thread: the matrices do not depend on it; ccx's logs in JOB.log)
rm -f "$dir/$job.sti" "$dir/$job.mas" "$dir/$job.dof"
(cd "$dir" && OMP_NUM_THREADS=1 ccx -i "$job" >"$job.log" 2>&1) ||
    die "ccx failed on $dir/$job.inp (see $dir/$job.log)"
for e in sti mas dof; do
    [ -s "$dir/$job.$e" ] || die "ccx wrote no $dir/$job.$e (see $dir/$job.log)"
done
echo "make_part.sh: $dir/$job.sti, .mas, .dof: $(wc -l <"$dir/$job.dof") rows, $(wc -l <"$dir/$job.sti") entries of one triangle"
