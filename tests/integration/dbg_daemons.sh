#!/bin/bash
# dbg_daemons.sh - debugger daemons beside their target (docs/user-guide.md,
# "Launching under a debugger"), with `pmixrun --nodes 2` and on one node.
# A tool attached to pmixrun (dbg_launch) spawns a 3-rank job held in
# PMIx_Init, then debugger daemons (dbg_daemon) that connect with no
# attributes, read their PMIX_DEBUG_TARGET, their own host and the local
# process table of the target, and release the ranks listed there:
#   pernode 2  PMIX_DEBUG_DAEMONS_PER_NODE: 2 daemons on each node that
#              holds target ranks (node0: ranks 0,1; node1: rank 2)
#   perproc 1  PMIX_DEBUG_DAEMONS_PER_PROC: one per target rank, on its node
#   rank 2     PMIX_DEBUG_TARGET of rank 2 alone: one daemon, on node1
#   cospawn 1  one spawn of the job and of the daemons (PMIX_COSPAWN_APP,
#              PER_NODE 1 in the app's directives): one daemon per node
# Every released rank runs on and says hello; a daemon's table lists the
# ranks of its own node only. Then OpenPMIx's debugger example, unchanged,
# with its debuggerd without the early `sleep(10); exit(0);`: it finds
# pmixrun --nodes 2 (no system server), spawns ./client (2 ranks, one per
# node, held) and ./debuggerd (ppr:1:node, PMIX_DEBUG_JOB), each daemon
# releases its node's client (PMIX_RANGE_LOCAL), and the debugger exits 0
# when the daemons' job ends.
#
# A tool (tool_probe) also reads the job data of a job spawned over the
# daemons (its size, each node's peers) from pmixrun's own server, and a
# rank of a job over two daemons asks for a cospawn as a tool does. Then
# `pmixrun --stop-in-init --nodes 2`'s own job is the daemons' target
# (attach): one daemon per node releases its node's ranks.
#
#   dbg_daemons.sh PMIXRUN DBG_LAUNCH DBG_DAEMON DEBUG_TARGET TOOL_PROBE INCDIR LIBDIR
set -u

