#!/bin/bash
# slurm_suite.sh - `pmixsim suite DIR --slurm` on a two-node Slurm cluster
# of this machine: the scenarios run as one job array, and what the suite
# gathers (counts, JSON, JUnit XML, plots) is what the local suite makes.
#
#   slurm_suite.sh PMIXSIM SCENARIO...
#
# The cluster is slurm.sh's, made by slurm_cluster.sh (its own munged,
# slurmctld and two slurmd "nodes" n1 and n2 on 127.0.0.1 with free ports,
# everything in a temporary directory, stopped by pid on every exit path),
# without the PMIx plugin: the tasks are plain programs. The scenario directory is the
# given files plus a copy of the first with an expectation that cannot
# hold, so that a failure must travel back from a task.
# Exits 0 when every check holds, 1 otherwise, 77 (skipped, with the
# reason) without root or Slurm and munge. PMIXLAB_SLURM_KEEP=1 keeps the
# directory (its logs) for a look afterwards.
set -u
[ $# -ge 2 ] || {
    echo "usage: slurm_suite.sh PMIXSIM SCENARIO..." >&2
    exit 2
}
sim=$(readlink -f "$1")
shift
skip() {
    echo "slurm_suite.sh: skipped: $*"
    exit 77
}
[ "$(id -u)" = 0 ] || skip "running slurmd needs root"
for c in slurmctld slurmd sbatch sinfo munged scancel python3; do
    command -v $c >/dev/null 2>&1 || skip "no $c (slurm-wlm, munge, python3)"
done

. "$(dirname "$0")/slurm_cluster.sh"
slurm_cluster_init slurm_suite
slurm_cluster_config pmixlabsuite 2
mkdir -p "$work"/{scn,local,slurm}
slurm_cluster_start
slurm_cluster_wait_idle || exit 1

for f in "$@"; do cp "$f" "$work/scn/"; done
first=$(basename "$1" .scn)
sed 's/^fences = .*/fences = 1000/' "$1" >"$work/scn/zz-$first-wrong.scn"
grep -q "^fences = 1000" "$work/scn/zz-$first-wrong.scn" || fail "no fences line to break in $1"

# the same suite, locally and as a Slurm job array (from the work
# directory, which both "nodes" share)
(cd "$work/local" && timeout 60 "$sim" suite "$work/scn" --json r.json --junit j.xml \
    --plot plots >out.txt 2>&1)
lrc=$?
(cd "$work/slurm" && PMIXSIM_SLURM_TIMEOUT=90 timeout 120 "$sim" suite "$work/scn" --slurm \
    --json r.json --junit j.xml --plot plots >out.txt 2>&1)
src=$?
cat "$work/slurm/out.txt"
[ $lrc = 1 ] || fail "the local suite exited $lrc, not 1 (one scenario fails)"
[ $src = $lrc ] || fail "the Slurm suite exited $src, the local one $lrc"
grep -q "as a Slurm job array" "$work/slurm/out.txt" || fail "no job array was submitted"
lsum=$(grep "^suite " "$work/local/out.txt")
ssum=$(grep "^suite " "$work/slurm/out.txt")
[ -n "$lsum" ] && [ "$lsum" = "$ssum" ] || fail "summaries differ: local '$lsum', Slurm '$ssum'"
# which array tasks ran where: both nodes took some
# one array task per scenario file, each allocated by slurmctld
ntasks=$(ls "$work/scn" | wc -l)
alloc='sched: Allocate JobId=[0-9]+_[0-9]+\([0-9]+\) NodeList='
got=$(grep -cE "$alloc" "$work/log/slurmctld.log")
[ "$got" = "$ntasks" ] || fail "slurmctld allocated $got array tasks, not $ntasks"
grep -qE "${alloc}n1" "$work/log/slurmctld.log" && grep -qE "${alloc}n2" "$work/log/slurmctld.log" ||
    echo "slurm_suite.sh: note: the tasks did not spread over both nodes"
# JSON: the same scenarios, verdicts, runs and checks (times aside)
python3 - "$work/local/r.json" "$work/slurm/r.json" <<'EOF' || fail "the JSON results differ"
import json, sys
def norm(path):
    d = json.load(open(path))
    out = []
    for s in d["scenarios"]:
        runs = [(r["algo"], r["verdict"], r["exit"],
                 [(c["line"], c["expect"], c["verdict"]) for c in r["checks"]],
                 (r["report"] or {}).get("status") if isinstance(r["report"], dict) else None)
                for r in s["runs"]]
        out.append((s["name"], s["verdict"], runs))
    return out
a, b = norm(sys.argv[1]), norm(sys.argv[2])
if a != b:
    print("local:", a, "\nslurm:", b)
    sys.exit(1)
if not any(s[1] == "fail" for s in a):
    print("no failed scenario in the results"); sys.exit(1)
EOF
# JUnit: the same test cases and failures
for k in "<testcase" "<failure"; do
    l=$(grep -c "$k" "$work/local/j.xml") s=$(grep -c "$k" "$work/slurm/j.xml")
    [ "$l" = "$s" ] && [ "$l" -gt 0 ] || fail "JUnit '$k': local $l, Slurm $s"
done
# plots: the same files
l=$(cd "$work/local/plots" 2>/dev/null && ls | sort | tr '\n' ' ')
s=$(cd "$work/slurm/plots" 2>/dev/null && ls | sort | tr '\n' ' ')
[ -n "$l" ] && [ "$l" = "$s" ] || fail "plots: local '$l', Slurm '$s'"
[ "$(ls -d "$work"/slurm/pmixsim-slurm.* 2>/dev/null)" = "" ] ||
    fail "the job array's directory was not removed although every task reported"
[ $failures -eq 0 ] && echo "slurm_suite.sh: PASS"
exit $((failures > 0))
