#!/usr/bin/env bash
# check-install.sh - can programs be built against an installed pmixlab,
# and do they run on it?
#
# usage: check-install.sh BUILD_DIR SOURCE_DIR CC PMIX_PC(ON|OFF)
#
# Installs BUILD_DIR (already built) into a temporary prefix with
# `cmake --install --prefix`, then:
#   1. the layout: library and headers in directories of their own
#      (lib*/pmixlab, include/pmixlab), nothing named like another PMIx's
#      file directly in lib* or include, pmix.pc only when PMIX_PC is ON,
#      the commands, their man pages, the scenarios and the documentation;
#   2. no installed program or library has a RUNPATH into the build or
#      source tree;
#   3. examples/hello.c builds with `pkg-config --cflags --libs pmixlab`
#      and with a CMake project using find_package(pmixlab) (client/);
#   4. both load the installed libpmix.so.2 (ldd), and run under the
#      installed pmixrun: -n 2 alone, and -n 2 --nodes 2, where pmixrun
#      starts the installed pmixd next to it. LD_DEBUG=libs shows which
#      libpmix.so.2 every rank really loads: it must be the installed one;
#      pmixrun and pmixd hold the library's objects themselves (they use
#      the engine's own interface, sockhost/CMakeLists.txt) and load none;
#   5. with pmixsim installed: hello built as a shared object with the
#      CMake package's pmixsim_add_program runs in the installed pmixsim.
# Exits 77 (skipped) for a sanitizer build: a program built without the
# sanitizer cannot load that library (the plain build checks the install).
set -euo pipefail

