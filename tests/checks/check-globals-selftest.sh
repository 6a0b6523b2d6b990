#!/usr/bin/env bash
# check-globals-selftest.sh - prove that check-globals.sh can fail.
#
# usage: check-globals-selftest.sh CHECK_GLOBALS_SH BAD_OBJECT OK_OBJECT
#
# BAD_OBJECT is globals_bad.c compiled: the check must exit 1 and name every
# writable symbol the fixture defines. OK_OBJECT is globals_ok.c compiled
# (const data only, including const tables of pointers): the check must pass.
set -euo pipefail

if [[ $# -ne 3 ]]; then
    echo "usage: check-globals-selftest.sh CHECK_GLOBALS_SH BAD_OBJECT OK_OBJECT" >&2
    exit 2
fi
script=$1 bad=$2 ok=$3
# Keep in step with globals_bad.c.
expected=(bad_counter bad_public bad_common bad_tls bad_names bad_calls)

fail=0
set +e
out=$(bash "$script" "$bad" 2>&1)
rc=$?
set -e
echo "--- check-globals.sh on the bad fixture (exit $rc):"
echo "$out"
if [[ $rc -ne 1 ]]; then
    echo "selftest: expected exit status 1 on the bad fixture, got $rc"
    fail=1
fi
for sym in "${expected[@]}"; do
    if ! grep -Eq "^ +$sym(\.[0-9]+)? " <<<"$out"; then
        echo "selftest: writable symbol $sym was not reported"
        fail=1
    fi
done

# The const fixture must really exercise the case that fools nm's letters:
# const data in .data.rel.ro, which nm shows as `d` (read in the object's
# own format: an LTO object's default table has no sections).
format=$(objdump -f "$ok" | sed -n 's/.*file format //p' | head -n 1)
if ! nm --format=sysv --defined-only --target="$format" "$ok" | grep -Eq '\|[[:space:]]*d[[:space:]]*\|.*\|\.data\.rel\.ro'; then
    echo "selftest: the ok fixture has no .data.rel.ro symbol; it no longer tests that case"
    fail=1
fi

set +e
out=$(bash "$script" "$ok" 2>&1)
rc=$?
set -e
echo "--- check-globals.sh on the ok fixture (exit $rc):"
echo "$out"
if [[ $rc -ne 0 ]]; then
    echo "selftest: expected exit status 0 on the const-only fixture, got $rc"
    fail=1
fi

# The allow list must skip an object whatever it defines.
set +e
out=$(bash "$script" --allow "$(basename "$bad")" "$bad" 2>&1)
rc=$?
set -e
if [[ $rc -ne 0 ]]; then
    echo "selftest: --allow did not skip the bad fixture (exit $rc): $out"
    fail=1
fi

if [[ $fail -ne 0 ]]; then
    echo "selftest: FAILED"
    exit 1
fi
echo "selftest: ok (bad fixture rejected with every symbol named; const fixture accepted; --allow works)"
