#!/bin/bash
# mpi_allreduce.sh - an Open MPI 4.1 program doing ITERS MPI_Allreduce calls
# (tests/foreign/mpi_allreduce.c) at NP ranks, under pmixrun (with our
# libpmix.so.2) and under Open MPI's own mpirun, side by side. Prints
# figures, never fails on them (a benchmark, not a test).
#
#   bench/mpi_allreduce.sh BUILD_DIR [NP [ITERS [RUNS]]]
#
# Defaults: 8 ranks, 100 calls, 3 runs of each. With more ranks than cores
# the figure depends on Open MPI yielding when idle, which both launchers
# ask for (OMPI_MCA_mpi_yield_when_idle=1). One line per run, then the
# medians:
#
#   pmixrun|mpirun run=K allreduce_s=...  wall_s=...
#   median pmixrun allreduce_s=... wall_s=...  mpirun ...  ratio=pmixrun/mpirun
set -u
build=${1:?usage: mpi_allreduce.sh BUILD_DIR [NP [ITERS [RUNS]]]}
np=${2:-8}
iters=${3:-100}
runs=${4:-3}
src=$(dirname "$0")/../tests/foreign/mpi_allreduce.c
pmixrun=$build/sockhost/pmixrun
libdir=$build/libpmix
[ -x "$pmixrun" ] || { echo "mpi_allreduce: build $build first" >&2; exit 2; }
if ! command -v mpicc >/dev/null || ! command -v mpirun >/dev/null; then
    echo "mpi_allreduce: needs Open MPI's mpicc and mpirun (openmpi-bin, libopenmpi-dev)" >&2
    exit 2
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/mpi_allreduce.XXXXXX")
trap 'rm -rf "$work"' EXIT
mpicc -O2 -o "$work/allreduce" "$src" || exit 2

field() { printf '%s\n' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

one() { # LAUNCHER: prints "allreduce_s wall_s"
    local start end line
    start=$(date +%s.%N)
    if [ "$1" = pmixrun ]; then
        line=$(FLUX_JOB_ID=bench LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
            "$pmixrun" -n "$np" --timeout 300 "$work/allreduce" "$iters" 2>&1 | grep '^allreduce')
    else
        line=$(mpirun --allow-run-as-root --oversubscribe -np "$np" "$work/allreduce" "$iters" 2>&1 |
            grep '^allreduce')
    fi
    end=$(date +%s.%N)
    echo "$(field "$line" total_s) $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", b - a }')"
}

echo "mpi_allreduce: $np ranks, $iters MPI_Allreduce, $(nproc) cores, $runs runs each"
for l in pmixrun mpirun; do
    : >"$work/$l"
    for k in $(seq 1 "$runs"); do
        read -r a w <<<"$(one $l)"
        echo "$l run=$k allreduce_s=$a wall_s=$w"
        echo "$a $w" >>"$work/$l"
    done
done
pa=$(awk '{ print $1 }' "$work/pmixrun" | median)
pw=$(awk '{ print $2 }' "$work/pmixrun" | median)
ma=$(awk '{ print $1 }' "$work/mpirun" | median)
mw=$(awk '{ print $2 }' "$work/mpirun" | median)
echo "median pmixrun allreduce_s=$pa wall_s=$pw  mpirun allreduce_s=$ma wall_s=$mw" \
    "ratio_allreduce=$(awk -v a="$pa" -v b="$ma" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')" \
    "ratio_wall=$(awk -v a="$pw" -v b="$mw" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')"
