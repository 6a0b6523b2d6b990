#!/bin/bash
# nodes_tool.sh - tools against a job over daemons (pmixrun --nodes 2,
# docs/pmixd.md "Tools over daemons"): a tool attached by pmixrun's pid
# reads every rank's host, pid, executable and state, the pids checked
# against /proc (the processes the daemons forked, with the job's
# namespace and the rank in their environment), and each rank's host
# against the host name its process sees; the local process table of a
# host; pmixps, also with a daemon that does not answer (its deadline);
# `--stop-in-init` held until a tool's PMIX_DEBUGGER_RELEASE,
# which reaches the ranks of every daemon (one rank first, then all);
# a tool's PMIx_IOF_pull gets the stdout and stderr of the ranks of both
# daemons, each line once (by callback, and written by the library with
# PMIX_IOF_TAG_OUTPUT);
# pmixstack on a job hung in a fence prints one merged stack of ranks 0-3.
#
#   nodes_tool.sh PMIXRUN TOOL_PROBE PMIXPS PMIXSTACK DEBUG_TARGET DEBUG_TOOL
#
# The pmixstack part needs gdb and the right to attach (ptrace); without
# them it is skipped (exit 77 after the other parts).
set -u

[ $# -eq 6 ] || { echo "usage: nodes_tool.sh PMIXRUN TOOL_PROBE PMIXPS PMIXSTACK DEBUG_TARGET DEBUG_TOOL" >&2; exit 2; }
pmixrun=$1
probe=$2
pmixps=$3
pmixstack=$4
target=$5
dtool=$6

. "$(dirname "$0")/harness.sh"
harness_init nodes_tool
export TMPDIR=$work
unset PMIX_SERVER_URI PMIX_NAMESPACE PMIX_RANK PMIX_SERVER_TMPDIR PMIX_SYSTEM_TMPDIR
host=$(hostname)

# start_job OUT ARGS...: pmixrun ARGS in the background, $job its pid, once
# its tool rendezvous file is there.
start_job() {
    local out=$1
    shift
    "$pmixrun" "$@" >"$out" 2>&1 &
    job=$!
    pids_to_kill="$pids_to_kill $job"
    nspace="pmixrun.$host.$job"
    for _ in $(seq 100); do
        ls "$work"/pmixrun.*.$job.*/pmix.$host.tool.$job >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    fail "pmixrun $* made no tool rendezvous file: $(cat "$out")"
    return 1
}

# ranks_of NSPACE: "rank pid" of every process whose environment names the
# job, sorted by rank (what the daemons forked, found through /proc).
ranks_of() {
    local p env
    for p in $(pgrep -x "${2:-sleep}"); do
        env=$(tr '\0' '\n' </proc/$p/environ 2>/dev/null) || continue
        echo "$env" | grep -qx "PMIX_NAMESPACE=$1" || continue
        echo "$(echo "$env" | sed -n 's/^PMIX_RANK=//p') $p"
    done | sort -n
}

# host_of PID: the host name process PID sees (its UTS namespace: under
# --isolate host its virtual node's name).
host_of() {
    if [ "$(id -u)" = 0 ] && command -v nsenter >/dev/null; then
        nsenter -t "$1" -u hostname
    else
        hostname
    fi
}

# ---- the process table of pmixrun --nodes 2 -n 4, by pmixrun's pid ----
if start_job "$work/job.out" --nodes 2 -n 4 --timeout 60 sleep 50; then
    for _ in $(seq 100); do
        [ "$(ranks_of "$nspace" | wc -l)" = 4 ] && break
        sleep 0.1
    done
    expect=$(ranks_of "$nspace")
    [ "$(echo "$expect" | wc -l)" = 4 ] || fail "/proc shows not 4 ranks: $expect"
    timeout 30 "$probe" pid "$job" >"$work/probe.out" 2>&1 || fail "tool_probe pid: exit $?: $(cat "$work/probe.out")"
    grep -q "^init ok $nspace\.tool\.[0-9]* 0$" "$work/probe.out" || fail "no tool name of the job: $(head -3 "$work/probe.out")"
    grep -q "^job $nspace$" "$work/probe.out" || fail "PMIX_QUERY_NAMESPACES lacks $nspace"
    grep -q "^error" "$work/probe.out" && fail "$(grep '^error' "$work/probe.out")"
    got=$(awk '$1 == "proc" { print $2, $4 }' "$work/probe.out" | sort -n)
    [ "$got" = "$expect" ] || fail "proc table (rank pid) differs from /proc:
$got
--- /proc:
$expect"
    hosts=""
    while read -r rank pid; do
        h=$(host_of "$pid")
        hosts="$hosts $h"
        line=$(awk -v r="$rank" '$1 == "proc" && $2 == r' "$work/probe.out")
        set -- $line
        [ "${3:-}" = "$h" ] || fail "rank $rank: host '${3:-}', its process sees '$h'"
        [ "${5:-}" = PMIX_PROC_STATE_RUNNING ] || fail "rank $rank: state '${5:-}', want PMIX_PROC_STATE_RUNNING"
        [ "${7:-}" = "$(readlink /proc/$pid/exe)" ] || fail "rank $rank: executable '${7:-}', /proc says '$(readlink /proc/$pid/exe)'"
    done <<<"$expect"
    # the job's data, as a rank reads it: pmixrun's own server has the
    # namespace registered (size, each node's peers, each rank's host)
    TOOL_PROBE_JOBDATA=1 timeout 30 "$probe" pid "$job" >"$work/jobdata.out" 2>&1 || fail "tool_probe job data: exit $?: $(cat "$work/jobdata.out")"
    grep -q "^error" "$work/jobdata.out" && fail "job data: $(grep '^error' "$work/jobdata.out")"
    grep -qx "size $nspace 4 2" "$work/jobdata.out" || fail "job data: PMIX_JOB_SIZE / PMIX_NUM_NODES: $(grep '^size' "$work/jobdata.out")"
    grep -qx "peers $nspace node0 0,1" "$work/jobdata.out" && grep -qx "peers $nspace node1 2,3" "$work/jobdata.out" ||
        fail "job data: PMIX_LOCAL_PEERS of the nodes: $(grep '^peers' "$work/jobdata.out")"
    [ "$(grep "^rankhost $nspace " "$work/jobdata.out" | awk '{ print $3, $4 }' | tr '\n' ' ')" = "0 node0 1 node0 2 node1 3 node1 " ] ||
        fail "job data: the ranks' PMIX_HOSTNAME: $(grep '^rankhost' "$work/jobdata.out")"
    # the local table of a host: the ranks whose process sees that host name
    h1=$(host_of "$(echo "$expect" | awk '$1 == 3 { print $2 }')")
    TOOL_PROBE_HOST=$h1 timeout 30 "$probe" pid "$job" >"$work/local.out" 2>&1 || fail "tool_probe local: exit $?"
    want=$(awk -v h="$h1" '$1 == "proc" && $3 == h { print $2, $4 }' "$work/probe.out" | sort -n)
    gotl=$(awk '$1 == "local" { print $2, $4 }' "$work/local.out" | sort -n)
    [ -n "$want" ] && [ "$gotl" = "$want" ] || fail "local proc table of $h1: '$gotl', want '$want'"
    TOOL_PROBE_HOST=no-such-host timeout 30 "$probe" pid "$job" >"$work/local0.out" 2>&1 || fail "tool_probe local (none): exit $?"
    grep -q "^local" "$work/local0.out" && fail "the local table of a host with no rank is not empty"
    # a pull over daemons is accepted (what it gets: the stop-in-init part);
    # the first, with a daemon stopped, waits for it 3 s, not for its end
    d1=$(pgrep -P "$job" -f -- "--node 1 " | head -1)
    if [ -n "$d1" ]; then
        kill -STOP "$d1"
        t0=$(date +%s.%N)
        TOOL_PROBE_PULL=only timeout 30 "$probe" pid "$job" >"$work/pull0.out" 2>&1
        t1=$(date +%s.%N)
        kill -CONT "$d1"
        grep -q "^pull $nspace PMIX_SUCCESS$" "$work/pull0.out" || fail "PMIx_IOF_pull over daemons, one stopped: $(cat "$work/pull0.out")"
        awk -v a="$t0" -v b="$t1" 'BEGIN { exit !(b - a >= 2.5 && b - a < 8) }' || fail "PMIx_IOF_pull with a stopped daemon took $(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }') s, want about 3"
    else
        fail "no daemon of node 1 among pmixrun's children"
    fi
    TOOL_PROBE_PULL=1 timeout 30 "$probe" pid "$job" >"$work/pull.out" 2>&1
    grep -q "^pull $nspace PMIX_SUCCESS$" "$work/pull.out" || fail "PMIx_IOF_pull over daemons: $(grep '^pull' "$work/pull.out")"
    # pmixps: every rank with its pid and host
    timeout 30 "$pmixps" --pid "$job" >"$work/ps.out" 2>&1 || fail "pmixps: exit $?: $(cat "$work/ps.out")"
    while read -r rank pid; do
        grep -Eq "^ +$rank  $(host_of "$pid") +$pid  running " "$work/ps.out" || fail "pmixps does not list rank $rank pid $pid: $(cat "$work/ps.out")"
    done <<<"$expect"
    # a daemon that does not answer (stopped, for less than the heartbeat's
    # 10 s): the table comes at its deadline (3 s), from the others
    d1=$(pgrep -P "$job" -f -- "--node 1 " | head -1)
    if [ -n "$d1" ]; then
        kill -STOP "$d1"
        t0=$(date +%s.%N)
        timeout 30 "$pmixps" --pid "$job" >"$work/ps.stopped" 2>&1 || fail "pmixps with a stopped daemon: exit $?: $(cat "$work/ps.stopped")"
        t1=$(date +%s.%N)
        kill -CONT "$d1"
        awk -v a="$t0" -v b="$t1" 'BEGIN { exit !(b - a >= 2.5 && b - a < 8) }' || fail "pmixps with a stopped daemon took $(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }') s, want about 3"
        [ "$(grep -Ec '^ +[0-3]  ' "$work/ps.stopped")" = 4 ] || fail "pmixps with a stopped daemon: $(cat "$work/ps.stopped")"
    else
        fail "no daemon of node 1 among pmixrun's children"
    fi
    # a tool's PMIx_Job_control kill of rank 3 (node1) reaches its daemon
    pid3=$(echo "$expect" | awk '$1 == 3 { print $2 }')
    TOOL_PROBE_KILL=3 timeout 30 "$probe" pid "$job" >"$work/kill.out" 2>&1
    grep -q "^kill $nspace 3 PMIX_SUCCESS$" "$work/kill.out" || fail "PMIx_Job_control kill over daemons: $(grep '^kill' "$work/kill.out")"
    for _ in $(seq 50); do
        [ -d /proc/$pid3 ] || break
        sleep 0.1
    done
    [ -d /proc/$pid3 ] && fail "rank 3 (pid $pid3) lives on after a tool's kill"
    wait "$job" 2>/dev/null
    rc=$?
    [ "$rc" = 137 ] || grep -q "rank 3" "$work/job.out" || fail "the killed rank did not end the job: exit $rc: $(cat "$work/job.out")"
fi

# ---- --stop-in-init over daemons: a tool's release reaches every node ----
hellos() { grep -c "^hello from rank" "$work/stop.out"; }
if start_job "$work/stop.out" --stop-in-init --nodes 2 -n 4 --timeout 60 "$target" hello; then
    for _ in $(seq 100); do
        [ "$("$pmixps" --pid "$job" 2>/dev/null | grep -c ' connected ')" = 4 ] && break
        sleep 0.1
    done
    [ "$("$pmixps" --pid "$job" | grep -c ' connected ')" = 4 ] || fail "stop-in-init: not 4 ranks connected: $("$pmixps" --pid "$job" 2>&1)"
    sleep 0.5
    [ "$(hellos)" = 0 ] || fail "stop-in-init: ranks went past PMIx_Init unreleased: $(cat "$work/stop.out")"
    # rank 3 runs on node1: the release crosses to the second daemon
    timeout 30 "$dtool" release "$job" 3 >"$work/rel3.out" 2>&1 || fail "debug_tool release 3: exit $?: $(cat "$work/rel3.out")"
    for _ in $(seq 50); do
        [ "$(hellos)" = 1 ] && break
        sleep 0.1
    done
    sleep 0.3
    [ "$(hellos)" = 1 ] && grep -q "^hello from rank 3 of 4$" "$work/stop.out" || fail "stop-in-init: released rank 3 only, got: $(cat "$work/stop.out")"
    timeout 30 "$dtool" release "$job" >"$work/rel.out" 2>&1 || fail "debug_tool release: exit $?: $(cat "$work/rel.out")"
    wait "$job"
    rc=$?
    [ "$rc" = 0 ] || fail "stop-in-init job: exit $rc: $(cat "$work/stop.out")"
    [ "$(hellos)" = 4 ] || fail "stop-in-init: not every rank ran after the release: $(cat "$work/stop.out")"
fi

# ---- output of every daemon's ranks to a tool's PMIx_IOF_pull ----
# The ranks wait in init so that the tool pulls before any output is made;
# each prints a line on stdout and one on stderr.
connected4() {
    for _ in $(seq 100); do
        [ "$("$pmixps" --pid "$job" 2>/dev/null | grep -c ' connected ')" = 4 ] && return 0
        sleep 0.1
    done
    fail "stop-in-init: not 4 ranks connected: $("$pmixps" --pid "$job" 2>&1)"
}
if start_job "$work/iof.out" --stop-in-init --nodes 2 -n 4 --timeout 60 "$target" hello; then
    connected4
    # a tool that failed released nothing: the job goes, not its timeout
    timeout 40 "$dtool" iof "$job" >"$work/iof.tool" 2>&1 || { fail "debug_tool iof over daemons: exit $?: $(cat "$work/iof.tool")"; kill "$job"; }
    for r in 0 1 2 3; do
        [ "$(grep -c "^iof $r stdout: hello from rank $r of 4$" "$work/iof.tool")" = 1 ] || fail "IOF over daemons: not one stdout line of rank $r: $(cat "$work/iof.tool")"
        [ "$(grep -c "^iof $r stderr: note from rank $r$" "$work/iof.tool")" = 1 ] || fail "IOF over daemons: not one stderr line of rank $r: $(cat "$work/iof.tool")"
    done
    grep -q "^lines 8$" "$work/iof.tool" || fail "IOF over daemons: not exactly 8 lines: $(cat "$work/iof.tool")"
    grep -q "^other namespace PMIX_ERR_NOT_FOUND$" "$work/iof.tool" || fail "IOF over daemons: a pull of another namespace: $(grep '^other' "$work/iof.tool")"
    wait "$job"
    rc=$?
    [ "$rc" = 0 ] || fail "IOF job over daemons: exit $rc: $(cat "$work/iof.out")"
    [ "$(grep -c "^hello from rank" "$work/iof.out")" = 4 ] || fail "IOF over daemons: pmixrun's own output lost lines: $(cat "$work/iof.out")"
fi
# no callback, PMIX_IOF_TAG_OUTPUT: the library writes it, tagged
if start_job "$work/iof2.out" --stop-in-init --nodes 2 -n 4 --timeout 60 "$target" hello; then
    connected4
    timeout 40 "$dtool" iof "$job" tag >"$work/iof2.tool" 2>&1 || { fail "debug_tool iof tag over daemons: exit $?: $(cat "$work/iof2.tool")"; kill "$job"; }
    for r in 0 1 2 3; do
        grep -Fqx "[$nspace,$r]<stdout>: hello from rank $r of 4" "$work/iof2.tool" || fail "IOF tagged over daemons: no stdout of rank $r: $(cat "$work/iof2.tool")"
        grep -Fqx "[$nspace,$r]<stderr>: note from rank $r" "$work/iof2.tool" || fail "IOF tagged over daemons: no stderr of rank $r: $(cat "$work/iof2.tool")"
    done
    wait "$job"
fi

# ---- pmixstack: a job over two daemons hung in a fence ----
if ! command -v gdb >/dev/null; then
    echo "nodes_tool.sh: SKIP pmixstack: gdb is not installed"
    [ "$failures" -gt 0 ] && exit 1
    exit 77
fi
sleep 100 &
sp=$!
if ! gdb -nx -batch -p $sp -ex bt </dev/null 2>&1 | grep -q "^#0"; then
    kill $sp
    echo "nodes_tool.sh: SKIP pmixstack: gdb cannot attach to our processes here (ptrace_scope?)"
    [ "$failures" -gt 0 ] && exit 1
    exit 77
fi
kill $sp
if start_job "$work/hang.out" --nodes 2 -n 4 --timeout 60 "$target" hangall; then
    for _ in $(seq 20); do
        timeout 60 "$pmixstack" --pid "$job" --timeout 20 >"$work/stack.out" 2>"$work/stack.err"
        rc=$?
        grep -q "^ranks 0-3: main > PMIx_Fence > " "$work/stack.out" && break
        sleep 0.5
    done
    [ "$rc" = 0 ] || fail "pmixstack: exit $rc: $(cat "$work/stack.err")"
    grep -q "^$nspace: 4 processes$" "$work/stack.out" || fail "pmixstack: no job line: $(cat "$work/stack.out")"
    grep -q "^ranks 0-3: main > PMIx_Fence > " "$work/stack.out" || fail "pmixstack: ranks 0-3 not merged in the fence: $(cat "$work/stack.out") $(cat "$work/stack.err")"
    [ "$(grep -c '^rank' "$work/stack.out")" = 1 ] || fail "pmixstack: not exactly one stack: $(cat "$work/stack.out")"
    timeout 60 "$pmixstack" --pid "$job" --json >"$work/stack.json" 2>&1 || fail "pmixstack --json: exit $?"
    if command -v python3 >/dev/null; then
        python3 - "$work/stack.json" <<'PY' || fail "pmixstack --json: $(cat "$work/stack.json")"
import json, sys
d = json.load(open(sys.argv[1]))
j = d["jobs"][0]
st = {tuple(s["ranks"]): s["frames"] for s in j["stacks"]}
assert list(st) == [(0, 1, 2, 3)] and st[(0, 1, 2, 3)][:2] == ["main", "PMIx_Fence"], st
assert j["nprocs"] == 4 and j["failed_ranks"] == [] and j["remote_hosts"] == [], j
PY
    fi
    kill -TERM "$job"
    wait "$job" 2>/dev/null
fi

if [ "$failures" -gt 0 ]; then
    echo "nodes_tool.sh: $failures failure(s)"
    exit 1
fi
echo "nodes_tool.sh: all checks passed"
exit 0
