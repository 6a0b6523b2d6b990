# slurm_cluster.sh - a small Slurm cluster on this machine for the Slurm
# tests (slurm.sh, slurm_suite.sh), sourced, not run: one munged of its own,
# one slurmctld and two slurmd "nodes" n1 and n2 on 127.0.0.1 with free
# ports, everything in a temporary directory, and every process it started
# stopped by pid on every exit path.
#
#   . "$(dirname "$0")/slurm_cluster.sh"
#   slurm_cluster_init NAME          # $work, $pids, $failures, fail(), cleanup on exit
#   slurm_cluster_config CLUSTER CPUS [LINE...]   # slurm.conf, SLURM_CONF
#   slurm_cluster_start [LIB TARGET]               # munged, slurmctld, slurmd n1 n2
#   slurm_cluster_wait_idle || exit 1
#
# PMIXLAB_SLURM_KEEP=1 keeps the directory (its logs) for a look afterwards.

# slurm_cluster_init NAME: makes the work directory (chmod 755, so that the
# nodes' tasks can read it), sets $pids (what we start), $nslinks (the
# nodes' mount namespaces), $failures, and installs the cleanup on exit.
# NAME prefixes every message (NAME.sh: ...).
slurm_cluster_init() {
    slurm_name=$1
    work=$(mktemp -d "${TMPDIR:-/tmp}/pmixlab-$slurm_name.XXXXXX") || exit 2
    chmod 755 "$work"
    pids=()
    nslinks=()
    failures=0
    trap slurm_cluster_cleanup EXIT
    trap 'exit 1' INT TERM
}

# fail MESSAGE: reports a failed check and counts it.
fail() {
    echo "$slurm_name.sh: FAILED: $*"
    failures=$((failures + 1))
}

# slurm_cluster_cleanup: stops what we started, by pid (TERM, then KILL
# after 10 s), then whatever is left in the slurmd mount namespaces
# (slurmstepd and tasks, which slurmd does not keep as its children), which
# were made for this test alone; then removes the work directory unless
# PMIXLAB_SLURM_KEEP=1.
slurm_cluster_cleanup() {
    local p q ns deadline
    for p in "${pids[@]}"; do
        kill -TERM "$p" 2>/dev/null
    done
    deadline=$((SECONDS + 10))
    for p in "${pids[@]}"; do
        while kill -0 "$p" 2>/dev/null && [ $SECONDS -lt $deadline ]; do
            sleep 0.1
        done
        kill -KILL "$p" 2>/dev/null
        wait "$p" 2>/dev/null
    done
    for ns in "${nslinks[@]}"; do
        for q in /proc/[0-9]*; do
            [ "$(readlink "$q/ns/mnt" 2>/dev/null)" = "$ns" ] && kill -KILL "${q#/proc/}" 2>/dev/null
        done
    done
    if [ "${PMIXLAB_SLURM_KEEP:-0}" = 1 ]; then
        echo "$slurm_name.sh: kept $work"
    else
        rm -rf "$work"
    fi
}

# slurm_cluster_config CLUSTER CPUS [LINE...]: chooses three consecutive
# free TCP ports ($base: slurmctld, $base+1 and $base+2: the two slurmd),
# makes the directories under $work and writes $work/slurm.conf for a
# cluster named CLUSTER with two nodes of CPUS CPUs each, the LINEs added
# to its settings; exports SLURM_CONF. Exits 1 if no ports are free.
slurm_cluster_config() {
    local cluster=$1 cpus=$2 b line
    shift 2
    base=
    for _ in $(seq 50); do
        b=$((20000 + RANDOM % 30000))
        if slurm_port_free $b && slurm_port_free $((b + 1)) && slurm_port_free $((b + 2)); then
            base=$b
            break
        fi
    done
    [ -n "$base" ] || { fail "no free ports"; exit 1; }

    mkdir -p "$work"/{state,log,run,munge} "$work"/spool/{n1,n2} "$work"/tmpfs/{n1,n2}
    chmod 700 "$work/munge"
    {
        cat <<EOF
ClusterName=$cluster
SlurmctldHost=$(hostname -s)(127.0.0.1)
SlurmctldPort=$base
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$work/munge/munge.socket
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SlurmdParameters=config_overrides
MpiDefault=none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
EOF
        for line in "$@"; do
            echo "$line"
        done
        cat <<EOF
StateSaveLocation=$work/state
SlurmctldPidFile=$work/run/slurmctld.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdSpoolDir=$work/spool/%n
SlurmdPidFile=$work/run/slurmd-%n.pid
SlurmdLogFile=$work/log/slurmd-%n.log
TmpFS=$work/tmpfs/%n
NodeName=n1 NodeHostname=n1 NodeAddr=127.0.0.1 Port=$((base + 1)) CPUs=$cpus State=UNKNOWN
NodeName=n2 NodeHostname=n2 NodeAddr=127.0.0.1 Port=$((base + 2)) CPUs=$cpus State=UNKNOWN
PartitionName=debug Nodes=n1,n2 Default=YES State=UP OverSubscribe=FORCE:4
EOF
    } >"$work/slurm.conf"
    export SLURM_CONF=$work/slurm.conf
}

