#!/bin/bash
# slurm.sh - Slurm's own PMIx server (the mpi/pmix plugin of slurmstepd) on
# our libpmix.so.2: a small cluster of one slurmctld and two slurmd "nodes"
# on this machine, and `srun --mpi=pmix -N 2 -n 4` with three programs
# (and -N 1 with one).
#
#   slurm.sh LIBPMIX HELLO FENCE_BENCH MPI_RING_SRC [PMIXRUN]
#
# LIBPMIX is our built libpmix.so.2; HELLO and FENCE_BENCH are built
# programs; MPI_RING_SRC (tests/foreign/mpi_ring.c) is compiled here with
# Open MPI's mpicc when that is installed (the ring is skipped otherwise).
#
# How it works. The plugin does not link libpmix: it dlopens a path
# compiled into it (PMIX2_LIB below). Each slurmd runs in its own mount
# namespace (unshare -m --propagation private) in which LIBPMIX is
# bind-mounted over that path, so slurmstepd, its child, and the tasks
# load our library; nothing outside the namespaces changes. Everything else
# lives in a temporary directory: slurm.conf (SLURM_CONF), a munge key and
# a munged of our own with its socket there, spool, state, pid and log
# files, and each node's TmpFS (the plugin's rendezvous directories; two
# nodes sharing one would collide). Ports are chosen free. The processes
# this script starts (munged, slurmctld, two slurmd) are stopped by pid on
# every exit path, then their children (slurmstepd, tasks) if any remain.
# The cluster's set-up and teardown are slurm_cluster.sh's, shared with
# slurm_suite.sh.
#
# Checks (program output, never srun's status: srun exits 0 even when every
# task failed to launch):
#   - every task sees LIBPMIX mounted over PMIX2_LIB;
#   - hello: four "hello from rank R of 4" lines, on two nodes and on one;
#   - fence_bench: its result line, impl=pmixlab (proof that the tasks ran
#     on our library), errors=0;
#   - mpi_ring (Open MPI 4.1 on our library): four ring lines;
#   - with PMIXRUN: inside `salloc -N 2`, `pmixrun -n 4 HELLO` starts its
#     daemons as one Slurm step named pmixd (squeue -s sees it, on n1 and
#     n2), which connect back to pmixrun over TCP; four hello lines and
#     status 0; and with the daemon of n2 killed during a job, pmixrun
#     names n2 and its ranks and ends the job with a non-zero status.
# Slurm 22.05's default (tree) fence is no barrier when TreeWidth exceeds
# the node count; the ring fence is (docs/slurm.md): the jobs use it,
# unless SLURM_PMIX_FENCE is set already.
#
# Exits 0 when every check holds, 1 otherwise, 77 (skipped, with the
# reason) when this machine cannot run it: not root, no unshare, or Slurm
# and munge neither installed nor installable with apt-get (Debian's
# libpmix-dev provides the plugin's path; the mount needs a file there).
# PMIXLAB_SLURM_KEEP=1 keeps the directory (its logs) for a look afterwards.
set -u

[ $# -eq 4 ] || [ $# -eq 5 ] || {
    echo "usage: slurm.sh LIBPMIX HELLO FENCE_BENCH MPI_RING_SRC [PMIXRUN]" >&2
    exit 2
}
pmixrun=${5:+$(readlink -f "$5")}
lib=$(readlink -f "$1") hello=$(readlink -f "$2") bench=$(readlink -f "$3")
ring_src=$(readlink -f "$4")
PMIX2_LIB=/usr/lib/x86_64-linux-gnu/pmix2/lib/libpmix.so
PLUGIN=/usr/lib/x86_64-linux-gnu/slurm-wlm/mpi_pmix_v4.so

skip() {
    echo "slurm.sh: skipped: $*"
    exit 77
}

