#!/bin/bash
# debug.sh - debugging a running pmixrun job from a tool (docs/user-guide.md,
# "Tools"): pmixstack on a 4-rank job hung in a fence prints the three
# waiting ranks in one merged stack and the sleeping one in another;
# `pmixrun --stop-in-init` holds every rank in PMIx_Init until a tool
# (debug_tool) sends PMIX_DEBUGGER_RELEASE, to one rank, then to all; a
# tool's PMIx_IOF_pull gets every rank's stdout and stderr (by callback,
# and written by the library with PMIX_IOF_TAG_OUTPUT).
#
#   debug.sh PMIXRUN PMIXSTACK DEBUG_TARGET DEBUG_TOOL PMIXPS
#
# The pmixstack part needs gdb and the right to attach to our own processes
# (ptrace); without them it is skipped (exit 77 after the other parts).
set -u

[ $# -eq 5 ] || { echo "usage: debug.sh PMIXRUN PMIXSTACK DEBUG_TARGET DEBUG_TOOL PMIXPS" >&2; exit 2; }
pmixrun=$1
pmixstack=$2
target=$3
dtool=$4
pmixps=$5

. "$(dirname "$0")/harness.sh"
harness_init debug
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
    for _ in $(seq 100); do
        ls "$work"/pmixrun.*.$job.*/pmix.$host.tool.$job >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    fail "pmixrun $* made no tool rendezvous file: $(cat "$out")"
    return 1
}

# ---- pmixstack --help, and usage errors ----
"$pmixstack" --help | grep -q "^Usage: pmixstack" || fail "pmixstack --help"
"$pmixstack" --pid x >/dev/null 2>&1; [ $? = 2 ] || fail "pmixstack --pid x did not exit 2"

# ---- stop in init, released by a tool: rank 0 first, then all ----
# hellos: how many ranks have printed their line.
hellos() { grep -c "^hello from rank" "$work/stop.out"; }
if start_job "$work/stop.out" --stop-in-init -n 4 --timeout 120 "$target" hello; then
    # every rank connected (in PMIx_Init), none past it
    for _ in $(seq 100); do
        [ "$("$pmixps" --pid "$job" 2>/dev/null | grep -c ' connected ')" = 4 ] && break
        sleep 0.1
    done
    [ "$("$pmixps" --pid "$job" | grep -c ' connected ')" = 4 ] || fail "stop-in-init: not 4 ranks connected: $("$pmixps" --pid "$job" 2>&1)"
    sleep 1
    [ "$(hellos)" = 0 ] || fail "stop-in-init: ranks went past PMIx_Init unreleased: $(cat "$work/stop.out")"
    if command -v gdb >/dev/null; then
        timeout 120 "$pmixstack" --pid "$job" >"$work/stop.stack" 2>&1
        grep -q "^ranks 0-3: main > PMIx_Init > " "$work/stop.stack" || fail "stop-in-init: pmixstack does not show ranks 0-3 in PMIx_Init: $(cat "$work/stop.stack")"
    fi
    timeout 30 "$dtool" release "$job" 0 >"$work/rel0.out" 2>&1 || fail "debug_tool release rank 0: exit $?: $(cat "$work/rel0.out")"
    grep -q "^released pmixrun\.$host\.$job 0$" "$work/rel0.out" || fail "debug_tool release 0: $(cat "$work/rel0.out")"
    for _ in $(seq 100); do
        [ "$(hellos)" = 1 ] && break
        sleep 0.1
    done
    sleep 0.5
    [ "$(hellos)" = 1 ] && grep -q "^hello from rank 0 of 4$" "$work/stop.out" || fail "stop-in-init: released rank 0 only, got: $(cat "$work/stop.out")"
    timeout 30 "$dtool" release "$job" >"$work/rel.out" 2>&1 || fail "debug_tool release: exit $?: $(cat "$work/rel.out")"
    wait "$job"
    rc=$?
    [ "$rc" = 0 ] || fail "stop-in-init job: exit $rc: $(cat "$work/stop.out")"
    [ "$(hellos)" = 4 ] || fail "stop-in-init: not every rank ran after the release: $(cat "$work/stop.out")"
fi
# with several nodes: nodes_tool.sh (nodes2.tools.n4)

# connected N: wait until pmixps shows N ranks of $job in PMIx_Init (a
# release sent before a rank waits is not kept: user-guide.md)
connected() {
    for _ in $(seq 150); do
        [ "$("$pmixps" --pid "$job" 2>/dev/null | grep -c ' connected ')" = "$1" ] && return 0
        sleep 0.1
    done
    fail "not $1 ranks connected: $("$pmixps" --pid "$job" 2>&1)"
}

