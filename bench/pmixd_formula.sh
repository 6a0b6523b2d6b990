#!/bin/bash
# pmixd_formula.sh - measured cross-daemon fence latency and collect times
# (bench/pmixd_sweep.sh) beside the Hockney alpha + k*beta formulas of
# docs/collectives.md, with alpha and beta measured on the same loopback
# (bench/tcppingpong). Prints figures, never fails on them.
#
#   bench/pmixd_formula.sh BUILD_DIR [REPS [KS [SIZES [OUT_DIR]]]]
#
# REPS: how many times each measurement is repeated, the median is kept
# (default 3); KS: node counts (default "2 4 8 16"); SIZES: bytes per
# process of the collecting fences (default 1k,64k); OUT_DIR: where the
# files go (default the current directory): pmixd_formula.tsv,
# pmixd_formula.txt (the readable table) and, when gnuplot is there,
# pmixd_formula.png.
#
# P = K members (one process per node), L = ceil(lg P), m bytes per process,
# n = P m, alpha and beta from tcppingpong (medians over REPS runs):
#
#   barrier dissemination   L alpha
#   barrier tree            2 L alpha                     (radix 2)
#   barrier recdbl          lg P alpha                    (+2 alpha if P is not a power of 2)
#   allgather ring          (P-1) alpha + (P-1)/P n beta
#   allgather recdbl        lg P alpha + (P-1)/P n beta   (+2 alpha if P is not a power of 2)
#   allgather bruck         L alpha + (P-1)/P n beta
#   allgather tree, hier    2 L alpha + (P-1)/P n beta + L n beta
#                           (pmixd's hier has one flat group: a radix-2 tree)
#
# What a measured figure includes: fence_bench times PMIx_Fence in the
# client, so each figure is the cross-daemon collective PLUS the local part
# on each node (client -> daemon's PMIx server over a Unix socket, the
# server's upcall, the hand-off to the daemon's main loop, and the answer
# back to the client). The local part is measured alone as the same fence
# with two processes on one node and no daemon (pmixrun -n 2: the fence
# never leaves the node, and it is a real client -> server -> client round
# trip; with -n 1 the library completes the fence without the server, in
# well under a microsecond, which would measure nothing). Two ratios are
# printed: raw = measured / formula, and net = (measured - local) / formula.
#
# Two more columns help to read a failed check: msgs, the messages of all
# members together (docs/collectives.md), and net_x_cores_per_msg_us =
# (measured - local) x CPUs / msgs, the time per message if the daemons
# were limited by CPU time rather than by the latency of a message (with
# 2 x K processes on this machine's CPUs they can be).
set -u
build=${1:?usage: pmixd_formula.sh BUILD_DIR [REPS [KS [SIZES [OUT_DIR]]]]}
reps=${2:-3}
ks=${3:-2 4 8 16}
sizes=${4:-1k,64k}
out=${5:-.}
here=$(cd "$(dirname "$0")" && pwd)
pmixrun=$build/sockhost/pmixrun
bench=$build/bench/fence_bench
tcp=$build/bench/tcppingpong
for f in "$pmixrun" "$bench" "$tcp"; do
    [ -x "$f" ] || { echo "pmixd_formula: $f is missing: build $build first" >&2; exit 2; }
done
mkdir -p "$out" || exit 2
raw=$(mktemp) || exit 2
trap 'rm -f "$raw"' EXIT

field() { printf '%s\n' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
bytes() { case $1 in *k) echo $((${1%k} * 1024)) ;; *m) echo $((${1%m} * 1048576)) ;; *) echo "$1" ;; esac; }