[ "$(id -u)" = 0 ] || skip "running slurmd and bind mounts need root"
command -v unshare >/dev/null 2>&1 || skip "no unshare (util-linux)"
# A sanitizer build cannot be loaded into slurmstepd, which was not built
# with the sanitizer (ASan must come first in a process).
deps=$(ldd "$lib" 2>/dev/null || true)
[[ $deps == *libasan* ]] && skip "$lib is built with AddressSanitizer; Slurm runs the plain build"

have_slurm() {
    command -v slurmctld >/dev/null 2>&1 && command -v slurmd >/dev/null 2>&1 &&
        command -v srun >/dev/null 2>&1 && command -v munged >/dev/null 2>&1 &&
        [ -e "$PLUGIN" ] && [ -e "$PMIX2_LIB" ]
}
if ! have_slurm; then
    # ./run installs these (its PACKAGES); a bare ctest run may not have.
    if command -v apt-get >/dev/null 2>&1; then
        echo "slurm.sh: installing slurm-wlm, munge and libpmix-dev"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurm-wlm munge libpmix-dev \
            >/dev/null 2>&1 ||
            { apt-get update -q >/dev/null 2>&1 &&
                DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurm-wlm munge libpmix-dev \
                    >/dev/null 2>&1; }
    fi
    have_slurm || skip "Slurm and munge (slurm-wlm, munge, and libpmix-dev for $PMIX2_LIB) are not installed and could not be"
fi

. "$(dirname "$0")/slurm_cluster.sh"
. "$(dirname "$0")/jobchecks.sh"
slurm_cluster_init slurm
slurm_cluster_config pmixlab 4 SlurmctldDebug=info SlurmdDebug=debug
mkdir -p "$work/tmp"
slurm_cluster_start "$lib" "$PMIX2_LIB"
slurm_cluster_wait_idle || exit 1

cd "$work/tmp" || exit 1
# Every job uses the ring fence, unless told otherwise.
export SLURM_PMIX_FENCE=${SLURM_PMIX_FENCE:-ring}

# run NAME PROGRAM ARGS...: srun the program on 2 nodes (or NODES), 4
# tasks, with PMIx (unless MPI says otherwise); its output (both streams)
# in $work/NAME.out. A step that does not end within 25 s (each takes about
# a second) has hung: that fails, whatever its output (a deadlock in the
# step's PMIx server can come after the program printed everything).
run() {
    local name=$1 mpi=${MPI:-pmix} nodes=${NODES:-2} rc
    shift
    echo "slurm.sh: srun --mpi=$mpi -N $nodes -n 4 $*"
    timeout -k 5 25 srun --mpi="$mpi" -N "$nodes" -n 4 --export=ALL "$@" >"$work/$name.out" 2>&1
    rc=$?
    echo "slurm.sh: srun exited $rc"
    sed 's/^/    /' "$work/$name.out"
    if [ $rc = 124 ] || [ $rc = 137 ]; then
        fail "$name: the step did not end within 25 s"
    fi
}
# count ERE FILE: lines of FILE matching ERE
count() {
    grep -cE "$1" "$2"
}

MPI=none run mounts sh -c 'grep -c " /usr/lib/x86_64-linux-gnu/pmix2/lib/libpmix.so" /proc/self/mountinfo'
[ "$(count '^1$' "$work/mounts.out")" = 4 ] ||
    fail "the tasks do not all see our library mounted over $PMIX2_LIB"

run hello "$hello"
[ "$(count '^hello from rank [0-3] of 4$' "$work/hello.out")" = 4 ] ||
    fail "hello: expected 4 lines 'hello from rank R of 4'"
# One node: every fence is the node's own, no collective through Slurm.
NODES=1 run hello_n1 "$hello"
[ "$(count '^hello from rank [0-3] of 4$' "$work/hello_n1.out")" = 4 ] ||
    fail "hello on one node: expected 4 lines 'hello from rank R of 4'"

