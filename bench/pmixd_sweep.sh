#!/bin/bash
# pmixd_sweep.sh - fence latency and collect throughput over K node daemons
# (pmixrun --nodes K, one process per node) for every algorithm of coll/.
# Prints figures, never fails on them (a benchmark, not a test).
#
#   bench/pmixd_sweep.sh BUILD_DIR [SIZES [KS]]
#
# SIZES: fence_bench --sizes (default 1k,64k); KS: node counts (default
# "2 4 8 16"). For each K, each barrier algorithm (PMIXLAB_BARRIER_ALGO) is
# timed with plain fences, and each allgather algorithm (PMIXLAB_FENCE_ALGO)
# with collecting fences of every size. One line per run:
#
#   K ALGO barrier_us=...            median plain fence, microseconds
#   K ALGO collect<S>_us=... MB/s=   median collecting fence of S bytes per
#                                    process, and the job's collected bytes
#                                    (K x S) per second of it
#
# Timings on a shared machine are noisy: compare runs made side by side.
set -u
build=${1:?usage: pmixd_sweep.sh BUILD_DIR [SIZES [KS]]}
sizes=${2:-1k,64k}
ks=${3:-2 4 8 16}
pmixrun=$build/sockhost/pmixrun
bench=$build/bench/fence_bench
[ -x "$pmixrun" ] && [ -x "$bench" ] || { echo "pmixd_sweep: build $build first" >&2; exit 2; }

field() { printf '%s\n' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
bytes() { case $1 in *k) echo $((${1%k} * 1024)) ;; *m) echo $((${1%m} * 1048576)) ;; *) echo "$1" ;; esac; }

for k in $ks; do
    for a in dissemination tree recdbl; do
        line=$(PMIXLAB_BARRIER_ALGO=$a "$pmixrun" --nodes "$k" -n "$k" --timeout 300 "$bench" \
            --iters 200 --warmup 20 --collect-iters 1 --sizes 1 2>&1 | grep '^fence_bench ' | tail -1)
        echo "K=$k barrier $a barrier_us=$(field "$line" barrier_us) errors=$(field "$line" errors)"
    done
    for a in tree recdbl ring bruck hier; do
        line=$(PMIXLAB_FENCE_ALGO=$a "$pmixrun" --nodes "$k" -n "$k" --timeout 300 "$bench" \
            --iters 10 --warmup 2 --collect-iters 50 --sizes "$sizes" 2>&1 |
            grep '^fence_bench ' | tail -1)
        out="K=$k allgather $a"
        for s in ${sizes//,/ }; do
            us=$(field "$line" "collect${s}_us")
            [ -n "$us" ] || us=$(field "$line" "collect${s}b_us")
            mbs=$(awk -v k="$k" -v b="$(bytes "$s")" -v us="${us:-0}" \
                'BEGIN { if (us > 0) printf "%.1f", k * b / us; else print "?" }')
            out="$out collect${s}_us=${us:-?} MB/s=$mbs"
        done
        echo "$out errors=$(field "$line" errors)"
    done
done
