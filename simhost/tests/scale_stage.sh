#!/bin/bash
# scale_stage.sh - the simulator at scale, as a stage of `./run test`
# (ctest label `scale`): the scenarios of scenarios/scale/ through
# `pmixsim suite` (each with wall-time and peak-memory bounds, one against
# a bare SimGrid barrier), then the check that memory per simulated
# process does not grow with the job: peak RSS over process count at
# 1,024 x 16 stays within 1.5 times that of 4,096 x 16.
#
#   scale_stage.sh PMIXSIM SGBARE SCENARIO_DIR OUT_DIR
#
# OUT_DIR gets results.tsv, results.json and junit.xml. Exit status 0 when
# everything passed, 1 otherwise (with what failed on stdout).
set -u
sim=${1:?usage: scale_stage.sh PMIXSIM SGBARE SCENARIO_DIR OUT_DIR}
bare=${2:?} dir=${3:?} out=${4:?}
mkdir -p "$out" || exit 1
rc=0
"$sim" suite "$dir" --bare "$bare" --tsv "$out/results.tsv" --json "$out/results.json" \
    --junit "$out/junit.xml" || rc=1

# Memory per process, from the suite's TSV (scenario, algo, verdict,
# wall_s, peak_rss_mb, ...): the two collecting fences and their sizes.
per_proc() { # SCENARIO PROCS: peak MB per process, in kB
    awk -F'\t' -v s="$1" -v p="$2" '$1 == s && $3 == "PASS" { printf "%.2f", $5 * 1024 / p; f = 1 }
        END { exit f ? 0 : 1 }' "$out/results.tsv"
}
small=$(per_proc collect-1024x16 16384) && large=$(per_proc collect-4096x16 65536)
if [[ -z ${small:-} || -z ${large:-} ]]; then
    echo "FAIL  memory per process: collect-1024x16 and collect-4096x16 must both pass to compare"
    rc=1
elif awk -v a="$small" -v b="$large" 'BEGIN { exit !(a <= 1.5 * b && b <= 1.5 * a) }'; then
    echo "PASS  memory per process: $small kB at 1,024 x 16, $large kB at 4,096 x 16 (within 1.5x)"
else
    echo "FAIL  memory per process: $small kB at 1,024 x 16, $large kB at 4,096 x 16: more than" \
        "1.5x apart, so memory grows with the job's size (docs/simulation.md, 'Memory')"
    rc=1
fi
exit $rc
