#!/usr/bin/env bash
# run-openpmix-example.sh INCDIR LIBDIR PMIXRUN NAME [NP [PMIXRUN-OPTIONS...]]
# run-openpmix-example.sh INCDIR LIBDIR --compile-all
#
# OpenPMIx's own example programs, as Debian ships them with libpmix-dev
# (/usr/share/doc/libpmix-dev/examples), built unchanged against OUR headers
# (INCDIR) and library (LIBDIR): the source compatibility of programs
# written for OpenPMIx.
#
# Each example is copied, unchanged, into a scratch directory next to
# openpmix-examples/examples.h (our version of the helper header the
# package leaves out; it holds the examples' own lock and structures, none
# of the library's) and compiled with `cc -I INCDIR example.c -L LIBDIR
# -lpmix`, plus a run path to LIBDIR: nothing else.
#
#   NAME [NP [OPTIONS...]]
#                  compile example NAME, then run it under `PMIXRUN -n NP
#                  --timeout 30 OPTIONS` (NP 4 by default; OPTIONS such as
#                  --nodes 2); the caller
#                  (tests/integration, expect.sh) checks the exit status and
#                  output against what the example does on OpenPMIx.
#   --compile-all  compile every example that uses only client calls and
#                  print how many compile; fail if one does not.
#
# The client examples are the ones below; OpenPMIx's other examples are
# tools (debugger, debuggerd, launcher, tool), a server using OpenPMIx's
# internals (server) or PMI-1 (pmi1client). Exits 77 (skipped) when the
# examples are not installed, or when LIBDIR holds a sanitizer build (a
# program built without the sanitizer cannot load it).
set -euo pipefail

examples_dir=${PMIXLAB_OPENPMIX_EXAMPLES:-/usr/share/doc/libpmix-dev/examples}
here=$(cd "$(dirname "$0")" && pwd)
clients="abi_no_init abi_with_init alloc asyncgroup bad_exit client client2 dmodex dynamic fault
         group group_dmodex group_lcl_cid hello jctrl log nodeinfo pub pubi"

if [[ $# -lt 3 ]]; then
    echo "usage: run-openpmix-example.sh INCDIR LIBDIR (PMIXRUN NAME [NP] | --compile-all)" >&2
    exit 2
fi
incdir=$(realpath "$1") libdir=$(realpath "$2")
shift 2

if [[ ! -f $examples_dir/hello.c ]]; then
    echo "skipped: OpenPMIx's examples are not installed in $examples_dir (apt-get install libpmix-dev)"
    exit 77
fi
deps=$(ldd "$libdir/libpmix.so.2" 2>/dev/null || true)
if [[ $deps == *libasan* ]]; then
    echo "skipped: $libdir/libpmix.so.2 is built with AddressSanitizer; the examples run in the plain build"
    exit 77
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/pmixlab-ompix.XXXXXX")
trap 'rm -rf "$work"' EXIT
cp "$here/openpmix-examples/examples.h" "$work/"

# compile NAME: builds $work/NAME; the compiler's messages go to stdout.
compile() {
    cp "$examples_dir/$1.c" "$work/"
    (cd "$work" && ${CC:-cc} -o "$1" "$1.c" -I"$incdir" -L"$libdir" -lpmix -Wl,-rpath,"$libdir")
}

if [[ $1 == --compile-all ]]; then
    n=0 ok=0 failed=
    for name in $clients; do
        n=$((n + 1))
        if [[ ! -f $examples_dir/$name.c ]]; then
            failed="$failed $name(missing)"
        elif compile "$name" 2>&1; then
            ok=$((ok + 1))
        else
            failed="$failed $name"
        fi
    done
    echo "OpenPMIx client examples: $ok of $n compile against our headers and library"
    if [[ -n $failed ]]; then
        echo "FAILED:$failed"
        exit 1
    fi
    exit 0
fi

pmixrun=$(realpath "$1") name=$2 np=${3:-4}
shift $(($# < 3 ? $# : 3))
if [[ ! -f $examples_dir/$name.c ]]; then
    echo "skipped: $examples_dir/$name.c is not there (another libpmix-dev version?)"
    exit 77
fi
compile "$name" 2>&1
# dynamic spawns ./client from its working directory
if [[ $name == dynamic ]]; then
    compile client 2>&1
fi
cd "$work"
exec "$pmixrun" -n "$np" --timeout 30 "$@" "./$name"
