#!/bin/bash
# hier_study.sh - where the hierarchical collective beats the flat ones:
# the study of docs/collectives.md ("Where hierarchy wins"). pmixsim runs
# one fence (`fence --iters 1 --size S`, one process per node) per point
# of the grid below with each algorithm, and the script keeps what the
# report says: simulated time, the catalog's formula and their ratio. A
# benchmark, never a test: simulated times are deterministic, wall times
# are not, and the whole grid takes about an hour on two shared cores.
#
#   bench/hier_study.sh BUILD_DIR [OUT_DIR]        (default OUT_DIR: hier-study)
#   HIER_STUDY_QUICK=1 bench/hier_study.sh build   without 4,096 and 16,384 nodes
#
# Grid:
#   topologies  fat tree radix 16 with taper 1, 2 and 4 (leaf switches of
#               8 nodes, 8, 4 or 2 uplinks), radix 32 with taper 4 (16
#               nodes, 4 uplinks), torus (sizes as topo.c derives them),
#               dragonfly (groups of 32 nodes)
#   models      cm02 (no cross-traffic: contention-free times equal the
#               formulas) on every topology; lv08 (SimGrid's TCP model,
#               cross-traffic on) at 1,024 nodes on fat trees of taper 1
#               and 4, the torus and the dragonfly
#   nodes       256 and 1,024: every size; 4,096: 0 B and 4 KiB (fat tree
#               of taper 4, torus, dragonfly); 16,384: 0 B and 4 KiB on
#               the tapered fat tree of radix 16
#   sizes       0 B (a barrier), 256 B, 4 KiB, 64 KiB per process
#   algorithms  allgather: recdbl, bruck, hier:one (a leader per group),
#               hier (every member a leader); barrier: dissemination,
#               recdbl, hier:one, hier:all
#
# Writes OUT_DIR/points.tsv (one line per run), OUT_DIR/summary.tsv (per
# point: the best flat algorithm, hier, and flat / hier), and, with
# gnuplot, OUT_DIR/speedup-*.png. Needs nothing but pmixsim and awk.
set -u
build=${1:?usage: hier_study.sh BUILD_DIR [OUT_DIR]}
out=${2:-hier-study}
sim=$build/simhost/pmixsim
[[ -x $sim ]] || {
    echo "hier_study.sh: $sim is missing (build it)" >&2
    exit 2
}
mkdir -p "$out"
points=$out/points.tsv
printf 'topo\tmodel\tnodes\tsize\talgo\tran\tsim_us\tformula_us\tratio\n' >"$points"

topos=("fattree 16 1" "fattree 16 2" "fattree 16 4" "fattree 32 4" "torus" "dragonfly")

# One run: TOPO_SPEC MODEL NODES SIZE ALGO; appends a line to points.tsv.
run() {
    local spec=$1 model=$2 n=$3 size=$4 algo=$5 args name line
    read -r -a t <<<"$spec"
    args=(--topology "${t[0]}")
    name=${t[0]}
    if [[ ${t[0]} == fattree ]]; then
        args+=(--radix "${t[1]}" --taper "${t[2]}")
        name="fattree-r${t[1]}-t${t[2]}"
    fi
    line=$("$sim" --quiet --nodes "$n" --model "$model" --algo "$algo" "${args[@]}" \
        fence --iters 1 --size "$size" 2>/dev/null | awk -F'\t' '$1 == "1" { print $3 "\t" $7 "\t" $10 "\t" $11 }')
    [[ -n $line ]] || line=$'-\t-\t-\t-'
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$model" "$n" "$size" "$algo" "$line" >>"$points"
}

algos_for() { # SIZE
    if [[ $1 == 0 ]]; then
        echo dissemination recdbl hier:one hier:all
    else
        echo recdbl bruck hier:one hier
    fi
}

point() { # TOPO_SPEC MODEL NODES SIZE
    for a in $(algos_for "$4"); do
        run "$1" "$2" "$3" "$4" "$a"
    done
}

# cm02: every topology at 256 and 1,024 nodes, every size; 4,096 nodes at
# 0 B and 4 KiB where groups matter most. lv08 (slower to simulate): 1,024
# nodes on four topologies. 16,384: the tapered fat tree, cm02.
for spec in "${topos[@]}"; do
    for n in 256 1024; do
        for size in 0 256 4096 65536; do
            point "$spec" cm02 "$n" "$size"
        done
    done
done
for spec in "fattree 16 1" "fattree 16 4" "torus" "dragonfly"; do
    for size in 0 256 4096 65536; do
        point "$spec" lv08 1024 "$size"
    done
done
if [[ -z ${HIER_STUDY_QUICK:-} ]]; then
    for spec in "fattree 16 4" "torus" "dragonfly"; do
        for size in 0 4096; do
            point "$spec" cm02 4096 "$size"
        done
    done
    for size in 0 4096; do
        point "fattree 16 4" cm02 16384 "$size"
    done
fi

# Per point: the fastest flat algorithm against hier (all leaders for an
# allgather, hier:all for a barrier) and hier:one.
awk -F'\t' '
    NR == 1 { next }
    {
        k = $1 "\t" $2 "\t" $3 "\t" $4
        if (!(k in seen)) { seen[k] = 1; order[++nk] = k }
        if ($5 ~ /^hier/) {
            if ($5 == "hier:one") one[k] = $7; else { hier[k] = $7; hf[k] = $8 }
        } else if (!(k in best) || $7 + 0 < best[k] + 0) { best[k] = $7; bname[k] = $5; bf[k] = $8 }
    }
    END {
        print "topo\tmodel\tnodes\tsize\tbest_flat\tflat_us\tflat_formula_us\thier_us\thier_formula_us\thier_one_us\tflat_over_hier"
        for (i = 1; i <= nk; i++) {
            k = order[i]
            printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.3f\n", k, bname[k], best[k], bf[k], hier[k], hf[k], one[k],
                hier[k] > 0 ? best[k] / hier[k] : 0
        }
    }' "$points" >"$out/summary.tsv"
column -t -s $'\t' "$out/summary.tsv"

if command -v gnuplot >/dev/null; then
    for model in cm02 lv08; do
        for n in 1024; do
            awk -F'\t' -v m=$model -v n=$n 'NR > 1 && $2 == m && $3 == n && $4 > 0 { print $1, $4, $11 }' \
                "$out/summary.tsv" >"$out/sp-$model-$n.dat"
            {
                echo "set terminal pngcairo size 800,480"
                echo "set output '$out/speedup-$model-$n.png'"
                echo "set title 'hier (every member a leader) vs the best flat allgather, $n nodes, $model'"
                echo "set xlabel 'bytes per process'; set ylabel 'best flat time / hier time'"
                echo "set logscale x 2; set key left top; set grid"
                printf "plot 1 notitle lc rgb 'gray'"
                for t in fattree-r16-t1 fattree-r16-t2 fattree-r16-t4 fattree-r32-t4 torus dragonfly; do
                    printf ", '%s' using 2:(strcol(1) eq '%s' ? \$3 : 1/0) with linespoints title '%s'" \
                        "$out/sp-$model-$n.dat" "$t" "$t"
                done
                echo
            } | gnuplot 2>/dev/null || echo "hier_study.sh: gnuplot failed for $model" >&2
        done
    done
fi