# slurm_port_free PORT: true when nothing listens on 127.0.0.1:PORT.
slurm_port_free() {
    ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# slurm_cluster_start [LIB TARGET]: starts munged (a key of our own, so
# that nothing else on this machine matters), slurmctld and slurmd n1 and
# n2, their pids in $pids in that order. With LIB and TARGET each slurmd
# runs in its own mount namespace in which LIB is bind-mounted over TARGET
# (so slurmstepd and the tasks load LIB), and those namespaces go into
# $nslinks for the cleanup.
slurm_cluster_start() {
    local n p ns own_ns
    head -c 1024 /dev/urandom >"$work/munge/munge.key"
    chmod 400 "$work/munge/munge.key"
    munged --force --socket="$work/munge/munge.socket" --key-file="$work/munge/munge.key" \
        --pid-file="$work/munge/munged.pid" --log-file="$work/log/munged.log" \
        --seed-file="$work/munge/seed" --foreground >>"$work/log/munged.out" 2>&1 &
    pids+=($!)

    slurmctld -D -i >"$work/log/slurmctld.out" 2>&1 &
    pids+=($!)
    for n in n1 n2; do
        if [ $# -eq 2 ]; then
            # exec all the way: the pid we keep is slurmd's own
            unshare -m --propagation private sh -c \
                'mount --bind "$1" "$2" && exec slurmd -D -N "$3"' sh "$1" "$2" "$n" \
                >"$work/log/slurmd-$n.out" 2>&1 &
        else
            slurmd -D -N "$n" >"$work/log/slurmd-$n.out" 2>&1 &
        fi
        pids+=($!)
    done
    [ $# -eq 2 ] || return 0
    # The nodes' mount namespaces, once each slurmd is in its own.
    own_ns=$(readlink /proc/$$/ns/mnt)
    for p in "${pids[@]:2}"; do
        for _ in $(seq 50); do
            ns=$(readlink "/proc/$p/ns/mnt" 2>/dev/null) || break
            if [ "$ns" != "$own_ns" ]; then
                nslinks+=("$ns")
                break
            fi
            sleep 0.1
        done
    done
}

# slurm_show_logs: the last 25 lines of each log under $work/log.
slurm_show_logs() {
    local f
    for f in "$work"/log/*; do
        echo "---- $(basename "$f") (last 25 lines)"
        tail -n 25 "$f"
    done
}

# slurm_cluster_wait_idle: waits up to 30 s for both nodes to be idle in
# sinfo, giving up early if one of our daemons died. Returns 0 when they
# are; otherwise reports the failure with sinfo and the logs, returns 1.
slurm_cluster_wait_idle() {
    local p
    for _ in $(seq 150); do
        if [ "$(sinfo -h -N -o '%N %t' 2>/dev/null | grep -c ' idle$')" = 2 ]; then
            echo "$slurm_name.sh: slurmctld and slurmd n1, n2 up (ports $base-$((base + 2)))"
            return 0
        fi
        for p in "${pids[@]}"; do
            kill -0 "$p" 2>/dev/null || break 2
        done
        sleep 0.2
    done
    fail "the two slurmd nodes did not come up idle"
    sinfo -N 2>&1
    slurm_show_logs
    return 1
}
