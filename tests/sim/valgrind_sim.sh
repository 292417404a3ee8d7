#!/bin/sh
# mblin simulate / validate under valgrind memcheck (the plain build): no invalid access, no
# uninitialised value, no definite or indirect leak (SUNDIALS' and FFTW's allocations freed).
# usage: valgrind_sim.sh PATH_TO_MBLIN
mblin="$1"
fail=0
n=0
err=$(mktemp)
out=$(mktemp -d)
run() {
    expected="$1"
    shift
    n=$((n + 1))
    valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect -q \
        "$mblin" "$@" > /dev/null 2> "$err"
    rc=$?
    if [ "$rc" -ne "$expected" ]; then
        echo "FAILED (exit $rc, expected $expected): mblin $*"
        cat "$err"
        fail=$((fail + 1))
    fi
}
run 0 simulate examples/slider_pendulum.yaml --t-end 1 --dt-out 0.1 --perturb 1:0.01 --input "F=sin(t)" -o "$out/run.csv" \
    --linearize-every 0.5 --modes-out "$out/modes.csv" --svg "$out/f.svg"
run 0 simulate examples/fourbar_N1.yaml --t-end 0.2 --dt-out 0.1 --set-initial "der(phi)=0.1"
run 0 validate examples/slider_pendulum.yaml --modes 1 --periods 3 --samples 16 --rtol 1e-8 --freq-tol 1e-3
run 1 simulate examples/slider_pendulum.yaml --t-end 1 --input "F=sin(t"
run 2 simulate examples/slider_pendulum.yaml --t-end 1 --set-initial zz=1
# the coordinate partitioning (issue 70, item 3): its repartitions, a step undone, a refusal
run 0 simulate tests/sim/pendulum_xy.yaml --t-end 1 --dt-out 0.1 --integrator ssode --repartition-cond 1e15
run 2 simulate examples/nh_sleigh.yaml --t-end 1 --integrator ssode
rm -rf "$err" "$out"
echo "valgrind sim: $((n - fail)) passed, $fail failed"
[ "$fail" -eq 0 ]