run fence_bench "$bench" --iters 5 --warmup 2 --collect-iters 3
grep -qE '^fence_bench impl=pmixlab n=4 .*errors=0$' "$work/fence_bench.out" ||
    fail "fence_bench: no result line with impl=pmixlab n=4 and errors=0"

if command -v mpicc >/dev/null 2>&1; then
    if mpicc -o "$work/mpi_ring" "$ring_src"; then
        OMPI_MCA_btl=self,tcp OMPI_MCA_btl_tcp_if_include=lo run mpi_ring "$work/mpi_ring"
        [ "$(count '^mpi_ring: rank [0-3] of 4 got [0-9]+ from its left, allreduce 4$' \
            "$work/mpi_ring.out")" = 4 ] || fail "mpi_ring: expected 4 ring lines"
    else
        fail "mpicc could not build $ring_src"
    fi
else
    echo "slurm.sh: mpi_ring skipped: Open MPI's mpicc is not installed (libopenmpi-dev)"
fi

if [ -n "$pmixrun" ]; then
    # pmixrun inside an allocation: its daemons are a step named pmixd.
    echo "slurm.sh: salloc -N 2 pmixrun -n 4 hello (daemons as a Slurm step)"
    timeout -k 5 50 salloc -N 2 "$pmixrun" -n 4 --timeout 40 \
        sh -c "\"$hello\" && sleep 4" >"$work/pmixrun.out" 2>&1 &
    sa=$!
    : >"$work/steps.out"
    for _ in $(seq 100); do
        squeue -h -s -o '%j %N' >>"$work/steps.out" 2>&1
        grep -q '^pmixd n\[1-2\]$' "$work/steps.out" && break
        kill -0 $sa 2>/dev/null || break
        sleep 0.2
    done
    wait $sa
    rc=$?
    echo "slurm.sh: salloc exited $rc"
    sed 's/^/    /' "$work/pmixrun.out"
    echo "slurm.sh: steps seen: $(sort -u "$work/steps.out" | tr '\n' ';')"
    [ $rc = 0 ] || fail "salloc pmixrun: status $rc"
    [ "$(count '^hello from rank [0-3] of 4$' "$work/pmixrun.out")" = 4 ] ||
        fail "salloc pmixrun: expected 4 lines 'hello from rank R of 4'"
    grep -q '^pmixd n\[1-2\]$' "$work/steps.out" ||
        fail "salloc pmixrun: no Slurm step named pmixd on n[1-2] while the job ran"

    # A lost daemon: the step's daemon of node 1 killed while its ranks
    # sleep; pmixrun names n2 and its ranks and ends the job, non-zero.
    echo "slurm.sh: salloc -N 2 pmixrun -n 4 sleep 20, the daemon of n2 killed"
    timeout -k 5 50 salloc -N 2 "$pmixrun" -n 4 --timeout 40 sleep 20 >"$work/lost.out" 2>&1 &
    sa=$!
    victim=
    for _ in $(seq 150); do
        for q in /proc/[0-9]*; do
            [ "$({ cat "$q/comm"; } 2>/dev/null)" = pmixd ] || continue
            { tr '\0' '\n' <"$q/environ"; } 2>/dev/null | grep -qx 'SLURM_NODEID=1' || continue
            { tr '\0' '\n' <"$q/environ"; } 2>/dev/null | grep -qx "SLURM_CONF=$SLURM_CONF" ||
                continue
            victim=${q#/proc/}
        done
        [ -n "$victim" ] && break
        kill -0 $sa 2>/dev/null || break
        sleep 0.1
    done
    sleep 1
    [ -n "$victim" ] && kill -KILL "$victim"
    start=$SECONDS
    wait $sa
    rc=$?
    check_lost_daemon "salloc pmixrun lost" "$work/lost.out" n2 "$victim" $rc $start
fi

if [ $failures -gt 0 ]; then
    slurm_show_logs
    exit 1
fi
echo "slurm.sh: all checks passed"
exit 0
