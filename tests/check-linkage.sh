#!/usr/bin/env bash
# check-linkage.sh - does a client program of the build tree load our library?
#
# usage: check-linkage.sh PROGRAM LIBRARY
#
# PROGRAM is a client linked with the shared libpmix (checks/link_probe.c);
# LIBRARY is the libpmix built here. Debian's OpenPMIx installs another
# libpmix.so.2 in the system library directory, so a program of this tree
# must find ours first, through the RUNPATH CMake writes for the build tree:
#   1. readelf -d: PROGRAM needs libpmix.so.2 and has a RUNPATH/RPATH
#      naming LIBRARY's directory;
#   2. ldd: libpmix.so.2 resolves to LIBRARY (in this environment, so an
#      LD_LIBRARY_PATH pointing elsewhere is caught too);
#   3. PROGRAM runs and prints the library's version.
set -euo pipefail

if [[ $# -ne 2 ]]; then
    echo "usage: check-linkage.sh PROGRAM LIBRARY" >&2
    exit 2
fi
prog=$1 lib=$2
libdir=$(dirname "$(realpath "$lib")")
want=$(realpath "$lib")
fail=0

dyn=$(readelf -d "$prog")
echo "readelf -d $prog (NEEDED, RUNPATH, RPATH):"
grep -E '\((NEEDED|RUNPATH|RPATH)\)' <<<"$dyn" | sed 's/^/    /'
if ! grep -Eq '\(NEEDED\).*\[libpmix\.so\.2\]' <<<"$dyn"; then
    echo "check-linkage: $prog does not need libpmix.so.2"
    fail=1
fi
paths=$(sed -nE 's/.*\((RUNPATH|RPATH)\).*\[(.*)\]$/\2/p' <<<"$dyn" | tr ':' '\n')
found=false
while IFS= read -r p; do
    [[ -n $p && -d $p && $(realpath "$p") == "$libdir" ]] && found=true
done <<<"$paths"
if ! $found; then
    echo "check-linkage: no RUNPATH/RPATH of $prog names $libdir"
    fail=1
fi

resolved=$(ldd "$prog" | awk '$1 == "libpmix.so.2" { print $3 }')
echo "ldd: libpmix.so.2 => ${resolved:-(nothing)}"
if [[ -z $resolved || $resolved == "not" || ! -e $resolved ]]; then
    echo "check-linkage: libpmix.so.2 is not found for $prog"
    fail=1
elif [[ $(realpath "$resolved") != "$want" ]]; then
    echo "check-linkage: $prog would load $resolved, not $want" \
        "(LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-})"
    fail=1
fi

if [[ $fail -eq 0 ]]; then
    if ! version=$("$prog"); then
        echo "check-linkage: $prog failed to run"
        fail=1
    else
        echo "$prog: PMIx_Get_version() = $version"
    fi
fi

if [[ $fail -ne 0 ]]; then
    echo "check-linkage: FAILED"
    exit 1
fi
echo "check-linkage: ok: programs of this build tree load $want"
