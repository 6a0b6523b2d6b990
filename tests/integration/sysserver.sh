#!/bin/bash
# sysserver.sh - `pmixrun --system-server` with OpenPMIx's debugger
# examples (docs/user-guide.md, "System server"): the system server is
# found through its rendezvous file (PMIX_CONNECT_SYSTEM_FIRST); the
# debugger example spawns ./client (2 ranks, PMIX_DEBUG_STOP_IN_INIT), then
# ./debuggerd as debugger daemons (PMIX_DEBUGGER_DAEMONS, PMIX_DEBUG_JOB,
# maxprocs 0 with ppr:1:node, PMIX_NOTIFY_COMPLETION) and exits 0 when the
# daemons' job ends.
#
#   sysserver.sh PMIXRUN DEBUG_TOOL PMIXPS TOOL_PROBE INCDIR LIBDIR
#
# Two runs against one server:
#   a. debugger.c, debuggerd.c, client.c unchanged. OpenPMIx's debuggerd
#      prints "I AM HERE", sleeps 10 s and exits before PMIx_tool_init, so
#      the clients stay held in PMIx_Init.
#   b. the same, but debuggerd.c without its early `sleep(10); exit(0);`:
#      the daemon connects with no attributes (the environment the server
#      gave it), reads PMIX_DEBUG_JOB and its target's local proc table,
#      and releases the clients (PMIX_DEBUGGER_RELEASE), which then run to
#      PMIx_Finalize.
# The debugger's attach mode (-a), `pmixps --system` and a tool's
# PMIX_QUERY_NAMESPACES / _NAMESPACE_INFO then list the running job,
# (a)'s, its ranks still held (connected).
#   c. a job whose ranks fail (exit 3 before PMIx) ends alone: the server
#      says so and goes on.
# Then a tool's PMIx_Job_control(PMIX_JOB_CTRL_TERMINATE) ends the server
# (exit 0, the held clients killed, the rendezvous file gone); a second
# server takes over a stale rendezvous file, a third one started beside it
# refuses, and the second ends on SIGTERM the same way.
set -u

