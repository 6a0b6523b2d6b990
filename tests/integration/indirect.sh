#!/bin/bash
# indirect.sh - indirect launch (docs/user-guide.md, "Indirect launch"): a
# debugger front end written against the Standard alone (tests/progs/
# indirect.c) starts pmixrun itself with PMIx_Spawn and
# PMIX_LAUNCHER_RNDZ_URI; pmixrun connects back, announces itself, is
# released, starts the job stopped in PMIx_Init (the debugger's
# PMIX_LAUNCH_DIRECTIVES), says PMIX_LAUNCH_COMPLETE with the job's
# namespace, passes the debugger's release on to the ranks and reports the
# job's end.
#
#   indirect.sh INDIRECT PMIXRUN DEBUG_TARGET one|nodes2|fork
#
# one:    pmixrun -n 2 on one node; the debugger's directory is private
#         (0700) while it runs; a pmixrun whose PMIX_LAUNCHER_RNDZ_URI
#         leads nowhere says so and fails at once, and starts nothing; a
#         job whose ranks fail to start ends the debugger's wait at once.
# nodes2: pmixrun --nodes 2 -n 4 (the ranks' release crosses the daemons).
# fork:   the debugger forks and execs `pmixrun --stop-in-init -n 2` itself,
#         with only PMIX_LAUNCHER_RNDZ_URI (no job data: pmixrun's option
#         holds the job).
set -u

[ $# -eq 4 ] || { echo "usage: indirect.sh INDIRECT PMIXRUN DEBUG_TARGET one|nodes2|fork" >&2; exit 2; }
indirect=$1
pmixrun=$2
target=$3
mode=$4

. "$(dirname "$0")/harness.sh"
harness_init indirect
export TMPDIR=$work
unset PMIX_SERVER_URI PMIX_NAMESPACE PMIX_RANK PMIX_SERVER_TMPDIR PMIX_SYSTEM_TMPDIR \
    PMIX_LAUNCHER_RNDZ_URI

dbgargs=()
launcher_name=spawn.1
case $mode in
one) args=(-n 2) n=2 ;;
nodes2) args=(--nodes 2 -n 4) n=4 ;;
fork) args=(--stop-in-init -n 2) n=2 dbgargs=(--fork) launcher_name=tool.1 ;;
*) echo "indirect.sh: unknown mode $mode" >&2; exit 2 ;;
esac

out=$work/indirect.out
"$indirect" "${dbgargs[@]}" "$pmixrun" -x "INDIRECT_MARK=$marker" "${args[@]}" --timeout 60 \
    "$target" hello >"$out" 2>"$work/indirect.err" &
dbg=$!
pids_to_kill="$pids_to_kill $dbg"

if [ "$mode" = one ]; then
    # while the launcher is held: the debugger's server directory is its own
    for _ in $(seq 100); do
        grep -q "^launcher ready" "$out" && break
        sleep 0.1
    done
    dir=$(ls -d "$work"/pmix-tool."$dbg" 2>/dev/null)
    [ -n "$dir" ] || fail "no server directory pmix-tool.$dbg: $(ls "$work")"
    [ -n "$dir" ] && { [ "$(stat -c %a "$dir")" = 700 ] || fail "$dir has mode $(stat -c %a "$dir")"; }
fi

wait "$dbg"
rc=$?
[ "$rc" = 0 ] || fail "indirect exited $rc: $(cat "$out" "$work/indirect.err")"
ns=$(sed -n 's/^launch complete \(.*\)$/\1/p' "$out")
host=$(hostname)
case $ns in
pmixrun.$host.[0-9]*) ;;
*) fail "no launch complete with pmixrun's namespace: $(cat "$out")" ;;
esac
grep -q "^launcher ready pmix\.tool\.$host\.$dbg\.$launcher_name 0$" "$out" ||
    fail "the launcher did not announce itself under the name the debugger gave: $(cat "$out")"
# The job was held in PMIx_Init until the debugger released it: every
# hello comes after "releasing", none before.
rel=$(grep -n "^releasing $ns$" "$out" | cut -d: -f1)
[ -n "$rel" ] || fail "no releasing line: $(cat "$out")"
before=$(head -n "${rel:-0}" "$out" | grep -c "^hello from rank")
after=$(grep -c "^hello from rank [0-9]* of $n$" "$out")
[ "$before" = 0 ] || fail "$before ranks ran before the release: $(cat "$out")"
[ "$after" = "$n" ] || fail "not $n ranks ran after the release: $(cat "$out" "$work/indirect.err")"
grep -q "^job end $ns exit 0$" "$out" || fail "no job end for $ns: $(cat "$out")"
if [ "$mode" = one ]; then
    # nothing of the run is left (pmixrun may still be exiting: a sanitizer
    # build checks for leaks at exit)
    for _ in $(seq 100); do
        pgrep -f -- "$marker" >/dev/null || break
        sleep 0.1
    done
    pgrep -f -- "$marker" >/dev/null && fail "processes left: $(pgrep -af -- "$marker")"

    # A pmixrun whose debugger is not there: a message, exit non-zero, no rank.
    start=$(date +%s)
    PMIX_LAUNCHER_RNDZ_URI=unix:$work/nowhere/pmix.sock "$pmixrun" -n 1 "$target" hello \
        >"$work/lost.out" 2>&1
    lrc=$?
    [ "$lrc" != 0 ] || fail "pmixrun with an unreachable debugger exited 0"
    grep -q "cannot reach the debugger at unix:$work/nowhere/pmix.sock" "$work/lost.out" ||
        fail "no message for an unreachable debugger: $(cat "$work/lost.out")"
    grep -q "^hello" "$work/lost.out" && fail "a rank ran without its debugger"
    [ $(($(date +%s) - start)) -le 15 ] || fail "an unreachable debugger took more than 15 s"

    # A job that fails to start: the debugger hears its end at once,
    # without PMIX_LAUNCH_COMPLETE, with pmixrun's exit status.
    start=$(date +%s)
    "$indirect" "$pmixrun" -x "INDIRECT_MARK=$marker" -n 2 "$target" bogus \
        >"$work/fail.out" 2>"$work/fail.err"
    frc=$?
    [ "$frc" = 1 ] || fail "a failed launch: indirect exited $frc: $(cat "$work/fail.out")"
    grep -q "^job end pmixrun\.$host\.[0-9]* exit 2$" "$work/fail.out" &&
        grep -q "^error the launch PMIX_ERR_JOB_FAILED_TO_LAUNCH$" "$work/fail.out" ||
        fail "a failed launch: $(cat "$work/fail.out" "$work/fail.err")"
    grep -q "^launch complete" "$work/fail.out" && fail "a failed launch said launch complete"
    [ $(($(date +%s) - start)) -le 15 ] || fail "a failed launch took more than 15 s"
fi

[ "$failures" = 0 ] && echo "indirect.sh $mode: ok"
exit $((failures > 0))
