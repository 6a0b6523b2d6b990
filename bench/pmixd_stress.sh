#!/bin/bash
# pmixd_stress.sh - back-to-back collecting fences over K pmixd daemons, for
# each allgather algorithm: no hang, no wrong result. A nightly/benchmark
# item, not a ctest (it takes minutes).
#
#   bench/pmixd_stress.sh BUILD_DIR [K [ITERS [ALGOS...]]]
#
# Runs `pmixrun --nodes K -n K fence_bench --collect-iters ITERS --sizes 64`
# with PMIXLAB_FENCE_ALGO set to each algorithm (default: ring recdbl bruck;
# K default 8, ITERS default 2000). Each iteration of fence_bench is a
# put+commit, a plain fence, a collecting fence, a Get of every peer's value
# (checked byte by byte, including the iteration it belongs to) and another
# plain fence: ITERS collecting fences and 2 x ITERS barriers in all. A run
# passes when pmixrun exits 0 within its --timeout and fence_bench reports
# errors=0. Prints one line per algorithm and exits non-zero if any failed.
set -u
build=${1:?usage: pmixd_stress.sh BUILD_DIR [K [ITERS [ALGOS...]]]}
k=${2:-8}
iters=${3:-2000}
shift $(($# < 3 ? $# : 3))
algos=("$@")
[ ${#algos[@]} -gt 0 ] || algos=(ring recdbl bruck)

pmixrun=$build/sockhost/pmixrun
bench=$build/bench/fence_bench
[ -x "$pmixrun" ] && [ -x "$bench" ] || { echo "pmixd_stress: build $build first" >&2; exit 2; }

failed=0
for a in "${algos[@]}"; do
    t0=$(date +%s.%N)
    out=$(PMIXLAB_FENCE_ALGO=$a "$pmixrun" --nodes "$k" -n "$k" --timeout 600 "$bench" \
        --iters 10 --warmup 2 --collect-iters "$iters" --sizes 64 2>&1)
    rc=$?
    t1=$(date +%s.%N)
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
    line=$(printf '%s\n' "$out" | grep '^fence_bench ' | tail -1)
    collect=$(printf '%s\n' "$line" | sed -n 's/.* collect64b_us=\([0-9.]*\).*/\1/p')
    errors=$(printf '%s\n' "$line" | sed -n 's/.* errors=\([0-9]*\).*/\1/p')
    if [ $rc -eq 0 ] && [ "$errors" = "0" ]; then
        echo "pmixd_stress: $a K=$k: $iters collecting fences OK in ${secs} s" \
            "(median collect ${collect} us)"
    else
        echo "pmixd_stress: $a K=$k: FAILED (exit $rc, errors=${errors:-?}, ${secs} s)"
        printf '%s\n' "$out" | tail -20
        failed=1
    fi
done
exit $failed
