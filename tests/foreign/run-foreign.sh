#!/usr/bin/env bash
# run-foreign.sh KIND PMIXRUN LIBDIR SRC NP [ENV=VALUE...]
#
# Build a client with another implementation's toolchain, then run it under
# our pmixrun with our libpmix.so.2 (LIBDIR) found first:
#   openpmix  SRC compiled against OpenPMIx's headers (pkg-config pmix);
#   openmpi   SRC compiled with Open MPI's mpicc; Open MPI 4.1 needs
#             PMIX_NAMESPACE (pmixrun sets it) and a launcher it recognizes:
#             FLUX_JOB_ID stands for one (shared/abi/openmpi-4.1.md).
# The client must load our library (checked with ldd) and exit 0. Exits 77
# (skipped) when the other toolchain is not installed. NP given as N1:N2
# starts two application contexts of the client, `-n N1 client a : -n N2
# client b`.
#
# PMIXRUN_OPTS (environment), when set, adds pmixrun options, split at
# spaces: `--nodes 2` runs the client over two virtual nodes. With
# FOREIGN_NEEDS_VHOST=1 the test is about virtual nodes that look like
# hosts (pmixrun --isolate host), which need root and namespaces: it is
# skipped where those cannot be had.
set -euo pipefail
kind=$1 pmixrun=$2 libdir=$3 src=$4 np=$5
shift 5

# A sanitizer build of our library cannot be loaded into a program that was
# not built with the sanitizer (ASan insists on coming first): these tests
# are about the binary interface, which the plain build checks.
# (ldd's output is taken whole first: with pipefail, `ldd | grep -q` fails
# whenever grep exits before ldd has written everything and ldd gets SIGPIPE.)
deps=$(ldd "$libdir/libpmix.so.2" 2>/dev/null || true)
if [[ $deps == *libasan* ]]; then
    echo "skipped: $libdir/libpmix.so.2 is built with AddressSanitizer; foreign clients run in the plain build"
    exit 77
fi

if [[ ${FOREIGN_NEEDS_VHOST:-0} == 1 ]]; then
    if [[ $(id -u) != 0 ]]; then
        echo "skipped: virtual nodes with their own host name and /dev/shm need root"
        exit 77
    fi
    if ! unshare --uts --mount true 2>/dev/null; then
        echo "skipped: cannot make UTS and mount namespaces here (unshare --uts --mount fails)"
        exit 77
    fi
fi
read -r -a opts <<<"${PMIXRUN_OPTS:-}"

work=$(mktemp -d "${TMPDIR:-/tmp}/pmixlab-foreign.XXXXXX")
trap 'rm -rf "$work"' EXIT
exe=$work/client

case $kind in
openpmix)
    if ! pkg-config --exists pmix 2>/dev/null; then
        echo "skipped: OpenPMIx's headers are not installed (apt-get install libpmix-dev)"
        exit 77
    fi
    # shellcheck disable=SC2046
    gcc -std=gnu11 -o "$exe" "$src" $(pkg-config --cflags --libs pmix)
    ;;
openmpi)
    if ! command -v mpicc >/dev/null 2>&1; then
        echo "skipped: Open MPI's mpicc is not installed (apt-get install libopenmpi-dev)"
        exit 77
    fi
    mpicc -o "$exe" "$src"
    set -- FLUX_JOB_ID=pmixlab-test "$@"
    ;;
*)
    echo "run-foreign.sh: unknown kind '$kind' (openpmix or openmpi)" >&2
    exit 2
    ;;
esac

export LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# Open MPI reaches libpmix.so.2 through its PMIx component, not the client.
probe=$exe
if [[ $kind == openmpi ]]; then
    probe=$(find /usr/lib/*/openmpi -name mca_pmix_ext3x.so 2>/dev/null | head -n 1)
fi
if [[ -n $probe ]]; then
    loaded=$(ldd "$probe" | awk '$1 == "libpmix.so.2" { print $3 }')
    if [[ $(readlink -f "$loaded") != $(readlink -f "$libdir/libpmix.so.2") ]]; then
        echo "FAILED: $probe would load libpmix.so.2 from '$loaded', not from $libdir" >&2
        exit 1
    fi
    echo "$kind client loads $loaded"
fi
if [[ $np == *:* ]]; then
    env "$@" timeout 60 "$pmixrun" "${opts[@]}" --timeout 50 -n "${np%%:*}" "$exe" a : -n "${np#*:}" "$exe" b
else
    env "$@" timeout 60 "$pmixrun" "${opts[@]}" -n "$np" --timeout 50 "$exe"
fi
