#!/bin/sh
# The command line under valgrind memcheck: no invalid access, no use of uninitialised values,
# no definite or indirect leak, on a few representative runs (the plain build; ASan builds
# are checked by their own run). usage: valgrind_test.sh PATH_TO_MBLIN
mblin="$1"
fail=0
err=$(mktemp)
run() {
    expected="$1"
    shift
    valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect -q \
        "$mblin" "$@" > /dev/null 2> "$err"
    rc=$?
    if [ "$rc" -ne "$expected" ]; then
        echo "FAILED (exit $rc, expected $expected): mblin $*"
        cat "$err"
        fail=$((fail + 1))
    fi
}
run 0 linearize examples/slider_pendulum.yaml --json
run 0 linearize examples/fourbar_N5_damped.yaml --matrices --shapes
run 1 linearize examples/fourbar_singular.yaml
run 0 compare examples/fourbar_N1.yaml
run 0 linearize examples/mech/spatial_fourbar.yaml
rm -f "$err"
echo "valgrind: $((5 - fail)) passed, $fail failed"
[ "$fail" -eq 0 ]
