#!/bin/bash
# sysnodes.sh - `pmixrun --system-server --nodes 2` (docs/user-guide.md,
# "A system server"; docs/pmixd.md, "Tools over daemons"): a system server
# whose tools' jobs run over two daemons.
#
#   sysnodes.sh PMIXRUN DEBUG_TOOL DEBUG_TARGET INCDIR LIBDIR
#
#   a. A tool (debug_tool spawn, PMIX_CONNECT_TO_SYSTEM) spawns 4 ranks of
#      `debug_target where`: PMIX_QUERY_PROC_TABLE puts ranks 0-1 on node0
#      and 2-3 on node1, each rank's PMIX_HOSTNAME says the same, the ranks
#      fence across the nodes, and the tool hears the job's end
#      (PMIX_NOTIFY_COMPLETION).
#   b. A job whose ranks fail (exit 1 before PMIx) ends alone: the server
#      says so and goes on, and the tool hears the end.
#   c. OpenPMIx's debugger example, compiled unchanged (with its debuggerd
#      without the early `sleep(10); exit(0);`, as sysserver.sh does):
#      its client job of 2 ranks, held in PMIx_Init, gets one debugger
#      daemon per node, each reads its node's client from the local proc
#      table and releases it, and both clients finalize. Skipped (the rest
#      runs) without OpenPMIx's examples or with a library built with
#      AddressSanitizer, which programs built without it cannot load.
#   d. With a job still running (2 x sleep, one per node: the tool sees it
#      in PMIX_QUERY_NAMESPACES, its ranks running in the proc table), a tool's
#      PMIx_Job_control(PMIX_JOB_CTRL_TERMINATE) ends the server: exit 0,
#      its daemons and the job's ranks gone, the rendezvous file gone.
#   e. A second server over 2 nodes ends on SIGTERM the same way.
set -u

