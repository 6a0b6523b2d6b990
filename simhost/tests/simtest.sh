#!/bin/bash
# simtest.sh - pmixsim's tests (ctest label `sim`); see simtests.cmake.
#
#   simtest.sh formula PMIXSIM NODES ALGO SIZE
#       Every fence of `fence --iters 3 [--size SIZE]` on a crossbar under
#       CM02 ran ALGO and took the formula's time within 1%.
#   simtest.sh same-as-pmixrun PMIXSIM PMIXRUN PROGRAM ARGS...
#       PROGRAM ARGS gives the same output in pmixsim (1 node x 4 processes,
#       the workload named like the program)
#       as under `pmixrun -n 4`, once wall-clock figures are masked; and it
#       also succeeds on 4 nodes x 2 processes.
#   simtest.sh repeat PMIXSIM ARGS...
#       Two runs with the same arguments print the same thing (all but the
#       wall time and memory line).
#   simtest.sh bad-args PMIXSIM
#       Bad arguments end with status 2 and a message naming the problem.
set -u
cmd=$1
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

case $cmd in
formula)
    sim=$1 nodes=$2 algo=$3 size=$4
    "$sim" --quiet --nodes "$nodes" --topology crossbar --model cm02 --algo "$algo" \
        fence --iters 3 --size "$size" >"$tmp/out" 2>"$tmp/err" ||
        fail "pmixsim exited with $?: $(cat "$tmp/err")"
    cat "$tmp/out"
    awk -F'\t' -v algo="$algo" '
        /^[0-9]/ {
            n++
            if ($3 != algo) { print "fence " $1 " ran " $3 ", not " algo; bad++ }
            if ($12 != "ok") { print "fence " $1 " failed: " $12; bad++ }
            if ($11 == "-" || $11 < 0.99 || $11 > 1.01) {
                print "fence " $1 ": simulated " $7 " us, formula " $10 " us (ratio " $11 ")"; bad++
            }
        }
        END { if (n != 3) { print "expected 3 fences, saw " n; bad++ } exit bad != 0 }
    ' "$tmp/out" || fail "simulated times do not match the formula"
    ;;
same-as-pmixrun)
    sim=$1 run=$2 path=$3 prog=$(basename "$3")
    shift 3
    mask='s/[0-9]+\.[0-9]+ s/X s/g'
    "$run" -n 4 "$path" "$@" >"$tmp/real" 2>"$tmp/real.err" ||
        fail "pmixrun -n 4 $prog $*: $(cat "$tmp/real.err")"
    "$sim" --quiet --nodes 1 --ppn 4 "$prog" "$@" >"$tmp/sim" 2>"$tmp/sim.err" ||
        fail "pmixsim --nodes 1 --ppn 4 $prog $*: $(cat "$tmp/sim.err")"
    grep -v -e '^#' -e '^fence	' -e '^[0-9]' "$tmp/sim" | sed -E "$mask" | sort >"$tmp/a"
    sed -E "$mask" "$tmp/real" | sort >"$tmp/b"
    echo "--- under pmixrun -n 4:"
    cat "$tmp/b"
    echo "--- in pmixsim, 1 node x 4 processes:"
    cat "$tmp/a"
    diff "$tmp/b" "$tmp/a" || fail "pmixsim's output differs from pmixrun's"
    "$sim" --quiet --nodes 4 --ppn 2 "$prog" "$@" >"$tmp/sim2" 2>"$tmp/sim2.err" ||
        fail "pmixsim --nodes 4 --ppn 2 $prog $*: $(cat "$tmp/sim2.err")"
    echo "--- in pmixsim, 4 nodes x 2 processes:"
    cat "$tmp/sim2"
    ;;
repeat)
    sim=$1
    shift
    "$sim" --quiet "$@" >"$tmp/1" 2>&1 || fail "first run: $(cat "$tmp/1")"
    "$sim" --quiet "$@" >"$tmp/2" 2>&1 || fail "second run: $(cat "$tmp/2")"
    grep -v '^# wall:' "$tmp/1" >"$tmp/1f"
    grep -v '^# wall:' "$tmp/2" >"$tmp/2f"
    cat "$tmp/1"
    diff "$tmp/1f" "$tmp/2f" || fail "two runs with the same seed differ"
    ;;
bad-args)
    sim=$1
    check() { # EXPECTED-WORDS ARGS...
        local want=$1
        shift
        "$sim" "$@" >"$tmp/o" 2>"$tmp/e"
        local rc=$?
        [[ $rc -eq 2 ]] || fail "pmixsim $*: exit status $rc, expected 2"
        grep -q -- "$want" "$tmp/e" || fail "pmixsim $*: no '$want' in: $(cat "$tmp/e")"
        echo "ok: pmixsim $* -> $(head -1 "$tmp/e")"
    }
    check "--nodes 0" --nodes 0 fence
    check "--nodes 70000" --nodes 70000 fence
    check "--topology mesh" --topology mesh fence
    check "--model foo" --model foo fence
    check "--algo nosuch" --algo nosuch fence
    check "unknown workload" nosuch
    check "no WORKLOAD" --nodes 4
    check "--planes 2" --planes 2 fence
    check "--lat" --lat fast fence
    check "unknown option" --frobnicate fence
    check "multiple of 32" --nodes 33 --topology dragonfly fence
    "$sim" --list >"$tmp/o" || fail "pmixsim --list failed"
    grep -q '^fence ' "$tmp/o" || fail "--list does not list the fence workload"
    ;;
*)
    fail "unknown test $cmd"
    ;;
esac
exit 0
