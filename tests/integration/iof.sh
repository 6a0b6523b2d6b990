#!/bin/bash
# iof.sh - standard input and output between tools and jobs
# (docs/user-guide.md, "Tools"): a tool spawns two `cat` ranks with
# PMIX_STDIN_TGT, PMIX_FWD_STDOUT and PMIX_IOF_TAG_OUTPUT, pushes a line to
# both, a line to rank 1 and the end of input (PMIx_IOF_push), and sees
# each line come back once, tagged, from the library (no pull) or by its
# pull's callback (the pull takes it: nothing tagged), and the job end
# (cat read end of file); a push to pmixrun's own job is refused. And
# pmixrun's own stdin: `echo hi | pmixrun -n 2 cat` prints hi once, with
# --nodes 2 too (through pmixd).
#
#   iof.sh PMIXRUN IOF_TOOL
set -u

[ $# -eq 2 ] || { echo "usage: iof.sh PMIXRUN IOF_TOOL" >&2; exit 2; }
pmixrun=$1
itool=$2

. "$(dirname "$0")/harness.sh"
harness_init iof
export TMPDIR=$work
unset PMIX_SERVER_URI PMIX_NAMESPACE PMIX_RANK PMIX_SERVER_TMPDIR PMIX_SYSTEM_TMPDIR
host=$(hostname)
cat=$(command -v cat)

# ---- pmixrun's own stdin goes to rank 0 only ----
out=$(echo hi | timeout 20 "$pmixrun" -n 2 "$cat" 2>&1)
[ "$out" = "hi" ] || fail "echo hi | pmixrun -n 2 cat printed '$out', not hi once"
out=$(echo hi | timeout 20 "$pmixrun" --nodes 2 -n 2 "$cat" 2>&1)
[ "$out" = "hi" ] || fail "echo hi | pmixrun --nodes 2 -n 2 cat printed '$out', not hi once"

# ---- a tool's input and output ----
"$pmixrun" -n 1 --timeout 60 sh -c 'sleep 50' "$marker" >"$work/job.out" 2>&1 &
job=$!
pids_to_kill="$job"
for _ in $(seq 100); do
    ls "$work"/pmixrun.*.$job.*/pmix.$host.tool.$job >/dev/null 2>&1 && break
    sleep 0.1
done
ls "$work"/pmixrun.*.$job.*/pmix.$host.tool.$job >/dev/null 2>&1 ||
    fail "pmixrun made no tool rendezvous file: $(cat "$work/job.out")"

# count PATTERN FILE: how many lines of FILE match PATTERN
count() { grep -c -- "$1" "$2"; }

timeout 30 "$itool" sink "$job" "$cat" >"$work/sink.out" 2>&1
rc=$?
[ $rc = 0 ] || fail "iof_tool sink exited $rc: $(cat "$work/sink.out")"
grep -q "^push to pmixrun\.[^ ]*: PMIX_ERR_NOT_FOUND$" "$work/sink.out" ||
    fail "a push to pmixrun's own job was not refused: $(cat "$work/sink.out")"
grep -q "^spawn support lists pmix.fwd.stdout: yes, pmix.stdin: yes$" "$work/sink.out" ||
    fail "PMIX_QUERY_SPAWN_SUPPORT does not list PMIX_FWD_STDOUT and PMIX_STDIN_TGT"
ns=$(sed -n 's/^spawned //p' "$work/sink.out")
[ "$(count "^\[$ns,0\]<stdout>: hello$" "$work/sink.out")" = 1 ] &&
    [ "$(count "^\[$ns,1\]<stdout>: hello$" "$work/sink.out")" = 1 ] &&
    [ "$(count "^\[$ns,1\]<stdout>: only1$" "$work/sink.out")" = 1 ] &&
    [ "$(count "only1" "$work/sink.out")" = 1 ] ||
    fail "the spawned job's output did not come to the tool, tagged, once: $(cat "$work/sink.out")"
grep -q "^job end seen$" "$work/sink.out" || fail "the end of input did not end cat"

timeout 30 "$itool" pull "$job" "$cat" >"$work/pull.out" 2>&1
rc=$?
[ $rc = 0 ] || fail "iof_tool pull exited $rc: $(cat "$work/pull.out")"
[ "$(count "^iof 0: hello$" "$work/pull.out")" = 1 ] &&
    [ "$(count "^iof 1: hello$" "$work/pull.out")" = 1 ] &&
    [ "$(count "^iof 1: only1$" "$work/pull.out")" = 1 ] ||
    fail "the pull's callback did not get each line once: $(cat "$work/pull.out")"
[ "$(count "<stdout>" "$work/pull.out")" = 0 ] ||
    fail "the library wrote output a pull took: $(cat "$work/pull.out")"
# pmixrun forwards the spawned jobs' output to its own stdout too
[ "$(count "^only1$" "$work/job.out")" = 2 ] || fail "pmixrun's output: $(cat "$work/job.out")"

exit $((failures > 0))
