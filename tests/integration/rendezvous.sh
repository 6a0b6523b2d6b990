#!/bin/bash
# rendezvous.sh - pmixrun's job directory (sockhost/pmixrun_files.c): a
# name another user cannot take first, removed on every exit, and stale
# ones of the same user removed by the next run.
#
#   rendezvous.sh PMIXRUN HELLO JOB_RULES
#
# 1. Another user (nobody, through setpriv or runuser) fills a fresh
#    world-writable sticky directory, as /tmp is, with pmixrun.<uid>.<pid>
#    directories for the next 3000 pids. pmixrun -n 2 hello with TMPDIR
#    there must still run (the name it used to take was one of those), and
#    leave nobody's names alone. Skipped (exit 77) unless run as root.
# 2. Stale directories of ours: a private pmixrun.<uid>.<pid>.XXXXXX whose
#    pid no process has, and one of the older form pmixrun.<uid>.<pid>, are
#    removed by the next run; one whose pid is alive (this shell), and one
#    that is not private, are kept.
# 3. The job's directory has the form pmixrun.<uid>.<pid>.XXXXXX, holds the
#    socket the ranks were given (PMIX_SERVER_URI), and is gone after
#    pmixrun exits normally, after SIGTERM, SIGQUIT, SIGHUP, SIGPROF and a
#    real-time signal (each of which would end it at once by default), and
#    after SIGUSR1, which pmixrun forwards to the ranks: they die of it
#    (they do not catch it), and the job ends as for any rank killed by a
#    signal.
set -u

