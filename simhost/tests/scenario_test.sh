#!/bin/bash
# scenario_test.sh - tests of `pmixsim run` and `pmixsim suite` themselves
# (ctest sim_scenario_runner; the scenarios of scenarios/ are tests of
# their own).
#
#   scenario_test.sh PMIXSIM SCENARIO_DIR
#
# Checks: bad scenario files end with status 2 and name the file, the line
# and the problem; pmixsim's refusal of an option points at the option's
# line; a failed expectation is a FAIL line and status 1; a missing
# requirement is a skip (77); bare_ratio against sgbare; the JSON, JUnit and TSV outputs; a crashing
# and a hanging simulation are errors that do not stop the suite; plots.
set -u
sim=$1 dir=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
nfail=0

fail() {
    echo "FAIL: $*" >&2
    nfail=$((nfail + 1))
}

# expect STATUS WORDS FILE-CONTENT: `pmixsim run` on that file exits with
# STATUS and prints WORDS.
expect() {
    local want=$1 words=$2 content=$3 f=$tmp/t$RANDOM.scn
    printf '%b' "$content" >"$f"
    "$sim" run "$f" >"$tmp/out" 2>&1
    local rc=$?
    [[ $rc -eq $want ]] || fail "exit status $rc, expected $want, for:\n$content\n$(cat "$tmp/out")"
    grep -qF -- "$words" "$tmp/out" ||
        fail "no '$words' in the output for:\n$content\n--- output:\n$(cat "$tmp/out")"
    echo "ok: status $rc, '$words'"
}
W='[workload]\nprogram = fence\n'

# Bad files: status 2, FILE:LINE: and what to do.
expect 2 ":2: unknown section [jobs]" "# x\n[jobs]\nnodes = 4\n$W"
expect 2 ":2: expected 'key = value'" "[job]\nnodes 4\n$W"
expect 2 ":1: unknown key 'nodes' before the first section" "nodes = 4\n$W"
expect 2 ":2: unknown algorithm 'nosuch'" "[job]\nalgo = nosuch\n$W"
expect 2 ":4: formula: 'fast' is not a number" "$W[expect]\nformula <= fast\n"
expect 2 ":4: unknown expectation 'speed'" "$W[expect]\nspeed = 3\n"
expect 2 "no workload" "[job]\nnodes = 4\n"
expect 2 "'json' is set by pmixsim run itself" "[job]\njson = x\n$W"
# pmixsim refuses an option: the line of that option.
expect 2 ":3: pmixsim refused 'nodez = 4': unknown option --nodez" "[job]\nppn = 1\nnodez = 4\n$W"
expect 2 ":2: pmixsim refused 'nodes = 0'" "[job]\nnodes = 0\n$W"
# Expectations that do not hold: FAIL lines and status 1.
expect 1 "FAIL  fence_time <= 1us (line 6): fence 1 took 4.005 us simulated" \
    "[job]\nnodes = 4\n$W[expect]\nfence_time <= 1us\n"
expect 1 "FAIL  status = PMIX_ERR_TIMEOUT (line 4): no fence failed" \
    "$W[expect]\nstatus = PMIX_ERR_TIMEOUT\n"
expect 1 "FAIL  fence.kind = allgather (line 4): fence 1: kind = barrier" \
    "$W[expect]\nfence.kind = allgather\n"
expect 1 "FAIL  output ~ nothing like this (line 4): not in the run's output" \
    "$W[expect]\noutput ~ nothing like this\n"
expect 1 "FAIL  survivors = PMIX_ERR_TIMEOUT (line 4)" "$W[expect]\nsurvivors = PMIX_ERR_TIMEOUT\n"
# ... and ones that do, with options passed through and the algorithm named.
expect 0 "PASS  formula <= 1% (line 9)" \
    "[platform]\nlat = 2us\n[job]\nnodes = 8\nalgo = recdbl\n$W[expect]\nformula <= 1%\nfence.algo = recdbl\nrun.nodes = 8\nsim_time < 1ms\n"
# SimGrid's options keep their one-word form.
expect 0 "--cfg=network/TCP-gamma:4194304 fence" "[platform]\ncfg = network/TCP-gamma:4194304\n$W"
# A run that outgrows max_rss is stopped.
expect 1 "stopped when it passed the scenario's max_rss (40 MB" \
    "max_rss = 40MB\n[job]\nnodes = 2048\n$W"
# bare_ratio: pmixsim's wall time over bench/sgbare's (found next to pmixsim
# in the build tree), for barriers only.
expect 0 "PASS  bare_ratio <= 1000 (line 4): " "$W[expect]\nbare_ratio <= 1000\n"
expect 1 "FAIL  bare_ratio < 0.001 (line 4): " "$W[expect]\nbare_ratio < 0.001\n"
expect 1 "not comparable: bare_ratio needs the fence workload as a barrier" \
    "[workload]\nprogram = fence\nargs = --size 8\n[expect]\nbare_ratio <= 2\n"
expect 2 ":4: bare_ratio: 'quick' is not a number" "$W[expect]\nbare_ratio <= quick\n"
printf '%b[expect]\nbare_ratio <= 1000\n' "$W" >"$tmp/bare.scn"
"$sim" run "$tmp/bare.scn" --bare "$tmp/no-such-sgbare" >"$tmp/out" 2>&1
[[ $? -eq 1 ]] && grep -qF "no sgbare at $tmp/no-such-sgbare" "$tmp/out" ||
    fail "--bare with a missing program: $(cat "$tmp/out")"
