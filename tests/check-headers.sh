#!/usr/bin/env bash
# check-headers.sh - which pmix headers does a client program compile with?
#
# usage: check-headers.sh CC OUR_INCLUDE_DIR SOURCE -- COMPILER_FLAGS...
#
# Runs the compiler's dependency scan (-M) on SOURCE with the flags a client
# target of this build gets (its include directories, including those of
# libevent and hwloc, and CMAKE_C_FLAGS) and requires that every pmix*.h it
# pulls in lives under OUR_INCLUDE_DIR (libpmix/include), and that
# pmix_common.h is among them. It catches OpenPMIx's headers (Debian's
# libpmix-dev puts them under .../pmix2/include) shadowing ours.
set -euo pipefail

if [[ $# -lt 4 || $4 != "--" ]]; then
    echo "usage: check-headers.sh CC OUR_INCLUDE_DIR SOURCE -- COMPILER_FLAGS..." >&2
    exit 2
fi
cc=$1 ours=$(realpath "$2") src=$3
shift 4

deps=$("$cc" "$@" -M "$src")
headers=$(tr -d '\\' <<<"$deps" | tr ' ' '\n' | grep -E '(^|/)pmix[^/]*\.h$' | sort -u || true)
fail=0
common=
echo "pmix headers used by $(basename "$src"):"
while IFS= read -r h; do
    [[ -n $h ]] || continue
    real=$(realpath "$h")
    echo "    $real"
    case $real in
    "$ours"/*) ;;
    *)
        echo "check-headers: $real is not under $ours"
        fail=1
        ;;
    esac
    [[ $(basename "$real") == pmix_common.h ]] && common=$real
done <<<"$headers"
if [[ -z $common ]]; then
    echo "check-headers: pmix_common.h was not included at all"
    fail=1
fi
if [[ $fail -ne 0 ]]; then
    echo "check-headers: FAILED: flags were: $*"
    exit 1
fi
echo "check-headers: ok: pmix_common.h resolves to $common"