[ $# -eq 3 ] || { echo "usage: rendezvous.sh PMIXRUN HELLO JOB_RULES" >&2; exit 2; }
pmixrun=$1
hello=$2
prog=$3

. "$(dirname "$0")/harness.sh"
harness_init rendezvous
uid=$(id -u)

# A pid that no process has: one that just exited.
dead_pid() {
    sleep 0 &
    local p=$!
    wait "$p"
    echo "$p"
}

# ---- 1. another user takes the predictable names first ----
skipped=0
as_nobody=""
if [ "$uid" = 0 ]; then
    if command -v setpriv >/dev/null; then
        as_nobody="setpriv --reuid=65534 --regid=65534 --clear-groups"
    elif command -v runuser >/dev/null; then
        as_nobody="runuser -u nobody --"
    fi
fi
if [ -z "$as_nobody" ]; then
    echo "rendezvous.sh: SKIP part 1: needs root and setpriv or runuser to act as another user"
    skipped=1
else
    chmod 755 "$work"
    pub="$work/pub"
    mkdir -m 1777 "$pub"
    last=$(cat /proc/sys/kernel/ns_last_pid)
    # shellcheck disable=SC2016
    $as_nobody bash -c 'cd "$1" && for p in $(seq "$2" "$3"); do echo "pmixrun.$4.$p"; done |
        xargs mkdir -m 700' _ "$pub" $((last + 1)) $((last + 3000)) "$uid"
    n=$(find "$pub" -mindepth 1 -maxdepth 1 -user nobody | wc -l)
    echo "rendezvous.sh: nobody made $n names in $pub (pids $((last + 1)) to $((last + 3000)))"
    [ "$n" -ge 3000 ] || fail "nobody could not make its names ($n of 3000)"
    TMPDIR="$pub" "$pmixrun" -n 2 --timeout 30 "$hello" >"$work/out.pub" 2>&1 &
    run=$!
    wait "$run"
    status=$?
    out=$(cat "$work/out.pub")
    echo "$out" | sed 's/^/    /'
    if [ "$run" -gt "$last" ] && [ "$run" -le $((last + 3000)) ]; then
        echo "rendezvous.sh: pmixrun ran as pid $run: nobody held the name pmixrun.$uid.$run"
    else
        echo "rendezvous.sh: note: pmixrun ran as pid $run, outside the names nobody made"
    fi
    [ $status = 0 ] || fail "pmixrun -n 2 hello exited with $status among nobody's names"
    [ "$(echo "$out" | grep -c '^hello from rank')" = 2 ] || fail "not every rank said hello"
    left=$(find "$pub" -mindepth 1 -maxdepth 1 ! -user nobody)
    [ -z "$left" ] || fail "pmixrun left in $pub: $left"
    n2=$(find "$pub" -mindepth 1 -maxdepth 1 -user nobody | wc -l)
    [ "$n2" = "$n" ] || fail "nobody's names went from $n to $n2"
fi

# ---- 2. stale directories ----
stale="$work/stale"
mkdir -m 700 "$stale"
d1=$(dead_pid)
d2=$(dead_pid)
d3=$(dead_pid)
mkdir -m 700 "$stale/pmixrun.$uid.$d1.Ab3dEf" "$stale/pmixrun.$uid.$d2" \
    "$stale/pmixrun.$uid.$$.Gh5jKl"
mkdir -m 755 "$stale/pmixrun.$uid.$d3.Mn7pQr"
mkdir -m 700 "$stale/pmixrun.$uid.$d1.Ab3dEf/sub"
touch "$stale/pmixrun.$uid.$d1.Ab3dEf/sub/pmix.sock" "$stale/pmixrun.$uid.$d2/pmix.sock"
out=$(TMPDIR="$stale" "$pmixrun" -n 1 --timeout 30 "$hello" 2>&1) || fail "pmixrun -n 1 hello failed: $out"
[ -e "$stale/pmixrun.$uid.$d1.Ab3dEf" ] && fail "a stale directory (pid $d1 gone) was kept"
[ -e "$stale/pmixrun.$uid.$d2" ] && fail "a stale directory of the older form (pid $d2 gone) was kept"
[ -e "$stale/pmixrun.$uid.$$.Gh5jKl" ] || fail "the directory of a live pid ($$) was removed"
[ -e "$stale/pmixrun.$uid.$d3.Mn7pQr" ] || fail "a directory that is not private was removed"
echo "rendezvous.sh: after a run, the stale directory holds: $(ls "$stale" | tr '\n' ' ')"

# ---- 3. the job's own directory ----
fresh="$work/fresh"
mkdir -m 700 "$fresh"
out=$(TMPDIR="$fresh" "$pmixrun" -n 2 --timeout 30 "$hello" 2>&1) || fail "hello failed: $out"
[ -z "$(ls -A "$fresh")" ] || fail "left after a normal exit: $(ls -A "$fresh")"
for sig in TERM QUIT HUP USR1 PROF RTMIN+1; do
    log="$work/out.$sig"
    TMPDIR="$fresh" "$pmixrun" -n 2 "$prog" sleep "$marker" >"$log" 2>&1 </dev/null &
    pid=$!
    up=0
    for _ in $(seq 1 200); do
        if [ "$(grep -c sleeping "$log")" -ge 2 ]; then
            up=1
            break
        fi
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    [ $up = 1 ] || fail "SIG$sig: the job did not start within 20 s: $(cat "$log")"
    tmpdir=$(sed -n 's/^dir pmix.tmpdir=//p' "$log" | head -1)
    case "$tmpdir" in
    "$fresh/pmixrun.$uid.$pid."??????) ;;
    *) fail "SIG$sig: PMIX_TMPDIR is '$tmpdir', not $fresh/pmixrun.$uid.$pid.XXXXXX" ;;
    esac
    for u in $(sed -n 's/^uri unix://p' "$log" | sort -u); do
        [ "$u" = "$tmpdir/pmix.sock" ] || fail "SIG$sig: the ranks were given $u"
    done
    kill -"$sig" "$pid"
    exited=0
    for _ in $(seq 1 100); do
        if ! kill -0 "$pid" 2>/dev/null; then
            exited=1
            break
        fi
        sleep 0.1
    done
    if [ $exited = 1 ]; then
        wait "$pid"
        echo "rendezvous.sh: SIG$sig: pmixrun exited with status $?"
    else
        fail "SIG$sig: pmixrun still running 10 s after the signal"
        kill -KILL "$pid" 2>/dev/null
    fi
    [ -z "$(ls -A "$fresh")" ] || fail "SIG$sig: left behind: $(ls -A "$fresh")"
done

if [ $failures -ne 0 ]; then
    echo "rendezvous.sh: $failures check(s) failed"
    exit 1
fi
if [ $skipped = 1 ]; then
    echo "rendezvous.sh: parts 2 and 3 passed; part 1 skipped"
    exit 77
fi
echo "rendezvous.sh: all checks passed"
