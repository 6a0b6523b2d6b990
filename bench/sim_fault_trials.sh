#!/bin/bash
# sim_fault_trials.sh - random faults in pmixsim, many times: no run may
# hang or crash, every fault-free fence must succeed, every process that
# survives a node crash or a process kill must get an error from a fence,
# and the run must end within the collective timeout (1.1 s simulated).
# A nightly check and a benchmark of the fault layer, not a ctest.
#
#   bench/sim_fault_trials.sh BUILD_DIR [TRIALS [FIRST_SEED]]
#
# Trial s (seed s) picks, from s: 8 to 47 nodes, 1 to 3 processes per
# node, one or two planes, an algorithm of the catalog (or auto), a
# barrier or a collect of 100 or 200 bytes, and one fault among
# node:rand@2us..30us, proc:rand@2us..30us, proc:rand@fence:K and
# link:rand@2us..30us; pmixsim then draws the target and the time from
# the seed. A failing trial prints its command line, which replays it.
# Prints one line per failure and a summary; exits 1 if any trial failed.
set -u
build=${1:?usage: sim_fault_trials.sh BUILD_DIR [TRIALS [FIRST_SEED]]}
trials=${2:-100} first=${3:-1}
sim=$build/simhost/pmixsim
[[ -x $sim ]] || {
    echo "sim_fault_trials.sh: no $sim (build it first)" >&2
    exit 2
}
command -v python3 >/dev/null || {
    echo "sim_fault_trials.sh: needs python3 to read the JSON reports" >&2
    exit 2
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
algos=(dissemination recdbl bruck ring tree hier auto)
bad=0 start=$SECONDS
for ((seed = first; seed < first + trials; seed++)); do
    faults=("node:rand@2us..30us" "proc:rand@2us..30us" "proc:rand@fence:$((seed % 4 + 1))"
        "link:rand@2us..30us")
    planes=1
    ((seed % 5 == 0)) && planes=2
    cmd=("$sim" --quiet --seed "$seed" --planes "$planes" --nodes $((8 + seed % 40))
        --ppn $((1 + seed % 3)) --algo "${algos[$((seed % 7))]}" --fault "${faults[$((seed % 4))]}"
        --json "$tmp/r.json" fence --iters 6 --size $(((seed % 3) * 100)))
    timeout 120 "${cmd[@]}" >"$tmp/out" 2>&1
    rc=$?
    if ((rc > 1)); then
        echo "trial $seed: exit status $rc: ${cmd[*]}"
        tail -3 "$tmp/out" | sed 's/^/    /'
        bad=$((bad + 1))
        continue
    fi
    python3 - "$tmp/r.json" "$seed" <<'EOF' || bad=$((bad + 1))
import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
seed, fault = sys.argv[2], run["faults"][0]
procs, killed = run["nodes"] * run["ppn"], run["procs_killed"]
errors = sum(sum(pf["errors"].values()) for pf in run["proc_fences"])
why = []
if run["sim_s"] > 1.1:
    why.append("ran until %.3f s simulated" % run["sim_s"])
if fault["kind"] in ("node", "proc") and killed > 0 and errors != procs - killed:
    why.append("%d of %d survivors got an error" % (errors, procs - killed))
if not fault["injected"] and any(f["status"] != "ok" for f in run["fences"]):
    why.append("a fence failed without a fault")
if why:
    print("trial %s: %s: %s" % (seed, fault["spec"], "; ".join(why)))
    sys.exit(1)
EOF
done
echo "sim_fault_trials: $trials trials (seeds $first..$((first + trials - 1))), $bad failed, $((SECONDS - start)) s"
[[ $bad -eq 0 ]]
