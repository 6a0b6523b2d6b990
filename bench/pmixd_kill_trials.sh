#!/bin/bash
# pmixd_kill_trials.sh - kill a whole node daemon at a random moment of a
# series of back-to-back collecting fences, TRIALS times: in every trial
# every surviving process must see its fence fail within 1 s of the fence's
# start (no PMIX_TIMEOUT is set, so the bound rests on failure detection),
# and pmixrun must end the job naming the dead node. A nightly/benchmark
# item, not a ctest.
#
#   bench/pmixd_kill_trials.sh BUILD_DIR [TRIALS [K]]
#
# Each trial runs `pmixrun --nodes K -n 2K --tag-output job_rules fence_loop`
# (ranks 2v and 2v+1 on node v), waits 0.5-1.5 s, kills the pmixd of a
# random node with SIGKILL and checks the output: 2(K-1) survivors printed
# "fence failed as expected", nobody printed FAIL, pmixrun named the node.
set -u
build=${1:?usage: pmixd_kill_trials.sh BUILD_DIR [TRIALS [K]]}
trials=${2:-100}
k=${3:-4}
pmixrun=$build/sockhost/pmixrun
prog=$build/tests/progs/job_rules
[ -x "$pmixrun" ] && [ -x "$prog" ] || { echo "pmixd_kill_trials: build $build first" >&2; exit 2; }
out=$(mktemp "${TMPDIR:-/tmp}/pmixd_kill.XXXXXX") || exit 2
trap 'rm -f "$out"' EXIT

ok=0
for t in $(seq 1 "$trials"); do
    "$pmixrun" --nodes "$k" -n $((2 * k)) --timeout 60 --tag-output "$prog" fence_loop >"$out" 2>&1 &
    run=$!
    sleep "$(awk -v s="$RANDOM" 'BEGIN { srand(s); printf "%.3f", 0.5 + rand() }')"
    victim=$((RANDOM % k))
    dpid=$(ps -o pid=,args= --ppid "$run" |
        awk -v n="$victim" '$2 ~ /pmixd$/ { for (i = 3; i < NF; i++) if ($i == "--node" && $(i + 1) == n) print $1 }')
    if [ -z "$dpid" ]; then
        wait "$run"
        echo "trial $t: FAILED: no daemon of node$victim found"
        continue
    fi
    kill -KILL "$dpid"
    wait "$run"
    rc=$?
    survivors=0
    for r in $(seq 0 $((2 * k - 1))); do
        [ $((r / 2)) -eq "$victim" ] && continue
        grep -q "^\[$r\] .*fence failed as expected" "$out" && survivors=$((survivors + 1))
    done
    worst=$(sed -n 's/^\[[0-9]*\] .*fence failed as expected after \([0-9.]*\) s.*/\1/p' "$out" |
        sort -g | tail -1)
    if [ "$survivors" -eq $((2 * (k - 1))) ] && [ $rc -ne 0 ] && ! grep -q "FAIL:" "$out" &&
        grep -q "daemon of node$victim " "$out"; then
        ok=$((ok + 1))
        echo "trial $t: node$victim killed: $survivors survivors failed, slowest after ${worst} s"
    else
        echo "trial $t: node$victim killed: FAILED ($survivors of $((2 * (k - 1))) survivors, exit $rc)"
        tail -20 "$out"
    fi
done
echo "pmixd_kill_trials: $ok of $trials trials passed (K=$k)"
[ "$ok" -eq "$trials" ]
