#!/bin/bash
# sweep.sh - the simulated fence sweep of `./run demo` (docs/simulation.md).
#
#     simhost/sweep.sh PMIXSIM OUTDIR [MAXNODES]
#
# Runs pmixsim's `fence` workload on a crossbar under CM02 from 64 nodes up
# to MAXNODES (default 4096), one process per node: a barrier with each
# barrier algorithm, and a fence collecting 256 bytes per process with each
# allgather algorithm up to 1,024 nodes (ring only up to 256 nodes: it
# sends P^2 messages).
# Writes OUTDIR/sweep.tsv (one line per run: the fence's simulated time,
# the formula's, their ratio, messages, the run's wall time and peak
# memory), prints it as a table, and plots OUTDIR/sweep.png with gnuplot
# when it is installed.
set -eu
sim=$1 out=$2 max=${3:-4096}
mkdir -p "$out"
tsv=$out/sweep.tsv
printf 'kind\talgo\tnodes\tsim_us\tformula_us\tratio\tmsgs\twall_s\trss_mb\n' >"$tsv"

run() { # KIND ALGO NODES ARGS...
    local kind=$1 algo=$2 nodes=$3
    shift 3
    "$sim" --quiet --nodes "$nodes" --algo "$algo" fence --iters 1 "$@" | awk -F'\t' \
        -v kind="$kind" -v algo="$algo" -v nodes="$nodes" '
        /^[0-9]/ { sim = $7; pred = $10; ratio = $11; msgs = $8 }
        /^# wall:/ {
            for (i = 1; i <= split($0, f, " "); i++) {
                if (f[i] ~ /^wall_s=/) wall = substr(f[i], 8)
                if (f[i] ~ /^peak_rss_mb=/) rss = substr(f[i], 13)
            }
        }
        END { printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
                     kind, algo, nodes, sim, pred, ratio, msgs, wall, rss }' >>"$tsv"
}

for nodes in 64 256 1024 4096; do
    [[ $nodes -le $max ]] || break
    for algo in dissemination tree recdbl; do
        run barrier "$algo" "$nodes"
    done
    # Collected data exists once per run (docs/simulation.md), so
    # collecting fences go to 4,096 nodes too (about 4 s and 530 MB each
    # there); ring, with its P^2 messages, stops at 1,024 (about 5 s).
    for algo in recdbl bruck tree ring; do
        [[ $algo != ring || $nodes -le 1024 ]] || continue
        run allgather "$algo" "$nodes" --size 256
    done
done
column -t -s "$(printf '\t')" "$tsv"

if command -v gnuplot >/dev/null; then
    plot=""
    for series in $(awk -F'\t' 'NR > 1 { print $1 ":" $2 }' "$tsv" | sort -u); do
        kind=${series%%:*} algo=${series#*:}
        awk -F'\t' -v k="$kind" -v a="$algo" '$1 == k && $2 == a { print $3, $4 }' "$tsv" \
            >"$out/$kind-$algo.dat"
        plot+="${plot:+, }'$out/$kind-$algo.dat' using 1:2 with linespoints title '$kind $algo'"
    done
    gnuplot <<GP
set terminal png size 900,600
set output '$out/sweep.png'
set title 'pmixsim: simulated fence time (crossbar, CM02, 1 process per node, 256 B per process)'
set xlabel 'nodes'
set ylabel 'simulated time (us)'
set logscale xy
set key top left
set grid
plot $plot
GP
    rm -f "$out"/*.dat
    echo "plot: $out/sweep.png"
fi
echo "table: $tsv"