[ $# -eq 7 ] || { echo "usage: dbg_daemons.sh PMIXRUN DBG_LAUNCH DBG_DAEMON DEBUG_TARGET TOOL_PROBE INCDIR LIBDIR" >&2; exit 2; }
pmixrun=$(realpath "$1")
launch=$(realpath "$2")
daemon=$(realpath "$3")
target=$(realpath "$4")
probe=$(realpath "$5")
incdir=$(realpath "$6")
libdir=$(realpath "$7")
examples=${PMIXLAB_OPENPMIX_EXAMPLES:-/usr/share/doc/libpmix-dev/examples}
here=$(cd "$(dirname "$0")" && pwd)

. "$here/harness.sh"
harness_init dbg_daemons
export TMPDIR=$work
export PMIX_SYSTEM_TMPDIR=$work/nosys # no system server: tools find pmixrun
unset PMIX_SERVER_URI PMIX_NAMESPACE PMIX_RANK PMIX_SERVER_TMPDIR
mkdir -p "$work/nosys"
host=$(hostname)

# start_job OUT ARGS...: pmixrun ARGS in the background ($job, $ns), once
# its tool rendezvous file is there.
start_job() {
    local out=$1
    shift
    "$pmixrun" "$@" >"$out" 2>&1 &
    job=$!
    pids_to_kill="$pids_to_kill $job"
    ns="pmixrun.$host.$job"
    for _ in $(seq 100); do
        ls "$work"/pmixrun.*.$job.*/pmix.$host.tool.$job >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    fail "pmixrun $* made no tool rendezvous file: $(cat "$out")"
    return 1
}

# launch MODE N JOBNO OUT: dbg_launch against $job; its target is
# $ns.sJOBNO, the daemons' job the next.
launch() {
    timeout 40 "$launch" "$job" "$1" "$2" "$target" "$daemon" >"$4" 2>&1 ||
        fail "dbg_launch $1 $2: exit $?: $(cat "$4")"
    grep -qx "spawned $ns.s$3" "$4" || fail "dbg_launch $1 $2: $(cat "$4")"
}

# daemons OUT TJOB: "HOST LOCAL" of each daemon line of target job TJOB,
# sorted; hellos OUT: the ranks that said hello, sorted (each wait: 10 s).
daemons() { grep "^daemon .* target $ns.s$2 " "$1" | awk '{ print $5, $10 }' | sort; }
await() { # await COUNT PATTERN FILE
    for _ in $(seq 100); do
        [ "$(grep -cE -- "$2" "$3")" -ge "$1" ] && return 0
        sleep 0.1
    done
    return 1
}

# ---- pmixrun --nodes 2: one job, every mode in turn ----
if start_job "$work/n2.out" --nodes 2 -n 2 --timeout 90 sleep 60; then
    out=$work/n2.out
    launch pernode 2 1 "$work/l1"
    grep -qx "ended $ns.s2" "$work/l1" || fail "pernode: the daemons' job did not end: $(cat "$work/l1")"
    await 3 "^hello from rank [0-2] of 3$" "$out" || fail "pernode: not every rank released: $(cat "$out")"
    [ "$(daemons "$out" 1 | tr '\n' ';')" = "node0 0,1;node0 0,1;node1 2;node1 2;" ] ||
        fail "pernode 2: daemons (host, local ranks): $(daemons "$out" 1 | tr '\n' ';')"
    grep "^daemon .* target $ns.s1 " "$out" | grep -qv " all local " && fail "pernode: a daemon's target is not the whole job"

    launch perproc 1 3 "$work/l3"
    await 6 "^hello from rank [0-2] of 3$" "$out" || fail "perproc: not every rank released: $(cat "$out")"
    [ "$(daemons "$out" 3 | tr '\n' ';')" = "node0 0,1;node0 0,1;node1 2;" ] ||
        fail "perproc 1: daemons (host, local ranks): $(daemons "$out" 3 | tr '\n' ';')"

    launch rank 2 5 "$work/l5"
    await 7 "^hello from rank [0-2] of 3$" "$out" || fail "rank 2: not released"
    [ "$(daemons "$out" 5 | tr '\n' ';')" = "node1 2;" ] ||
        fail "rank 2: daemons (host, local ranks): $(daemons "$out" 5 | tr '\n' ';')"
    grep -q "^daemon $ns.s6 0 on node1 target $ns.s5 one " "$out" || fail "rank 2: the daemon's target is not one rank"
    # ranks 0 and 1 of s5 still wait: a tool reads that spawned job's data
    TOOL_PROBE_JOBDATA=1 timeout 30 "$probe" pid "$job" >"$work/probe.out" 2>&1 || fail "tool_probe: exit $?: $(cat "$work/probe.out")"
    grep -qx "size $ns.s5 3 2" "$work/probe.out" && grep -qx "peers $ns.s5 node0 0,1" "$work/probe.out" &&
        grep -qx "peers $ns.s5 node1 2" "$work/probe.out" || fail "the spawned job's data for a tool: $(cat "$work/probe.out")"

    launch cospawn 1 7 "$work/l7"
    grep -qx "ended $ns.s7" "$work/l7" || fail "cospawn: the job did not end: $(cat "$work/l7")"
    grep -q "^spawned $ns.s8" "$work/l7" && fail "cospawn: the spawn answered the daemons' namespace"
    await 10 "^hello from rank [0-2] of 3$" "$out" || fail "cospawn: not every rank released: $(cat "$out")"
    [ "$(daemons "$out" 7 | tr '\n' ';')" = "node0 0,1;node1 2;" ] ||
        fail "cospawn 1: daemons (host, local ranks): $(daemons "$out" 7 | tr '\n' ';')"
    grep -q "^error" "$out" && fail "$(grep '^error' "$out")"
    # exactly the hellos asked for: pernode 3, perproc 3, rank 2 one, cospawn 3
    [ "$(grep -c "^hello from rank" "$out")" = 10 ] || fail "hellos: $(grep "^hello" "$out" | sort | uniq -c)"

    # a rank (rank 0 of a job over both daemons) asks the same: its
    # daemon sends the request to pmixrun, which plans both jobs
    "$pmixrun" --nodes 2 -n 2 --timeout 60 "$launch" env cospawn 1 "$target" "$daemon" >"$work/rank.out" 2>&1 ||
        fail "a rank's cospawn: exit $?: $(cat "$work/rank.out")"
    rns=$(sed -n 's/^spawned \(.*\)\.s1$/\1/p' "$work/rank.out")
    [ -n "$rns" ] && grep -qx "ended $rns.s1" "$work/rank.out" || fail "a rank's cospawn: $(cat "$work/rank.out")"
    [ "$(grep "^daemon .* target $rns.s1 " "$work/rank.out" | awk '{ print $5, $10 }' | sort | tr '\n' ';')" = "node0 0,1;node1 2;" ] ||
        fail "a rank's cospawn: daemons (host, local ranks): $(cat "$work/rank.out")"
    [ "$(grep -c "^hello from rank" "$work/rank.out")" = 3 ] || fail "a rank's cospawn: hellos: $(cat "$work/rank.out")"

    # OpenPMIx's debugger over the daemons (unless the examples are not
    # here, or the library is built with AddressSanitizer: programs
    # compiled here would not load it)
    if [[ -f $examples/debugger.c && -f $examples/debuggerd.c &&
        $(ldd "$libdir/libpmix.so.2" 2>/dev/null) != *libasan* ]]; then
        mkdir -p "$work/ex"
        cp "$here/../foreign/openpmix-examples/examples.h" "$work/ex/"
        sed -e '/^    sleep(10);$/d' -e '/^    exit(0);$/d' "$examples/debuggerd.c" >"$work/ex/debuggerd_full.c"
        [ "$(diff "$examples/debuggerd.c" "$work/ex/debuggerd_full.c" | grep -c '^<')" -eq 2 ] ||
            fail "debuggerd.c has no early 'sleep(10); exit(0);' to take out"
        for p in debugger:$examples/debugger.c client:$examples/client.c debuggerd:$work/ex/debuggerd_full.c; do
            ${CC:-cc} -o "$work/ex/${p%%:*}" "${p#*:}" -I"$work/ex" -I"$incdir" -L"$libdir" -lpmix \
                -Wl,-rpath,"$libdir" || fail "cannot compile ${p%%:*}"
        done
        (cd "$work/ex" && timeout 40 ./debugger) >"$work/dbg.out" 2>&1
        st=$?
        [ $st -eq 0 ] || fail "debugger exited $st: $(cat "$work/dbg.out")"
        grep -q "^Tool ns $ns.tool.[0-9]* rank 0: Running$" "$work/dbg.out" ||
            fail "debugger did not attach to pmixrun: $(cat "$work/dbg.out")"
        for r in 0 1; do
            await 1 "^\[$ns.s10:$r\] Sending release$" "$out" || fail "debuggerd rank $r did not release: $(cat "$out")"
            await 1 "^Client ns $ns.s9 rank $r:PMIx_Finalize successfully completed$" "$out" ||
                fail "client rank $r was not released: $(cat "$out")"
        done
        grep -q "^\[$ns.s10:2\]" "$out" && fail "more than one debuggerd per node"
    fi
    kill -TERM "$job"
    wait "$job" 2>/dev/null
fi

# ---- attach: daemons for pmixrun's own job, held by --stop-in-init ----
if start_job "$work/att.out" --stop-in-init --nodes 2 -n 3 --timeout 60 "$target" hello; then
    out=$work/att.out
    launch attach 1 1 "$work/a1"
    wait "$job"
    st=$?
    [ "$st" = 0 ] || fail "attach: the job exited $st: $(cat "$out")"
    [ "$(grep "^daemon .* target $ns all " "$out" | awk '{ print $5, $10 }' | sort | tr '\n' ';')" = "node0 0,1;node1 2;" ] ||
        fail "attach: daemons (host, local ranks): $(cat "$out")"
    [ "$(grep -c "^hello from rank [0-2] of 3$" "$out")" = 3 ] || fail "attach: not every rank released: $(cat "$out")"
fi

# ---- one node ----
if start_job "$work/n1.out" -n 1 --timeout 60 sleep 30; then
    out=$work/n1.out
    launch pernode 2 1 "$work/m1"
    await 3 "^hello from rank [0-2] of 3$" "$out" || fail "one node, pernode: not every rank released: $(cat "$out")"
    [ "$(daemons "$out" 1 | tr '\n' ';')" = "$host 0,1,2;$host 0,1,2;" ] ||
        fail "one node, pernode 2: $(daemons "$out" 1 | tr '\n' ';')"
    launch cospawn 1 3 "$work/m3"
    await 6 "^hello from rank [0-2] of 3$" "$out" || fail "one node, cospawn: not every rank released: $(cat "$out")"
    [ "$(daemons "$out" 3 | tr '\n' ';')" = "$host 0,1,2;" ] ||
        fail "one node, cospawn 1: $(daemons "$out" 3 | tr '\n' ';')"
    kill -TERM "$job"
    wait "$job" 2>/dev/null
fi

[ "$failures" -eq 0 ] && echo "dbg_daemons.sh: all checks passed"
exit $((failures > 0))