if [[ $# -ne 4 ]]; then
    echo "usage: check-install.sh BUILD_DIR SOURCE_DIR CC PMIX_PC" >&2
    exit 2
fi
build=$(realpath "$1") src=$(realpath "$2") cc=$3 pmix_pc=$4
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

deps=$(ldd "$build/libpmix/libpmix.so.2" 2>/dev/null || true)
if [[ $deps == *libasan* ]]; then
    echo "skipped: the library of $build is built with AddressSanitizer; the plain build checks the install"
    exit 77
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/pmixlab-install.XXXXXX")
# cmake --install rewrites BUILD_DIR/install_manifest.txt, which lists what
# a real install of this build put where (docs/install.md removes an
# install with it): keep it as it was.
manifest=$build/install_manifest.txt
had_manifest=false
if [[ -e $manifest ]]; then
    cp -p "$manifest" "$work/install_manifest.txt"
    had_manifest=true
fi
cleanup() {
    if $had_manifest; then
        cp -p "$work/install_manifest.txt" "$manifest"
    else
        rm -f "$manifest"
    fi
    rm -rf "$work"
}
trap cleanup EXIT
prefix=$work/prefix
fail=0
bad() {
    echo "check-install: $*"
    fail=1
}
unset LD_LIBRARY_PATH PMIXLAB_PMIXD PKG_CONFIG_PATH

echo "== cmake --install $build --prefix $prefix"
cmake --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1 || {
    cat "$work/install.log"
    echo "check-install: cmake --install failed"
    exit 1
}

# ---- 1. layout
echo "== layout"
(cd "$prefix" && find . -path ./share/pmixlab/scenarios -prune -o -print | LC_ALL=C sort | sed 's/^/    /')
pc=$(find "$prefix" -name pmixlab.pc)
[[ -n $pc ]] || {
    bad "no pmixlab.pc installed"
    exit 1
}
pcdir=$(dirname "$pc")
libdir=$(dirname "$pcdir")/pmixlab
lib=$libdir/libpmix.so.2
for f in "$lib" "$libdir/libpmix.so" "$libdir/libpmix.a" "$prefix/include/pmixlab/pmix.h" \
    "$prefix/include/pmixlab/pmix_common.h" "$prefix/include/pmixlab/pmix_server.h" \
    "$prefix/bin/pmixrun" "$prefix/bin/pmixd" "$prefix/share/man/man1/pmixrun.1" \
    "$prefix/share/man/man1/pmixd.1" "$prefix/share/pmixlab/scenarios/hello.scn" \
    "$prefix/share/doc/pmixlab/README.md" "$prefix/share/doc/pmixlab/examples/hello.c" \
    "$(dirname "$pcdir")/cmake/pmixlab/pmixlabConfig.cmake"; do
    [[ -e $f ]] || bad "missing ${f#"$prefix"/}"
done
if [[ -x $build/simhost/pmixsim ]]; then
    for f in "$prefix/bin/pmixsim" "$prefix/share/man/man1/pmixsim.1"; do
        [[ -e $f ]] || bad "missing ${f#"$prefix"/}"
    done
fi
soname=$(readelf -d "$lib" | sed -nE 's/.*\(SONAME\).*\[(.*)\]/\1/p')
[[ $soname == libpmix.so.2 ]] || bad "$lib has SONAME '$soname', not libpmix.so.2"
for f in "$prefix"/include/pmix*.h "$prefix"/lib*/libpmix.* "$(dirname "$pcdir")"/libpmix.*; do
    [[ -e $f ]] && bad "${f#"$prefix"/} would shadow another PMIx's file"
done
if [[ $pmix_pc == ON ]]; then
    [[ -e $pcdir/pmix.pc ]] || bad "PMIXLAB_INSTALL_PMIX_PC is ON but pmix.pc is not installed"
else
    [[ -e $pcdir/pmix.pc ]] && bad "pmix.pc is installed, but PMIXLAB_INSTALL_PMIX_PC is OFF"
fi

# ---- 2. no RUNPATH into the build or source tree
echo "== RUNPATH of the installed programs and libraries"
while IFS= read -r f; do
    head -c 4 "$f" | grep -q 'ELF' || continue
    rp=$(readelf -d "$f" | sed -nE 's/.*\((RUNPATH|RPATH)\).*\[(.*)\]/\2/p')
    echo "    ${f#"$prefix"/}: ${rp:-(none)}"
    if [[ -n $rp && ($rp == *"$build"* || $rp == *"$src"*) ]]; then
        bad "${f#"$prefix"/} has a RUNPATH into the build or source tree: $rp"
    fi
done < <(find "$prefix/bin" "$libdir" -type f)

# ---- 3. a Standard client, built both ways
echo "== pkg-config --cflags --libs pmixlab"
export PKG_CONFIG_PATH=$pcdir
flags=$(pkg-config --cflags --libs pmixlab)
echo "    $flags"
[[ $flags == *pmix2* || $flags == *openpmix* ]] && bad "pmixlab.pc names another PMIx: $flags"
# shellcheck disable=SC2086
"$cc" -std=gnu11 -o "$work/hello-pc" "$src/examples/hello.c" $flags || bad "hello does not build with pkg-config"

echo "== find_package(pmixlab) (tests/install/client)"
if cmake -S "$here/client" -B "$work/cmake-client" -DCMAKE_C_COMPILER="$cc" \
    -DCMAKE_PREFIX_PATH="$prefix" -DPMIXLAB_CLIENT_SOURCE="$src/examples/hello.c" \
    >"$work/cmake.log" 2>&1 && cmake --build "$work/cmake-client" >>"$work/cmake.log" 2>&1; then
    grep 'pmixlab ' "$work/cmake.log" | sed 's/^/    /'
    cp "$work/cmake-client/client" "$work/hello-cmake"
else
    cat "$work/cmake.log"
    bad "hello does not build with find_package(pmixlab)"
fi

# ---- 4. they load the installed library and run under the installed pmixrun
want=$(realpath "$lib")
for prog in hello-pc hello-cmake; do
    [[ -x $work/$prog ]] || continue
    resolved=$(ldd "$work/$prog" | awk '$1 == "libpmix.so.2" { print $3 }')
    echo "== $prog: ldd: libpmix.so.2 => ${resolved:-(nothing)}"
    [[ -n $resolved && -e $resolved && $(realpath "$resolved") == "$want" ]] ||
        bad "$prog would load ${resolved:-nothing}, not $want"
done

run_job() { # PROG NP PROCS_WITH_LIBPMIX [pmixrun options...]
    local prog=$1 np=$2 nlib=$3 rc=0 out
    shift 3
    echo "== $prefix/bin/pmixrun -n $np $* $prog (LD_DEBUG=libs)"
    out=$(cd "$work" && LD_DEBUG=libs "$prefix/bin/pmixrun" -n "$np" --timeout 30 "$@" "./$prog" 2>&1) || rc=$?
    grep -E 'hello from|calling init: .*libpmix' <<<"$out" | sed 's/^/    /'
    if [[ $rc -ne 0 ]]; then
        grep -v '^ *[0-9]*:' <<<"$out" | tail -n 20
        bad "pmixrun -n $np $* $prog exited with $rc"
        return 0
    fi
    local n
    n=$(grep -c '^hello from rank [0-9]* of '"$np"'$' <<<"$out" || true)
    [[ $n -eq $np ]] || bad "$np lines 'hello from rank R of $np' expected, got $n"
    local inits=0 path
    while IFS= read -r path; do
        inits=$((inits + 1))
        [[ $(realpath "$path") == "$want" ]] || bad "a process loaded $path, not $want"
    done < <(sed -nE 's/.*calling init: (.*libpmix\.so\.2)$/\1/p' <<<"$out")
    [[ $inits -eq $nlib ]] ||
        bad "$nlib processes should have loaded libpmix.so.2 (the ranks), $inits did"
}
[[ -x $work/hello-pc ]] && run_job hello-pc 2 2
[[ -x $work/hello-cmake ]] && run_job hello-cmake 2 2 --nodes 2

# pmixsim_add_program of the CMake package, for the installed pmixsim.
if [[ -x $prefix/bin/pmixsim ]]; then
    echo "== $prefix/bin/pmixsim --nodes 2 --quiet ./hello.so (pmixsim_add_program)"
    if [[ ! -e $work/cmake-client/client_sim.so ]]; then
        bad "find_package(pmixlab) gave no pmixsim_add_program, or it built nothing"
    else
        cp "$work/cmake-client/client_sim.so" "$work/hello.so"
        out=$(cd "$work" && "$prefix/bin/pmixsim" --nodes 2 --quiet ./hello.so 2>&1) || bad "pmixsim ./hello.so failed: $out"
        n=$(grep -c '^hello from rank [0-9]* of 2$' <<<"$out" || true)
        grep '^hello from' <<<"$out" | sed 's/^/    /'
        [[ $n -eq 2 ]] || bad "pmixsim ./hello.so: 2 lines 'hello from rank R of 2' expected, got $n"
    fi
fi

if [[ $fail -ne 0 ]]; then
    echo "check-install: FAILED"
    exit 1
fi
echo "check-install: ok: a client built with pkg-config and with find_package runs on the installed library"
