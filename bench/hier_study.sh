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
#               nodes, 4 uplinks), torus (sizes as topo.c derives them,
#               groups are x-lines), dragonfly of 4 groups (n/4 nodes each:
#               4 chassis of n/64 routers of 4 nodes)
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
# point: the best flat algorithm, hier, their formulas and, on fat trees,
# the taper model; flat / hier), and, with gnuplot, OUT_DIR/hier-study.png.
# HIER_STUDY_SUMMARY_ONLY=1 redoes the summary and the plot from an
# existing points.tsv. Needs nothing but pmixsim and awk.
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
if [[ -z ${HIER_STUDY_SUMMARY_ONLY:-} ]]; then
    printf 'topo\tmodel\tnodes\tsize\talgo\tran\tsim_us\tformula_us\tratio\tbytes_in\n' >"$points"
fi

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
    elif [[ ${t[0]} == dragonfly ]]; then
        # 4 groups: SimGrid 3.32 crashes routing a dragonfly of more (the
        # default shape of pmixsim has n/32 groups of 32: 256 nodes crash)
        args+=(--topo-params "4,1;4,1;$((n / 64)),1;4")
    fi
    line=$("$sim" --quiet --nodes "$n" --model "$model" --algo "$algo" "${args[@]}" \
        fence --iters 1 --size "$size" 2>/dev/null |
        awk -F'\t' '$1 == "1" { print $3 "\t" $7 "\t" $10 "\t" $11 "\t" $6 }')
    [[ -n $line ]] || line=$'-\t-\t-\t-\t-'
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

if [[ -z ${HIER_STUDY_SUMMARY_ONLY:-} ]]; then
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
fi

summarize() {
    # Per point: the fastest flat algorithm against hier (all leaders for
    # an allgather, hier:all for a barrier) and hier:one. On a fat tree of
    # taper t with leaf switches of c nodes (G = P / c), the taper model
    # adds to the contention-free formula what crossing the uplinks at 1/t
    # of the link rate costs: flat recursive doubling sends (P - c) blocks
    # of bk = bytes_in / P + 4 bytes across, hier (G - 1):
    #   flat:  formula + (P - c) (t - 1) bk beta
    #   hier:  formula + (G - 1) (t - 1) bk beta
    # (beta = 1 / 12.5 GB/s, pmixsim's default link).
    awk -F'\t' '
        NR == 1 { next }
        {
            k = $1 "\t" $2 "\t" $3 "\t" $4
            if (!(k in seen)) { seen[k] = 1; order[++nk] = k }
            if ($5 ~ /^hier/) {
                if ($5 == "hier:one") one[k] = $7; else { hier[k] = $7; hf[k] = $8 }
            } else if ($7 != "-" && (!(k in best) || $7 + 0 < best[k] + 0)) {
                best[k] = $7; bname[k] = $5; bf[k] = $8
            }
            bin[k] = $10
        }
        END {
            beta = 1e6 / 12.5e9 # microseconds per byte
            print "topo\tmodel\tnodes\tsize\tbest_flat\tflat_us\tflat_formula_us\tflat_taper_model_us\thier_us\thier_formula_us\thier_taper_model_us\thier_one_us\tflat_over_hier"
            for (i = 1; i <= nk; i++) {
                k = order[i]
                split(k, f, "\t")
                fm = "-"; hm = "-"
                if (f[1] ~ /^fattree/ && f[4] > 0 && bf[k] != "-" && hf[k] != "-") {
                    split(f[1], tp, "-"); c = substr(tp[2], 2) / 2; t = substr(tp[3], 2)
                    P = f[3]; G = P / c; bk = bin[k] / P + 4
                    fm = sprintf("%.1f", bf[k] + (P - c) * (t - 1) * bk * beta)
                    hm = sprintf("%.1f", hf[k] + (G - 1) * (t - 1) * bk * beta)
                }
                printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.3f\n", k, bname[k], best[k], bf[k], fm,
                    hier[k], hf[k], hm, one[k], (hier[k] > 0 ? best[k] / hier[k] : 0)
            }
        }' "$points" >"$out/summary.tsv"
}

summarize
column -t -s $'\t' "$out/summary.tsv"

# One plot: flat / hier at 1,024 nodes against the size, a line per
# topology, CM02 and LV08 side by side.
if command -v gnuplot >/dev/null; then
    for model in cm02 lv08; do
        awk -F'\t' -v m=$model 'NR > 1 && $2 == m && $3 == 1024 && $4 > 0 { print $1, $4, $13 }' \
            "$out/summary.tsv" >"$out/sp-$model.dat"
    done
    {
        echo "set terminal pngcairo size 1000,420 font ',10'"
        echo "set output '$out/hier-study.png'"
        echo "set multiplot layout 1,2"
        echo "set xlabel 'bytes per process'; set ylabel 'best flat time / hier time'"
        echo "set logscale xy 2; set yrange [0.4:32]; set key left top; set grid"
        for model in cm02 lv08; do
            echo "set title '1,024 nodes, $model'"
            printf "plot 1 notitle lc rgb 'gray'"
            for t in fattree-r16-t1 fattree-r16-t2 fattree-r16-t4 fattree-r32-t4 torus dragonfly; do
                printf ", '%s' using 2:(strcol(1) eq '%s' ? \$3 : 1/0) with linespoints title '%s'" \
                    "$out/sp-$model.dat" "$t" "$t"
            done
            echo
        done
        echo "unset multiplot"
    } | gnuplot 2>/dev/null || echo "hier_study.sh: gnuplot failed" >&2
fi