# ---- output to a tool: PMIx_IOF_pull of every rank's stdout and stderr ----
# The job stops in init so that the tool pulls before any output is made.
if start_job "$work/iof.out" --stop-in-init -n 4 --timeout 120 "$target" hello; then
    connected 4
    timeout 60 "$dtool" iof "$job" >"$work/iof.tool" 2>&1 || fail "debug_tool iof: exit $?: $(cat "$work/iof.tool")"
    for r in 0 1 2 3; do
        grep -q "^iof $r stdout: hello from rank $r of 4$" "$work/iof.tool" || fail "IOF: no stdout of rank $r: $(cat "$work/iof.tool")"
        grep -q "^iof $r stderr: note from rank $r$" "$work/iof.tool" || fail "IOF: no stderr of rank $r: $(cat "$work/iof.tool")"
    done
    grep -q "^lines 8$" "$work/iof.tool" || fail "IOF: not exactly 8 lines: $(cat "$work/iof.tool")"
    grep -q "^other namespace PMIX_ERR_NOT_FOUND$" "$work/iof.tool" || fail "IOF: a pull of another namespace: $(grep '^other' "$work/iof.tool")"
    grep -q "^no channel PMIX_ERR_BAD_PARAM$" "$work/iof.tool" || fail "IOF: a pull of no channel: $(grep '^no channel' "$work/iof.tool")"
    wait "$job"
    rc=$?
    [ "$rc" = 0 ] || fail "IOF job: exit $rc"
    [ "$(grep -c "^hello from rank" "$work/iof.out")" = 4 ] || fail "IOF: pmixrun's own output lost lines: $(cat "$work/iof.out")"
fi
# no callback, PMIX_IOF_TAG_OUTPUT: the library writes it, tagged
if start_job "$work/iof2.out" --stop-in-init -n 2 --timeout 120 "$target" hello; then
    connected 2
    timeout 60 "$dtool" iof "$job" tag >"$work/iof2.tool" 2>&1 || fail "debug_tool iof tag: exit $?: $(cat "$work/iof2.tool")"
    for r in 0 1; do
        grep -Fqx "[pmixrun.$host.$job,$r]<stdout>: hello from rank $r of 2" "$work/iof2.tool" || fail "IOF tagged: no stdout of rank $r: $(cat "$work/iof2.tool")"
        grep -Fqx "[pmixrun.$host.$job,$r]<stderr>: note from rank $r" "$work/iof2.tool" || fail "IOF tagged: no stderr of rank $r: $(cat "$work/iof2.tool")"
    done
    wait "$job"
fi

# ---- pmixstack: a job hung in a fence ----
if ! command -v gdb >/dev/null; then
    echo "debug.sh: SKIP pmixstack: gdb is not installed"
    [ "$failures" -gt 0 ] && exit 1
    exit 77
fi
sleep 100 &
probe=$!
if ! gdb -nx -batch -p $probe -ex bt </dev/null 2>&1 | grep -q "^#0"; then
    kill $probe
    echo "debug.sh: SKIP pmixstack: gdb cannot attach to our processes here (ptrace_scope?)"
    [ "$failures" -gt 0 ] && exit 1
    exit 77
fi
kill $probe
if start_job "$work/hang.out" -n 4 --timeout 120 "$target" hang; then
    # the three waiting ranks reach the fence: wait for their stacks to say so
    for _ in $(seq 20); do
        timeout 120 "$pmixstack" --pid "$job" >"$work/stack.out" 2>"$work/stack.err"
        rc=$?
        grep -q "^ranks 0-2: main > PMIx_Fence > " "$work/stack.out" && break
        sleep 0.5
    done
    [ "$rc" = 0 ] || fail "pmixstack: exit $rc: $(cat "$work/stack.err")"
    grep -q "^pmixrun\.$host\.$job: 4 processes$" "$work/stack.out" || fail "pmixstack: no job line: $(cat "$work/stack.out")"
    grep -q "^ranks 0-2: main > PMIx_Fence > " "$work/stack.out" || fail "pmixstack: ranks 0-2 not merged in the fence: $(cat "$work/stack.out")"
    grep -Eq "^rank 3: main > [^ ]*sleep" "$work/stack.out" || fail "pmixstack: rank 3 not in sleep: $(cat "$work/stack.out")"
    [ "$(grep -c '^rank' "$work/stack.out")" = 2 ] || fail "pmixstack: not exactly two stacks: $(cat "$work/stack.out")"

    timeout 120 "$pmixstack" --nspace "pmixrun.$host.$job" --json >"$work/stack.json" 2>&1 || fail "pmixstack --json: exit $?"
    if command -v python3 >/dev/null; then
        python3 - "$work/stack.json" <<'PY' || fail "pmixstack --json: $(cat "$work/stack.json")"
import json, sys
d = json.load(open(sys.argv[1]))
st = {tuple(s["ranks"]): s["frames"] for s in d["jobs"][0]["stacks"]}
assert st[(0, 1, 2)][:2] == ["main", "PMIx_Fence"], st
assert "sleep" in st[(3,)][1], st
assert d["jobs"][0]["nprocs"] == 4 and d["jobs"][0]["remote_hosts"] == [], d
PY
    fi
    kill -TERM "$job"
    wait "$job" 2>/dev/null
fi
timeout 30 "$pmixstack" --pid "$job" >/dev/null 2>&1 && fail "pmixstack on a pmixrun that is gone succeeded"

if [ "$failures" -gt 0 ]; then
    echo "debug.sh: $failures failure(s)"
    exit 1
fi
echo "debug.sh: all checks passed"
exit 0