[ $# -eq 6 ] || { echo "usage: sysserver.sh PMIXRUN DEBUG_TOOL PMIXPS TOOL_PROBE INCDIR LIBDIR" >&2; exit 2; }
pmixrun=$(realpath "$1")
dtool=$(realpath "$2")
pmixps=$(realpath "$3")
probe=$(realpath "$4")
incdir=$(realpath "$5")
libdir=$(realpath "$6")
examples=${PMIXLAB_OPENPMIX_EXAMPLES:-/usr/share/doc/libpmix-dev/examples}
here=$(cd "$(dirname "$0")" && pwd)

if [[ ! -f $examples/debugger.c || ! -f $examples/debuggerd.c ]]; then
    echo "skipped: OpenPMIx's examples are not installed in $examples"
    exit 77
fi
if [[ $(ldd "$libdir/libpmix.so.2" 2>/dev/null) == *libasan* ]]; then
    echo "skipped: $libdir/libpmix.so.2 is built with AddressSanitizer"
    exit 77
fi

. "$here/harness.sh"
harness_init sysserver
export TMPDIR=$work
export PMIX_SYSTEM_TMPDIR=$work/sys
unset PMIX_SERVER_URI PMIX_NAMESPACE PMIX_RANK PMIX_SERVER_TMPDIR
mkdir -p "$work/sys" "$work/a" "$work/b"
sysfile=$work/sys/pmix.sys.$(hostname)

server=""
cleanup() {
    [ -n "$server" ] && kill -KILL "$server" 2>/dev/null
    harness_cleanup
}
trap cleanup EXIT

# build DIR NAME [SOURCE]: an example compiled against our headers and library.
build() {
    cp "$here/../foreign/openpmix-examples/examples.h" "$1/"
    ${CC:-cc} -o "$1/$2" "${3:-$examples/$2.c}" -I"$1" -I"$incdir" -L"$libdir" -lpmix \
        -Wl,-rpath,"$libdir" || { fail "cannot compile $2"; exit 1; }
}
for name in debugger debuggerd client; do build "$work/a" $name; done
sed -e '/^    sleep(10);$/d' -e '/^    exit(0);$/d' "$examples/debuggerd.c" >"$work/b/debuggerd_full.c"
[ "$(diff "$examples/debuggerd.c" "$work/b/debuggerd_full.c" | grep -c '^<')" -eq 2 ] ||
    fail "debuggerd.c has no early 'sleep(10); exit(0);' to take out"
build "$work/b" debuggerd "$work/b/debuggerd_full.c"
cp "$work/a/debugger" "$work/a/client" "$work/b/"

# start_server OUT: pmixrun --system-server in the background ($server),
# once its rendezvous file is there.
start_server() {
    "$pmixrun" --system-server >"$1" 2>&1 &
    server=$!
    for _ in $(seq 100); do
        [ -f "$sysfile" ] && return 0
        sleep 0.1
    done
    fail "no system rendezvous file $sysfile: $(cat "$1")"
    exit 1
}

# wait_for COUNT PATTERN FILE: true once COUNT lines of FILE match the
# extended regex PATTERN (within 15 s: output reaches the server's stdout
# after the job's end may have been told).
wait_for() {
    for _ in $(seq 150); do
        [ "$(grep -cE -- "$2" "$3")" -ge "$1" ] && return 0
        sleep 0.1
    done
    return 1
}

# wait_server: the server's exit status (it must end within 15 s).
wait_server() {
    for _ in $(seq 150); do
        kill -0 "$server" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$server" 2>/dev/null; then
        fail "the system server did not end"
        return 1
    fi
    wait "$server"
    local st=$?
    server=""
    return $st
}

out=$work/server.out
start_server "$out"
ns=$(sed -n 's/^pmixrun: system server \([^ ]*\) ready at .*/\1/p' "$out")
[ -n "$ns" ] || fail "the server did not say its namespace: $(cat "$out")"
[ "$(stat -c %a "$sysfile")" = 644 ] || fail "the rendezvous file's mode is $(stat -c %a "$sysfile")"

# a. unchanged: the daemon sleeps and exits; the debugger ends with it.
(cd "$work/a" && timeout 40 ./debugger) >"$work/a.out" 2>&1
st=$?
[ $st -eq 0 ] || fail "debugger (a) exited $st: $(cat "$work/a.out")"
grep -q "^Tool ns $ns.tool.1 rank 0: Running$" "$work/a.out" ||
    fail "debugger (a) did not reach the system server: $(cat "$work/a.out")"
grep -q "^SPAWNED DEBUGGERD$" "$work/a.out" || fail "debugger (a) spawned no daemon: $(cat "$work/a.out")"
grep -qiE "fail|incorrect" "$work/a.out" && fail "debugger (a) reported a failure: $(cat "$work/a.out")"
wait_for 1 "^I AM HERE$" "$out" || fail "debuggerd (a) did not run: $(cat "$out")"

# b. the daemon releases its target.
(cd "$work/b" && timeout 40 ./debugger) >"$work/b.out" 2>&1
st=$?
[ $st -eq 0 ] || fail "debugger (b) exited $st: $(cat "$work/b.out")"
grep -q "^Tool ns $ns.tool.2 rank 0: Running$" "$work/b.out" ||
    fail "debugger (b) did not reach the system server: $(cat "$work/b.out")"
# the spawns: a's client s1, a's daemon s2, b's client s3, b's daemon s4
for pattern in "^\[$ns.s4:0\] Debugging $ns.s3$" "^\[$ns.s4:0\] Local proctable received$" \
    "^\[$ns.s4:0\] Sending release$" "^Debugger daemon ns $ns.s4 rank 0:PMIx_Finalize successfully completed$"; do
    wait_for 1 "$pattern" "$out" || fail "debuggerd (b) did not print '$pattern': $(cat "$out")"
done
wait_for 2 "^Client ns $ns.s3 rank [01]:PMIx_Finalize successfully completed$" "$out" ||
    fail "the released clients (b) did not finalize: $(cat "$out")"
# a's clients were never released: still inside PMIx_Init
grep -q "^Client ns $ns.s1 " "$out" && fail "the clients of (a) left PMIx_Init unreleased: $(cat "$out")"

# The debugger's attach mode finds the running (held) job of (a).
(cd "$work/a" && timeout 20 ./debugger -a "$ns.s1") >"$work/attach.out" 2>&1
st=$?
[ $st -eq 0 ] || fail "debugger -a exited $st: $(cat "$work/attach.out")"
grep -q "^Query returned $ns.s1$" "$work/attach.out" ||
    fail "debugger -a did not list the running job alone: $(cat "$work/attach.out")"

timeout 20 "$pmixps" --system >"$work/ps.out" 2>&1 || fail "pmixps --system: $(cat "$work/ps.out")"
grep -q "^$ns.s1: 2 processes$" "$work/ps.out" || fail "pmixps --system did not list $ns.s1: $(cat "$work/ps.out")"
[ "$(grep -cE "^ +[01] +[^ ]+ +[1-9][0-9]* +connected +0 +.*/client$" "$work/ps.out")" -eq 2 ] ||
    fail "pmixps --system did not show both held clients: $(cat "$work/ps.out")"

timeout 20 "$probe" system >"$work/probe.out" 2>&1 || fail "tool_probe system: $(cat "$work/probe.out")"
[ "$(grep -c '^job ' "$work/probe.out")" -eq 1 ] && grep -q "^job $ns.s1$" "$work/probe.out" ||
    fail "PMIX_QUERY_NAMESPACES is not the running job alone: $(cat "$work/probe.out")"
[ "$(grep -c '^cmd ' "$work/probe.out")" -eq 1 ] && grep -q "^cmd $ns.s1 ./client$" "$work/probe.out" ||
    fail "PMIX_QUERY_NAMESPACE_INFO is not the running job alone: $(cat "$work/probe.out")"

# c. A job that fails ends alone: ./client exits 3 before PMIx (both
# ranks), ./debuggerd at once; the debugger still ends with its daemons,
# and the server goes on.
mkdir -p "$work/c"
cp "$work/a/debugger" "$work/c/"
printf '#!/bin/sh\nexit 3\n' >"$work/c/client"
printf '#!/bin/sh\nexit 0\n' >"$work/c/debuggerd"
chmod +x "$work/c/client" "$work/c/debuggerd"
(cd "$work/c" && timeout 40 ./debugger) >"$work/c.out" 2>&1
st=$?
[ $st -eq 0 ] || fail "debugger (c) exited $st: $(cat "$work/c.out")"
wait_for 1 "^pmixrun: system server: rank [01] \(pid [0-9]+\) of $ns.s5 exited with 3 before connecting to PMIx; stopping that job$" "$out" ||
    fail "the server did not report the failed job: $(cat "$out")"
kill -0 "$server" 2>/dev/null || fail "a failed job ended the system server: $(cat "$out")"

# A tool's terminate request ends it: exit 0, no rendezvous file, no client.
"$dtool" terminate >"$work/term.out" 2>&1 || fail "debug_tool terminate: $(cat "$work/term.out")"
wait_server
st=$?
[ $st -eq 0 ] || fail "the system server exited $st after a terminate request: $(cat "$out")"
grep -qE "^pmixrun: system server: $ns.tool.[0-9]+:0 asked it to terminate$" "$out" ||
    fail "the server did not say who asked it to end: $(cat "$out")"
[ -e "$sysfile" ] && fail "the rendezvous file outlived the server"
for p in $(sed -n 's/^Client \([0-9]*\): Running$/\1/p' "$out"); do
    kill -0 "$p" 2>/dev/null && fail "client $p outlived the system server"
done

# A file left by a server that died (its socket gone) does not stop a
# new one, which takes the file; a second server while one runs refuses
# and leaves the file alone.
echo "unix:$work/gone.sock" >"$sysfile"
start_server "$work/server2.out"
wait_for 1 "^pmixrun: system server .* ready at " "$work/server2.out" ||
    fail "a stale rendezvous file kept a new system server from starting: $(cat "$work/server2.out")"
uri2=$(sed -n 's/^pmixrun: system server .* ready at \(.*\)$/\1/p' "$work/server2.out")
[ "$(cat "$sysfile")" = "$uri2" ] || fail "the new system server did not take the stale file"
timeout 10 "$pmixrun" --system-server >"$work/second.out" 2>&1 &&
    fail "a second system server started beside a running one"
grep -q "^pmixrun: a system server already runs on this machine" "$work/second.out" ||
    fail "the second system server did not say why it stopped: $(cat "$work/second.out")"
[ "$(cat "$sysfile")" = "$uri2" ] || fail "the second system server took the first one's file"

# SIGTERM ends it the same way.
kill -TERM "$server"
wait_server
st=$?
[ $st -eq 0 ] || fail "the system server exited $st on SIGTERM: $(cat "$work/server2.out")"
[ -e "$sysfile" ] && fail "the rendezvous file outlived the server (SIGTERM)"

# Without a system server, a tool that asks for one fails.
"$dtool" terminate >"$work/none.out" 2>&1 && fail "debug_tool terminate found a system server that is gone"

[ $failures -eq 0 ] && echo "sysserver.sh: OK"
exit $((failures > 0))
