#!/bin/bash
# ctrlc.sh - interrupt a running job the way a user does, and check that
# pmixrun cleans up.
#
#   ctrlc.sh [--group] PMIXRUN SLEEPER_PROG [NP]
#
# Starts `PMIXRUN -n NP SLEEPER_PROG sleep MARKER` (job_rules' sleep mode,
# which prints its PMIx directories and server URI and then sleeps 60 s)
# with TMPDIR pointing at a fresh directory. Once every process is up, it
# sends SIGINT to pmixrun alone (a `kill -INT`), or with --group to pmixrun's
# whole process group (what a terminal's Ctrl-C does), and checks:
#   - pmixrun exits within 5 s, with a non-zero status;
#   - no process carrying MARKER in its command line is left (pgrep -f);
#   - the job's directories (PMIX_NSDIR, PMIX_PROCDIR, and PMIX_TMPDIR when
#     it lies in our fresh TMPDIR) and the server socket are gone, and the
#     fresh TMPDIR is empty: pmixrun left no temporary files behind.
set -u

group=0
if [ "${1:-}" = "--group" ]; then
    group=1
    shift
fi
[ $# -ge 2 ] || { echo "usage: ctrlc.sh [--group] PMIXRUN SLEEPER_PROG [NP]" >&2; exit 2; }
pmixrun=$1
prog=$2
np=${3:-2}

. "$(dirname "$0")/harness.sh"
harness_init ctrlc
fresh="$work/tmp"
mkdir "$fresh"
out="$work/out"

# Job control gives the job its own process group and keeps SIGINT at its
# default disposition (non-interactive shells ignore it in background jobs).
set -m
TMPDIR=$fresh "$pmixrun" -n "$np" "$prog" sleep "$marker" >"$out" 2>&1 </dev/null &
pid=$!
set +m

# Wait until every process is sleeping (at most 20 s).
up=0
for _ in $(seq 1 200); do
    n=$(grep -c "sleeping" "$out" 2>/dev/null)
    if [ "${n:-0}" -ge "$np" ]; then
        up=1
        break
    fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
done
if [ $up != 1 ]; then
    fail "the job did not start $np sleeping processes within 20 s"
fi
echo "ctrlc.sh: processes with the marker before the interrupt:"
pgrep -a -f -- "$marker" | sed 's/^/    /'

sleep 1
if [ $group = 1 ]; then
    echo "ctrlc.sh: sending SIGINT to process group $pid"
    kill -INT -- "-$pid" 2>/dev/null
else
    echo "ctrlc.sh: sending SIGINT to pmixrun ($pid)"
    kill -INT "$pid" 2>/dev/null
fi
t0=$(date +%s.%N)
exited=0
for _ in $(seq 1 50); do
    if ! kill -0 "$pid" 2>/dev/null; then
        exited=1
        break
    fi
    sleep 0.1
done
t1=$(date +%s.%N)
if [ $exited = 1 ]; then
    wait "$pid"
    status=$?
    echo "ctrlc.sh: pmixrun exited with status $status after $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') s"
    [ "$status" != 0 ] || fail "pmixrun exited with status 0 after SIGINT"
else
    fail "pmixrun still running 5 s after SIGINT"
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
fi

echo "----- job output -----"
cat "$out"
echo "----- end of job output -----"

# Processes: give the kernel a moment to reap.
left=""
for _ in $(seq 1 20); do
    left=$(pgrep -f -- "$marker")
    [ -z "$left" ] && break
    sleep 0.1
done
if [ -n "$left" ]; then
    fail "processes left behind:"
    pgrep -a -f -- "$marker" | sed 's/^/    /'
fi

# Directories and the socket.
tmpdir=$(sed -n 's/^dir pmix.tmpdir=//p' "$out" | head -1)
for d in $(sed -n 's/^dir pmix.\(nsdir\|pdir\)=//p' "$out" | sort -u); do
    [ -e "$d" ] && fail "job directory left behind: $d"
done
if [ -n "$tmpdir" ]; then
    case "$tmpdir" in
    "$fresh"/*) [ -e "$tmpdir" ] && fail "PMIX_TMPDIR left behind: $tmpdir" ;;
    esac
fi
for u in $(sed -n 's/^uri unix://p' "$out" | sort -u); do
    [ -e "$u" ] && fail "server socket left behind: $u"
done
if [ -n "$(ls -A "$fresh")" ]; then
    fail "pmixrun left files in its TMPDIR:"
    find "$fresh" | sed 's/^/    /'
fi

if [ $failures -ne 0 ]; then
    echo "ctrlc.sh: $failures check(s) failed"
    exit 1
fi
echo "ctrlc.sh: all checks passed"
exit 0
