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
# The job runs with PMIXLAB_LOG=debug and --tag-output, so that the
# library says which kind of sleeper each rank is. Once ranks 1 and 2 are
# asleep in the kernel (a futex, per /proc/PID/wchan) it kills pmixrun and
# checks, within 5 s:
#   - rank 1 saw the server gone: its fence failed (DIR/result.1);
#   - no rank is left (ranks 0 and 2 died with pmixrun, rank 1 exited);
#   - rank 2 said it sleeps without a deadline, rank 1 that it looks.
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

TMPDIR="$work/tmp" PMIXLAB_LOG=debug "$pmixrun" --tag-output -n 3 "$prog" server_killed "$work" \
    >"$work/out" 2>&1 &
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
# ranks 1 and 2 asleep in their fence: in a futex wait
asleep=0
for _ in $(seq 100); do
    w1=$(cat "/proc/$(cat "$work/ready.1")/wchan" 2>/dev/null)
    w2=$(cat "/proc/$(cat "$work/ready.2")/wchan" 2>/dev/null)
    if [[ $w1 == *futex* && $w2 == *futex* ]]; then
        asleep=1
        break
    fi
    sleep 0.02
done
[ $asleep -eq 1 ] || fail "ranks 1 and 2 were not seen asleep in a futex (wchan: '$w1', '$w2')"
sleep 0.2 # rank 1 has looked at its connection at least once
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
grep -q '^\[2\] .*fence page: sleeps without a deadline' "$work/out" ||
    fail "rank 2 (started with a parent-death signal) did not say it sleeps without a deadline"
grep -q '^\[1\] .*fence page: sleeps look at the server every 0.1 s' "$work/out" ||
    fail "rank 1 (no parent-death signal) did not say it looks at the server"
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
