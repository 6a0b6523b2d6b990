#!/bin/bash
# sim_speed.sh - pmixsim's barrier against a bare SimGrid barrier, side by
# side: the wall time and peak memory of `pmixsim --nodes N fence --iters
# ITERS` (the real library: a server per node, a client per process) and
# of `sgbare N ITERS` (one actor per node, no PMIx code), run alternately
# REPS times each, medians and their ratio. A benchmark, never a test.
#
#   bench/sim_speed.sh BUILD_DIR [NODES...] [-- REPS ITERS]
#   bench/sim_speed.sh build 4096 16384          # 3 runs each, 1 barrier
#
# Prints a table (nodes, medians of both, ratio pmixsim / bare) and writes
# nothing else. Needs /usr/bin/time (Debian: time).
set -u
build=${1:?usage: sim_speed.sh BUILD_DIR [NODES...] [-- REPS ITERS]}
shift
nodes=()
while [[ $# -gt 0 && $1 != -- ]]; do
    nodes+=("$1")
    shift
done
[[ ${1:-} == -- ]] && shift
reps=${1:-3} iters=${2:-1}
[[ ${#nodes[@]} -gt 0 ]] || nodes=(1024 4096 16384)
sim=$build/simhost/pmixsim bare=$build/bench/sgbare
for prog in "$sim" "$bare" /usr/bin/time; do
    [[ -x $prog ]] || {
        echo "sim_speed.sh: $prog is missing (build it; /usr/bin/time: apt-get install time)" >&2
        exit 2
    }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# median of the numbers on stdin
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

printf '%-7s %10s %10s %10s %10s %7s\n' nodes pmixsim_s pmixsim_MB bare_s bare_MB ratio
for n in "${nodes[@]}"; do
    : >"$tmp/sim" && : >"$tmp/bare"
    for ((r = 0; r < reps; r++)); do
        /usr/bin/time -f '%e %M' -o "$tmp/t" "$sim" --quiet --nodes "$n" fence --iters "$iters" \
            >/dev/null 2>"$tmp/err" || {
            echo "sim_speed.sh: pmixsim failed at $n nodes: $(tail -3 "$tmp/err")" >&2
            exit 1
        }
        tail -1 "$tmp/t" >>"$tmp/sim"
        /usr/bin/time -f '%e %M' -o "$tmp/t" "$bare" "$n" "$iters" >/dev/null 2>"$tmp/err" || {
            echo "sim_speed.sh: sgbare failed at $n nodes: $(tail -3 "$tmp/err")" >&2
            exit 1
        }
        tail -1 "$tmp/t" >>"$tmp/bare"
    done
    ws=$(cut -d' ' -f1 "$tmp/sim" | median) ms=$(cut -d' ' -f2 "$tmp/sim" | median)
    wb=$(cut -d' ' -f1 "$tmp/bare" | median) mb=$(cut -d' ' -f2 "$tmp/bare" | median)
    awk -v n="$n" -v ws="$ws" -v ms="$ms" -v wb="$wb" -v mb="$mb" 'BEGIN {
        printf "%-7s %10.2f %10.0f %10.2f %10.0f %7.2f\n", n, ws, ms / 1024, wb, mb / 1024, ws / wb }'
done