[ $# -eq 5 ] || { echo "usage: sysnodes.sh PMIXRUN DEBUG_TOOL DEBUG_TARGET INCDIR LIBDIR" >&2; exit 2; }
pmixrun=$(realpath "$1")
dtool=$(realpath "$2")
target=$(realpath "$3")
incdir=$(realpath "$4")
libdir=$(realpath "$5")
here=$(cd "$(dirname "$0")" && pwd)
examples=${PMIXLAB_OPENPMIX_EXAMPLES:-/usr/share/doc/libpmix-dev/examples}

. "$(dirname "$0")/harness.sh"
harness_init sysnodes
export TMPDIR=$work
export PMIX_SYSTEM_TMPDIR=$work/sys
unset PMIX_SERVER_URI PMIX_NAMESPACE PMIX_RANK PMIX_SERVER_TMPDIR
mkdir -p "$work/sys"
sysfile=$work/sys/pmix.sys.$(hostname)

# start_server OUT: pmixrun --system-server --nodes 2 in the background
# ($server, its namespace $ns, its daemons' pids $daemons), once it says
# it is ready (its daemons are up).
start_server() {
    "$pmixrun" --system-server --nodes 2 >"$1" 2>&1 &
    server=$!
    pids_to_kill="$pids_to_kill $server"
    for _ in $(seq 150); do
        grep -q "^pmixrun: system server .* ready at .* (2 nodes)$" "$1" && break
        sleep 0.1
    done
    ns=$(sed -n 's/^pmixrun: system server \([^ ]*\) ready at .*/\1/p' "$1")
    [ -n "$ns" ] || { fail "the server did not say it is ready: $(cat "$1")"; exit 1; }
    [ -f "$sysfile" ] || fail "no system rendezvous file $sysfile"
    daemons=$(ps -o pid= --ppid "$server" | tr -d ' ')
    [ "$(echo "$daemons" | wc -w)" -eq 2 ] || fail "the server runs $(echo "$daemons" | wc -w) daemons, not 2"
}

# wait_for COUNT PATTERN FILE: true once COUNT lines of FILE match the
# extended regex PATTERN (within 10 s).
wait_for() {
    for _ in $(seq 100); do
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
}

# check_gone WHAT PIDS...: none of PIDS is still there.
check_gone() {
    local what=$1 p
    shift
    for p in "$@"; do
        kill -0 "$p" 2>/dev/null && fail "$what $p outlived the system server"
    done
}

out=$work/server.out
start_server "$out"

# a. 4 ranks over both nodes.
timeout 40 "$dtool" spawn 4 "$target" where >"$work/a.out" 2>&1
st=$?
[ $st -eq 0 ] || fail "debug_tool spawn (a) exited $st: $(cat "$work/a.out")"
grep -q "^spawned $ns.s1$" "$work/a.out" || fail "the job is not $ns.s1: $(cat "$work/a.out")"
[ "$(grep '^proc ' "$work/a.out" | sort)" = "$(printf 'proc 0 node0\nproc 1 node0\nproc 2 node1\nproc 3 node1')" ] ||
    fail "PMIX_QUERY_PROC_TABLE is not ranks 0-1 on node0, 2-3 on node1: $(cat "$work/a.out")"
grep -q "^ended $ns.s1$" "$work/a.out" || fail "the tool did not hear the job's end: $(cat "$work/a.out")"
for r in 0 1 2 3; do
    node=node$((r / 2))
    wait_for 1 "^rank $r of 4 on $node$" "$out" || fail "rank $r did not say it runs on $node: $(cat "$out")"
done

# b. A job that fails ends alone.
timeout 40 "$dtool" spawn 2 false >"$work/b.out" 2>&1
st=$?
[ $st -eq 0 ] || fail "debug_tool spawn (b) exited $st: $(cat "$work/b.out")"
grep -q "^ended $ns.s2$" "$work/b.out" || fail "the tool did not hear the failed job's end: $(cat "$work/b.out")"
wait_for 1 "^pmixrun: system server: rank [01] \(pid [0-9]+\) of $ns.s2 exited with 1 before connecting to PMIx; stopping that job$" "$out" ||
    fail "the server did not report the failed job: $(cat "$out")"
kill -0 "$server" 2>/dev/null || fail "a failed job ended the system server: $(cat "$out")"

# c. OpenPMIx's debugger: its client job (s3) and one daemon per node (s4).
if [[ ! -f $examples/debugger.c ]]; then
    echo "part c skipped: OpenPMIx's examples are not installed in $examples"
elif [[ $(ldd "$libdir/libpmix.so.2" 2>/dev/null) == *libasan* ]]; then
    echo "part c skipped: $libdir/libpmix.so.2 is built with AddressSanitizer"
else
    mkdir -p "$work/c"
    cp "$here/../foreign/openpmix-examples/examples.h" "$work/c/"
    sed -e '/^    sleep(10);$/d' -e '/^    exit(0);$/d' "$examples/debuggerd.c" >"$work/c/debuggerd.c"
    for name in debugger client "$work/c/debuggerd"; do
        src=$examples/$name.c
        [[ $name == /* ]] && src=$name.c && name=$(basename "$name")
        ${CC:-cc} -o "$work/c/$name" "$src" -I"$work/c" -I"$incdir" -L"$libdir" -lpmix \
            -Wl,-rpath,"$libdir" || fail "cannot compile $name"
    done
    (cd "$work/c" && timeout 40 ./debugger) >"$work/c.out" 2>&1
    st=$?
    [ $st -eq 0 ] || fail "debugger (c) exited $st: $(cat "$work/c.out")"
    for r in 0 1; do
        for pattern in "^\[$ns.s4:$r\] Debugging $ns.s3$" "^\[$ns.s4:$r\] Sending release$" \
            "^Client ns $ns.s3 rank $r:PMIx_Finalize successfully completed$"; do
            wait_for 1 "$pattern" "$out" || fail "no '$pattern' (c): $(cat "$out")"
        done
    done
fi

# d. A running job, then a tool's terminate request.
timeout 40 "$dtool" spawn 2 sleep 30 >"$work/d.out" 2>&1 &
tool=$!
pids_to_kill="$pids_to_kill $tool"
wait_for 1 "^ended $ns.s[0-9]+$|^jobs " "$work/d.out" || fail "the sleep job did not start: $(cat "$work/d.out")"
job=$(sed -n 's/^spawned //p' "$work/d.out")
grep -q "^jobs $job$" "$work/d.out" || fail "PMIX_QUERY_NAMESPACES is not the running job $job: $(cat "$work/d.out")"
[ "$(grep -c '^state [01] PMIX_PROC_STATE_RUNNING$' "$work/d.out")" -eq 2 ] ||
    fail "PMIX_QUERY_PROC_TABLE does not say both ranks run: $(cat "$work/d.out")"
ranks=""
for d in $daemons; do ranks="$ranks $(ps -o pid= --ppid "$d")"; done
[ "$(echo $ranks | wc -w)" -eq 2 ] || fail "the daemons run $(echo $ranks | wc -w) ranks, not one each"
"$dtool" terminate >"$work/term.out" 2>&1 || fail "debug_tool terminate: $(cat "$work/term.out")"
wait_server
st=$?
[ $st -eq 0 ] || fail "the system server exited $st after a terminate request: $(cat "$out")"
grep -qE "^pmixrun: system server: $ns.tool.[0-9]+:0 asked it to terminate$" "$out" ||
    fail "the server did not say who asked it to end: $(cat "$out")"
[ -e "$sysfile" ] && fail "the rendezvous file outlived the server"
check_gone daemon $daemons
check_gone rank $ranks
kill -KILL "$tool" 2>/dev/null
wait "$tool" 2>/dev/null

# e. SIGTERM.
start_server "$work/server2.out"
kill -TERM "$server"
wait_server
st=$?
[ $st -eq 0 ] || fail "the system server exited $st on SIGTERM: $(cat "$work/server2.out")"
[ -e "$sysfile" ] && fail "the rendezvous file outlived the server (SIGTERM)"
check_gone daemon $daemons

[ $failures -eq 0 ] && echo "sysnodes.sh: OK"
exit $((failures > 0))
