#!/bin/bash
# expect.sh - run one command (usually pmixrun with a test program) and check
# its exit status, its duration and its output (stdout and stderr together).
#
#   expect.sh [options] -- command [args...]
#
#   --status N          the exit status must be N (default 0)
#   --status-nonzero    the exit status must not be 0
#   --status-any        do not check the exit status
#   --skip-status N     if the command exits with N, report a skip (exit 77)
#   --max-seconds S     the command must finish within S seconds (default 50);
#                       it is killed at S+10 s and the test fails
#   --min-seconds S     the command must take at least S seconds
#   --match ERE         some output line must match ERE (may be repeated)
#   --no-match ERE      no output line may match ERE (may be repeated)
#   --count ERE N       exactly N output lines must match ERE (may be repeated)
#   --env NAME=VALUE    set an environment variable for the command
#   --unset-pmix-env    remove every PMIX* variable from the environment
#
# Exits 0 if every check holds, 77 for a skip, 1 otherwise; prints the
# command's output and then one line per failed check, so a ctest log says
# exactly what went wrong.
set -u

status_mode=exact
want_status=0
skip_status=
max_seconds=50
min_seconds=0
matches=()
nomatches=()
counts=()
envs=()
unset_pmix=0

die() {
    echo "expect.sh: $*" >&2
    exit 2
}

while [ $# -gt 0 ]; do
    case "$1" in
    --status) want_status=$2; status_mode=exact; shift 2 ;;
    --status-nonzero) status_mode=nonzero; shift ;;
    --status-any) status_mode=any; shift ;;
    --skip-status) skip_status=$2; shift 2 ;;
    --max-seconds) max_seconds=$2; shift 2 ;;
    --min-seconds) min_seconds=$2; shift 2 ;;
    --match) matches+=("$2"); shift 2 ;;
    --no-match) nomatches+=("$2"); shift 2 ;;
    --count) counts+=("$2" "$3"); shift 3 ;;
    --env) envs+=("$2"); shift 2 ;;
    --unset-pmix-env) unset_pmix=1; shift ;;
    --) shift; break ;;
    *) die "unknown option $1" ;;
    esac
done
[ $# -gt 0 ] || die "no command given"

out=$(mktemp "${TMPDIR:-/tmp}/expect.XXXXXX") || die "mktemp failed"
trap 'rm -f "$out"' EXIT

if [ "$unset_pmix" = 1 ]; then
    for v in $(env | sed -n 's/^\(PMIX[A-Za-z0-9_]*\)=.*/\1/p'); do
        unset "$v"
    done
fi
for e in ${envs[@]+"${envs[@]}"}; do
    export "${e?}"
done

limit=$(awk -v m="$max_seconds" 'BEGIN { printf "%d", m + 10 }')
echo "expect.sh: running: $*"
start=$(date +%s.%N)
timeout -k 5 "$limit" "$@" >"$out" 2>&1 </dev/null
status=$?
end=$(date +%s.%N)
elapsed=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }')

echo "----- output -----"
cat "$out"
echo "----- end of output (exit status $status, $elapsed s) -----"

failures=0
fail() {
    echo "expect.sh: FAILED: $*"
    failures=$((failures + 1))
}

if [ "$status" = 124 ] || [ "$status" = 137 ] && \
   awk -v e="$elapsed" -v l="$limit" 'BEGIN { exit !(e >= l - 0.5) }'; then
    fail "the command did not finish within $limit s and was killed (hang?)"
fi

if [ -n "$skip_status" ] && [ "$status" = "$skip_status" ]; then
    echo "expect.sh: SKIPPED (exit status $status)"
    exit 77
fi

case "$status_mode" in
exact) [ "$status" = "$want_status" ] || fail "exit status $status, expected $want_status" ;;
nonzero) [ "$status" != 0 ] || fail "exit status 0, expected a failure status" ;;
any) ;;
esac

if awk -v e="$elapsed" -v m="$max_seconds" 'BEGIN { exit !(e > m) }'; then
    fail "took $elapsed s, bound $max_seconds s"
fi
if awk -v e="$elapsed" -v m="$min_seconds" 'BEGIN { exit !(e < m) }'; then
    fail "took $elapsed s, expected at least $min_seconds s"
fi

for re in ${matches[@]+"${matches[@]}"}; do
    grep -Eq -- "$re" "$out" || fail "no output line matches /$re/"
done
for re in ${nomatches[@]+"${nomatches[@]}"}; do
    if grep -Eq -- "$re" "$out"; then
        fail "output lines match /$re/:"
        grep -E -- "$re" "$out" | head -20 | sed 's/^/    /'
    fi
done
i=0
while [ $i -lt ${#counts[@]} ]; do
    re=${counts[$i]}
    want=${counts[$((i + 1))]}
    got=$(grep -Ec -- "$re" "$out")
    [ "$got" = "$want" ] || fail "$got output lines match /$re/, expected $want"
    i=$((i + 2))
done

if [ $failures -ne 0 ]; then
    echo "expect.sh: $failures check(s) failed"
    exit 1
fi
echo "expect.sh: all checks passed"
exit 0
