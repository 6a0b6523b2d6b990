#!/bin/bash
# server_killed.sh - kill pmixrun (the ranks' server) with SIGKILL while
# ranks sleep in a fence on the fence page, and check nobody sleeps on.
#
#   server_killed.sh PMIXRUN JOB_RULES
#
# Runs `PMIXRUN -n 3 JOB_RULES server_killed DIR` (see job_rules.c): rank 0
# never arrives at the fence, ranks 1 and 2 sleep in it. Rank 2, started by
# pmixrun with PR_SET_PDEATHSIG SIGKILL, sleeps with no deadline; rank 1
# cleared that signal, so it sleeps with the 0.1 s look at its connection.
# Once all three are ready it kills pmixrun and checks, within 5 s:
#   - rank 1 saw the server gone: its fence failed (DIR/result.1);
#   - no rank is left (ranks 0 and 2 died with pmixrun, rank 1 exited).
set -u

[ $# -eq 2 ] || { echo "usage: server_killed.sh PMIXRUN JOB_RULES" >&2; exit 2; }
pmixrun=$1
prog=$2

work=$(mktemp -d "${TMPDIR:-/tmp}/server_killed.XXXXXX") || exit 2
mkdir "$work/tmp"
failures=0
fail() {
    echo "server_killed.sh: FAILED: $*"
    failures=$((failures + 1))
}
cleanup() {
    # the ranks carry $work in their command line
    pkill -KILL -f "$work" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

TMPDIR="$work/tmp" "$pmixrun" -n 3 "$prog" server_killed "$work" >"$work/out" 2>&1 &
run=$!

ready=0
for _ in $(seq 200); do
    if [ -e "$work/ready.0" ] && [ -e "$work/ready.1" ] && [ -e "$work/ready.2" ]; then
        ready=1
        break
    fi
    kill -0 "$run" 2>/dev/null || break
    sleep 0.05
done
if [ $ready -eq 0 ]; then
    echo "server_killed.sh: FAILED: the ranks did not get ready within 10 s; pmixrun said:"
    cat "$work/out"
    exit 1
fi
sleep 0.5 # ranks 1 and 2 are asleep in their fence by now
kill -KILL "$run"
wait "$run" 2>/dev/null
killed=$(date +%s.%N)

gone=0
for _ in $(seq 100); do
    if [ -s "$work/result.1" ] && ! pgrep -f "$work" >/dev/null; then
        gone=1
        break
    fi
    sleep 0.05
done
took=$(awk -v a="$killed" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')

if [ -s "$work/result.1" ]; then
    echo "rank 1 (outliving the server): $(cat "$work/result.1")"
    grep -q "^fence failed" "$work/result.1" ||
        fail "rank 1's fence did not fail with its server gone"
else
    fail "rank 1 (no parent-death signal) did not see its server gone within 5 s: asleep for good?"
fi
if [ $gone -eq 0 ]; then
    fail "ranks left 5 s after pmixrun was killed:"
    pgrep -af "$work" | grep -v pgrep
fi
echo "pmixrun killed; everything settled after ${took} s"
if [ $failures -gt 0 ]; then
    echo "pmixrun's output:"
    cat "$work/out"
    exit 1
fi
echo "server_killed.sh: PASS"