# Every sample goes to $raw as "KEY VALUE"; medians are taken at the end.
for r in $(seq "$reps"); do
    echo "pmixd_formula: round $r of $reps" >&2
    line=$("$tcp" | grep '^tcppingpong alpha_us=')
    echo "alpha $(field "$line" alpha_us)" >>"$raw"
    echo "beta $(field "$line" beta_ns_per_byte)" >>"$raw"
    if [ "$(nproc)" -ge 2 ]; then
        line=$("$tcp" --placement split | grep '^tcppingpong alpha_us=')
        echo "alpha_split $(field "$line" alpha_us)" >>"$raw"
    fi
    # The local part: the same fences on one node, served by pmixrun.
    line=$("$pmixrun" -n 2 --timeout 300 "$bench" --iters 200 --warmup 20 \
        --collect-iters 50 --sizes "$sizes" 2>&1 | grep '^fence_bench ' | tail -1)
    echo "local barrier $(field "$line" barrier_us)" >>"$raw"
    for s in ${sizes//,/ }; do
        echo "local $s $(field "$line" "collect${s}_us")" >>"$raw"
    done
    "$here/pmixd_sweep.sh" "$build" "$sizes" "$ks" | while read -r kk kind algo rest; do
        k=${kk#K=}
        if [ "$kind" = barrier ]; then
            echo "$k barrier $algo barrier $(field "$rest" barrier_us)"
        else
            for s in ${sizes//,/ }; do
                echo "$k allgather $algo $s $(field "$rest" "collect${s}_us")"
            done
        fi
    done >>"$raw"
done

med() { # median of the numeric values of the lines of $raw that start with "$1 "
    grep "^$1 " "$raw" | awk '{ print $NF }' | grep -E '^[0-9.]+$' | sort -g |
        awk '{ v[NR] = $1 } END { if (NR == 0) print "?"; else if (NR % 2) print v[(NR + 1) / 2];
              else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

samples() { grep "^$1 " "$raw" | awk '{ print $NF }' | paste -sd, -; }

alpha=$(med alpha)
alpha_split=$(med alpha_split)
beta=$(med beta) # ns per byte
tsv=$out/pmixd_formula.tsv
{
    printf '# alpha_us=%s alpha_split_us=%s beta_ns_per_byte=%s reps=%s alpha_samples=%s alpha_split_samples=%s\n' \
        "$alpha" "$alpha_split" "$beta" "$reps" "$(samples alpha)" "$(samples alpha_split)"
    printf 'K\tkind\talgo\tm_bytes\tmeasured_us\tlocal_us\tnet_us\tformula_us\tratio_raw\tratio_net\twithin2x_raw\twithin2x_net\tformula_split_us\tratio_net_split\twithin2x_net_split\tmsgs\tnet_x_cores_per_msg_us\n'
    for k in $ks; do
        for a in dissemination tree recdbl; do
            echo "$k barrier $a 0 $(med "$k barrier $a barrier") $(med "local barrier")"
        done
        for a in tree recdbl ring bruck hier; do
            for s in ${sizes//,/ }; do
                echo "$k allgather $a $(bytes "$s") $(med "$k allgather $a $s") $(med "local $s")"
            done
        done
    done | awk -v al="$alpha" -v als="$alpha_split" -v be="$beta" -v cores="$(nproc)" '
        BEGIN { OFS = "\t"; be /= 1000 }
        function clg(x,  l) { l = 0; while (2 ^ l < x) l++; return l }
        function flg(x,  l) { l = 0; while (2 ^ (l + 1) <= x) l++; return l }
        function ok(r) { return r == "?" ? "?" : (r + 0 >= 0.5 && r + 0 <= 2 ? "yes" : "no") }
        function ratio(x, f) { return x == "?" || f == "?" ? "?" : sprintf("%.2f", x / f) }
        function cost(kind, algo, P, m, a,  L, fl, extra, n, bw) { # the formula, microseconds
            if (a == "?") return "?"
            L = clg(P); fl = flg(P); extra = (2 ^ fl < P) ? 2 : 0; n = P * m
            bw = (P - 1) / P * n * be
            if (kind == "barrier") {
                if (algo == "dissemination") return L * a
                if (algo == "tree") return 2 * L * a
                return (fl + extra) * a
            }
            if (algo == "ring") return (P - 1) * a + bw
            if (algo == "recdbl") return (fl + extra) * a + bw
            if (algo == "bruck") return L * a + bw
            return 2 * L * a + bw + L * n * be # tree, hier (one flat group)
        }
        {
            P = $1; kind = $2; algo = $3; m = $4; meas = $5; loc = $6
            fl = flg(P); r = P - 2 ^ fl; L = clg(P)
            # msgs: messages of all members together (docs/collectives.md)
            if (algo == "dissemination" || algo == "bruck") msgs = P * L
            else if (algo == "recdbl") msgs = 2 ^ fl * fl + 2 * r
            else if (algo == "ring") msgs = P * (P - 1)
            else msgs = 2 * (P - 1)
            f = cost(kind, algo, P, m, al); fs = cost(kind, algo, P, m, als)
            net = meas == "?" || loc == "?" ? "?" : sprintf("%.1f", meas - loc)
            pm = net == "?" ? "?" : sprintf("%.1f", net * cores / msgs)
            rr = ratio(meas, f); rn = ratio(net, f); rs = ratio(net, fs)
            print P, kind, algo, m, meas, loc, net, f == "?" ? "?" : sprintf("%.1f", f), rr, rn,
                ok(rr), ok(rn), fs == "?" ? "?" : sprintf("%.1f", fs), rs, ok(rs), msgs, pm
        }'
} >"$tsv"

txt=$out/pmixd_formula.txt
{
    echo "alpha = $alpha us (free placement), alpha_split = $alpha_split us (the two ends on different CPUs),"
    echo "beta = $beta ns/byte (TCP on 127.0.0.1, tcppingpong; medians of $reps runs)"
    echo "raw = measured / formula; net = (measured - local) / formula; local = same fence, 2 processes on one node, no daemon"
    echo "formula_split, ratio_net_split: the same with alpha_split"
    echo "alpha samples (us): $(samples alpha); split: $(samples alpha_split)"
    echo
    grep -v '^#' "$tsv" | column -t -s "$(printf '\t')"
} >"$txt"
cat "$txt"

if command -v gnuplot >/dev/null 2>&1; then
    png=$out/pmixd_formula.png
    gnuplot <<EOF 2>/dev/null && echo "pmixd_formula: wrote $png" >&2
set terminal png size 1000,700
set output "$png"
set logscale y
set xlabel "fence (K, kind, algorithm, m)"
set ylabel "measured / formula"
set xtics rotate by 90 font ",7"
set key top left
set grid y
plot "< grep -v '^#' '$tsv' | tail -n +2" using 0:9:xtic(sprintf("%s %s %s %s", strcol(1), strcol(2), strcol(3), strcol(4))) with points pt 7 title "raw", \
     "" using 0:10 with points pt 5 title "net (local part subtracted)", \
     "" using 0:14 with points pt 9 title "net, alpha of split CPUs", \
     2 with lines lt 0 title "2x", 0.5 with lines lt 0 notitle
EOF
fi
