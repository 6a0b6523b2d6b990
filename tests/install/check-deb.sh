#!/usr/bin/env bash
# check-deb.sh - install the Debian packages of ./run package on this
# machine, use them, and remove them again.
#
# usage: check-deb.sh DIR SOURCE_DIR
#
# DIR holds pmixlab-VERSION-ARCH-{lib,dev,bin}.deb (cmake/package.cmake).
# As root (or through sudo), on Debian 12:
#   1. refuses to start if a pmixlab package is already installed (this
#      machine's state is not ours to change), or if a file of the packages
#      already exists (Debian's libpmix2 and libpmix-dev must never be
#      overwritten);
#   2. apt-get install ./DIR/pmixlab-*.deb;
#   3. builds examples/hello.c with `pkg-config --cflags --libs pmixlab` and
#      with find_package(pmixlab), runs both under the installed pmixrun
#      (-n 2, and -n 2 --nodes 2) and checks with LD_DEBUG=libs that every
#      process loads the installed libpmix.so.2; runs hello built as a
#      shared object (pmixsim_add_program) and the installed hello scenario
#      in pmixsim;
#   4. apt-get remove the three packages, always, and checks that none of
#      their files is left and no package of them is known to dpkg.
set -euo pipefail

if [[ $# -ne 2 ]]; then
    echo "usage: check-deb.sh DIR SOURCE_DIR" >&2
    exit 2
fi
dir=$(realpath "$1") src=$(realpath "$2")
pkgs=(libpmixlab pmixlab-dev pmixlab-bin)
sudo=()
[[ $(id -u) -eq 0 ]] || sudo=(sudo -n)
apt=("${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 -y -q)

shopt -s nullglob
debs=("$dir"/pmixlab-*.deb)
shopt -u nullglob
[[ ${#debs[@]} -eq 3 ]] || {
    echo "check-deb: expected 3 packages pmixlab-*.deb in $dir, found ${#debs[@]} (./run package makes them)"
    exit 1
}

status_of() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true; }
known() { # PACKAGE: dpkg has it installed, or remembers it (config files)
    local s
    s=$(status_of "$1")
    [[ -n $s && $s != *not-installed ]]
}
for p in "${pkgs[@]}"; do
    if known "$p"; then
        echo "check-deb: $p is already known to dpkg ($(status_of "$p")): not touching it"
        exit 1
    fi
done

files=$(for d in "${debs[@]}"; do dpkg-deb --fsys-tarfile "$d" | tar -t; done | sed 's|^\./|/|' | grep -v '/$' | LC_ALL=C sort -u)
clash=0
while IFS= read -r f; do
    if [[ -e $f || -L $f ]]; then
        echo "check-deb: $f already exists ($(dpkg -S "$f" 2>/dev/null || echo 'no package'))"
        clash=1
    fi
done <<<"$files"
[[ $clash -eq 0 ]] || exit 1
echo "check-deb: $(wc -l <<<"$files") files, none of them on this machine yet"

work=$(mktemp -d "${TMPDIR:-/tmp}/pmixlab-deb.XXXXXX")
fail=0
bad() {
    echo "check-deb: $*"
    fail=1
}
remove() {
    local p f left=0 ours=()
    for p in "${pkgs[@]}"; do
        known "$p" && ours+=("$p")
    done
    if [[ ${#ours[@]} -gt 0 ]]; then
        echo "== apt-get remove ${ours[*]}"
        "${apt[@]}" remove "${ours[@]}" >"$work/remove.log" 2>&1 || {
            cat "$work/remove.log"
            bad "apt-get remove failed"
        }
    fi
    for p in "${pkgs[@]}"; do
        known "$p" && bad "$p is still known to dpkg: $(status_of "$p")"
    done
    while IFS= read -r f; do
        if [[ -e $f || -L $f ]]; then
            bad "$f is left after apt-get remove"
            left=1
        fi
    done <<<"$files"
    [[ $left -ne 0 ]] || echo "check-deb: removed; none of the packages' files is left"
    rm -rf "$work"
}
trap remove EXIT

echo "== apt-get install ${debs[*]##*/}"
(cd "$dir" && "${apt[@]}" install ./pmixlab-*.deb) >"$work/install.log" 2>&1 || {
    cat "$work/install.log"
    bad "apt-get install failed"
    exit 1
}
grep -E '^(Setting up|Unpacking)' "$work/install.log" | sed 's/^/    /'

unset LD_LIBRARY_PATH PKG_CONFIG_PATH PMIXLAB_PMIXD
pmixrun=$(command -v pmixrun || true)
[[ $pmixrun == /usr/bin/pmixrun ]] || bad "pmixrun on PATH is '$pmixrun', not /usr/bin/pmixrun"
lib=$(pkg-config --variable=libdir pmixlab)/libpmix.so.2
want=$(realpath "$lib")
echo "== pkg-config --cflags --libs pmixlab: $(pkg-config --cflags --libs pmixlab)"
# shellcheck disable=SC2046
gcc -std=gnu11 -o "$work/hello-pc" /usr/share/doc/pmixlab/examples/hello.c \
    $(pkg-config --cflags --libs pmixlab) || bad "hello does not build with pkg-config"
echo "== find_package(pmixlab)"
if cmake -S "$src/tests/install/client" -B "$work/cm" \
    -DPMIXLAB_CLIENT_SOURCE=/usr/share/doc/pmixlab/examples/hello.c >"$work/cmake.log" 2>&1 &&
    cmake --build "$work/cm" >>"$work/cmake.log" 2>&1; then
    grep 'pmixlab ' "$work/cmake.log" | sed 's/^/    /'
    cp "$work/cm/client" "$work/hello-cmake"
else
    cat "$work/cmake.log"
    bad "hello does not build with find_package(pmixlab)"
fi

run_job() { # PROG NP PROCS_WITH_LIBPMIX [pmixrun options...]
    local prog=$1 np=$2 nlib=$3 rc=0 out n inits=0 path
    shift 3
    echo "== pmixrun -n $np $* $prog (LD_DEBUG=libs)"
    out=$(cd "$work" && LD_DEBUG=libs pmixrun -n "$np" --timeout 30 "$@" "./$prog" 2>&1) || rc=$?
    grep -E 'hello from|calling init: .*libpmix' <<<"$out" | sed 's/^/    /'
    [[ $rc -eq 0 ]] || bad "pmixrun -n $np $* $prog exited with $rc"
    n=$(grep -c "^hello from rank [0-9]* of $np\$" <<<"$out" || true)
    [[ $n -eq $np ]] || bad "$np lines 'hello from rank R of $np' expected, got $n"
    while IFS= read -r path; do
        inits=$((inits + 1))
        [[ $(realpath "$path") == "$want" ]] || bad "a process loaded $path, not $want"
    done < <(sed -nE 's/.*calling init: (.*libpmix\.so\.2)$/\1/p' <<<"$out")
    [[ $inits -eq $nlib ]] || bad "$nlib processes should have loaded $want, $inits did"
}
[[ -x $work/hello-pc ]] && run_job hello-pc 2 3
[[ -x $work/hello-cmake ]] && run_job hello-cmake 2 5 --nodes 2

if command -v pmixsim >/dev/null; then
    if [[ -e $work/cm/client_sim.so ]]; then
        echo "== pmixsim --nodes 2 --quiet ./hello.so (pmixsim_add_program)"
        cp "$work/cm/client_sim.so" "$work/hello.so"
        out=$(cd "$work" && pmixsim --nodes 2 --quiet ./hello.so 2>&1) || bad "pmixsim ./hello.so failed: $out"
        grep '^hello from' <<<"$out" | sed 's/^/    /'
        [[ $(grep -c '^hello from rank [0-9]* of 2$' <<<"$out" || true) -eq 2 ]] ||
            bad "pmixsim ./hello.so did not print 2 hello lines"
    else
        bad "find_package(pmixlab) gave no pmixsim_add_program, or it built nothing"
    fi
    echo "== pmixsim run /usr/share/pmixlab/scenarios/hello.scn"
    pmixsim run /usr/share/pmixlab/scenarios/hello.scn >"$work/sim.log" 2>&1 || {
        cat "$work/sim.log"
        bad "pmixsim run hello.scn failed"
    }
    tail -n 1 "$work/sim.log" | sed 's/^/    /'
fi
for page in pmixrun pmixd pmixsim; do
    man -w "$page" >/dev/null 2>&1 || bad "no man page for $page"
done

trap - EXIT
remove
if [[ $fail -ne 0 ]]; then
    echo "check-deb: FAILED"
    exit 1
fi
echo "check-deb: ok: the packages install, run hello on the installed library, and remove cleanly"