# A requirement this pmixsim lacks: skipped.
expect 77 "SKIP" "requires = --no-such-option\n$W"
expect 77 "SKIP" "requires = --planes 7\n$W"

# run's JSON, JUnit and TSV.
printf '[job]\nnodes = 8\nalgo = dissemination recdbl\n%b[expect]\nstatus = ok\n' "$W" >"$tmp/two.scn"
"$sim" run "$tmp/two.scn" --json "$tmp/r.json" --junit "$tmp/r.xml" --tsv "$tmp/r.tsv" \
    >"$tmp/out" 2>&1 || fail "run with outputs: $(cat "$tmp/out")"
[[ $(grep -c '<testcase ' "$tmp/r.xml") -eq 2 ]] || fail "JUnit: expected 2 test cases: $(cat "$tmp/r.xml")"
grep -q 'tests="2" failures="0" errors="0" skipped="0"' "$tmp/r.xml" || fail "JUnit counts"
[[ $(grep -c '"verdict":"pass"' "$tmp/r.json") -ge 5 ]] || fail "JSON verdicts: $(cat "$tmp/r.json")"
grep -q '"report":{"runs":' "$tmp/r.json" || fail "JSON: pmixsim's report is not embedded"
[[ $(grep -c $'\tPASS\t' "$tmp/r.tsv") -eq 2 ]] || fail "TSV: $(cat "$tmp/r.tsv")"
if command -v python3 >/dev/null; then
    python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/r.json" || fail "invalid JSON"
    python3 -c 'import xml.dom.minidom,sys; xml.dom.minidom.parse(sys.argv[1])' "$tmp/r.xml" ||
        fail "invalid JUnit XML"
fi
echo "ok: run --json --junit --tsv"

# A suite whose simulations crash or hang goes on: a stand-in pmixsim
# that dies of SIGSEGV for --nodes 3, sleeps for --nodes 5 and runs the
# real one otherwise.
mkdir "$tmp/suite"
cat >"$tmp/fake" <<FAKE
#!/bin/bash
case " \$* " in
*" --nodes 3 "*) kill -SEGV \$\$ ;;
*" --nodes 5 "*) exec sleep 30 ;;
esac
exec "$sim" "\$@"
FAKE
chmod +x "$tmp/fake"
printf 'plot = p\n[job]\nnodes = 3\n%b' "$W" >"$tmp/suite/a-crash.scn"
printf 'timeout = 1s\n[job]\nnodes = 5\n%b' "$W" >"$tmp/suite/b-hang.scn"
printf 'plot = p\n[job]\nnodes = 4\nalgo = dissemination recdbl\n%b' "$W" >"$tmp/suite/c-ok.scn"
printf 'plot = p\n[job]\nnodes = 8\nalgo = dissemination recdbl\n%b' "$W" >"$tmp/suite/d-ok.scn"
printf '[jobb]\n' >"$tmp/suite/e-bad.scn"
printf '[job]\nnodes = 2\n%b' "$W" >"$tmp/suite/f-filtered.scn.txt"
"$sim" suite "$tmp/suite" --pmixsim "$tmp/fake" --junit "$tmp/s.xml" --json "$tmp/s.json" \
    --plot "$tmp/plots" >"$tmp/out" 2>&1
rc=$?
cat "$tmp/out"
[[ $rc -eq 1 ]] || fail "suite with a crash: exit status $rc, expected 1"
grep -q "killed by signal 11" "$tmp/out" || fail "the crash is not reported"
grep -q "stopped after the scenario's timeout (1 s" "$tmp/out" || fail "the hang is not reported"
grep -q "e-bad.scn:1: unknown section" "$tmp/out" || fail "the bad file is not reported"
grep -q "suite $tmp/suite: 4 passed, 0 failed, 3 errors, 0 skipped" "$tmp/out" ||
    fail "suite counts"
grep -q 'tests="7" failures="0" errors="3"' "$tmp/s.xml" || fail "suite JUnit counts"
[[ -s $tmp/plots/p.tsv ]] || fail "no plot figures"
if command -v gnuplot >/dev/null; then
    [[ -s $tmp/plots/p.png ]] || fail "no plot, though gnuplot is installed"
fi
"$sim" suite "$tmp/suite" --filter 'c-*' >"$tmp/out" 2>&1 || fail "suite --filter: $(cat "$tmp/out")"
grep -q "2 passed, 0 failed, 0 errors" "$tmp/out" || fail "suite --filter ran: $(cat "$tmp/out")"
echo "ok: suite with a crash, a hang and a bad file; plots; --filter"

# The scenario files of the project all read (their runs are other tests).
for f in "$dir"/*.scn "$dir"/nightly/*.scn; do
    "$sim" run "$f" --pmixsim /bin/false >"$tmp/out" 2>&1
    grep -q "^pmixsim: $f:" "$tmp/out" && fail "$f does not read: $(cat "$tmp/out")"
done
echo "ok: every file of $dir reads"

[[ $nfail -eq 0 ]] || {
    echo "$nfail checks failed" >&2
    exit 1
}
