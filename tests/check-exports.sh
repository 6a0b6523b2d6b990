#!/usr/bin/env bash
# check-exports.sh - does a shared library export every listed function?
#
# usage: check-exports.sh LIBRARY LIST...
#
# Each LIST has one function name per line (blank lines and lines starting
# with # are ignored): tests/abi/functions-standard-abi.txt (the Standard
# ABI) and tests/abi/functions-openmpi-4.1.txt (what Open MPI 4.1 imports).
# A name counts as exported when `nm -D --defined-only` shows it as a
# function (T, W or i). Missing names are listed per file.
#
# Also reported, without failing: exported names outside the Standard's
# PMIx_/pmix_ namespace (the library is built with hidden visibility, so an
# internal px_ name showing up here is a leak worth a look).
#
# Exit status: 0 all present, 1 some missing, 2 usage error or a tool failed.
set -euo pipefail

NM=${NM:-nm}
if [[ $# -lt 2 ]]; then
    echo "usage: check-exports.sh LIBRARY LIST..." >&2
    exit 2
fi
lib=$1
shift
if [[ ! -f $lib ]]; then
    echo "check-exports: no such library: $lib" >&2
    exit 2
fi

if ! table=$("$NM" -D --defined-only "$lib" 2>&1); then
    echo "check-exports: $NM -D failed on $lib: $table" >&2
    exit 2
fi
exported=$(awk 'NF >= 3 && $2 ~ /^[TWi]$/ { sub(/@.*/, "", $3); print $3 }' <<<"$table" | LC_ALL=C sort -u)
nexported=$(grep -c . <<<"$exported" || true)
echo "check-exports: $lib exports $nexported function(s)."

status=0
for list in "$@"; do
    if [[ ! -f $list ]]; then
        echo "check-exports: no such list: $list" >&2
        exit 2
    fi
    wanted=$(sed -e 's/#.*//' -e 's/[[:space:]]//g' "$list" | grep . | LC_ALL=C sort -u || true)
    nwanted=$(grep -c . <<<"$wanted" || true)
    missing=$(LC_ALL=C comm -23 <(echo "$wanted") <(echo "$exported") | grep . || true)
    nmissing=$(grep -c . <<<"$missing" || true)
    echo "$(basename "$list"): $((nwanted - nmissing)) of $nwanted exported"
    if [[ $nmissing -gt 0 ]]; then
        echo "  missing ($nmissing):"
        sed 's/^/    /' <<<"$missing"
        status=1
    fi
done

foreign=$(grep -Ev '^(PMIx_|pmix_)' <<<"$exported" | grep . || true)
if [[ -n $foreign ]]; then
    echo "note: exported functions outside PMIx_/pmix_ (not an error):"
    sed 's/^/    /' <<<"$foreign"
fi

if [[ $status -ne 0 ]]; then
    echo "check-exports: FAILED: the library does not yet export every function listed."
else
    echo "check-exports: ok."
fi
exit $status
