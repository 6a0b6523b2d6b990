#!/bin/bash
# vhost.sh - virtual nodes that look like hosts (pmixrun --isolate,
# sockhost/vhost.h). Needs root and UTS and mount namespaces; skipped (exit
# 77, with a message saying why) otherwise.
#
#   vhost.sh PMIXRUN JOB_INFO
#
# Checks: under --nodes 2 (isolation by default as root) and --nodes 3
# --isolate host, job_info vhost finds gethostname() equal to PMIX_HOSTNAME
# and in /dev/shm and /tmp only the files of its own node's ranks; with
# --isolate none the nodes share them again (job_info vhost fails); without
# CAP_SYS_ADMIN the job still runs, on shared names and directories, and
# pmixd says so; the machine's host name and /tmp are untouched afterwards.
set -u
[ $# -eq 2 ] || { echo "usage: vhost.sh PMIXRUN JOB_INFO" >&2; exit 2; }
pmixrun=$1 job_info=$2

skip() {
    echo "vhost.sh: skipped: $*"
    exit 77
}
[ "$(id -u)" = 0 ] || skip "virtual nodes with their own host name and /dev/shm need root"
unshare --uts --mount true 2>/dev/null || skip "cannot make UTS and mount namespaces here"

failed=0
machine=$(hostname)
# run NAME WANT_STATUS_NONZERO COMMAND... with checks in PASSES (exact count
# of " PASS$" lines, empty: none) and MATCH (an ERE that must match).
run() {
    local name=$1 nonzero=$2
    shift 2
    local out rc ok=1
    out=$(timeout 60 "$@" 2>&1)
    rc=$?
    if [ "$nonzero" = 1 ]; then [ $rc -ne 0 ] || ok=0; else [ $rc -eq 0 ] || ok=0; fi
    if [ -n "$PASSES" ] && [ "$(printf '%s\n' "$out" | grep -c ' PASS$')" != "$PASSES" ]; then
        ok=0
    fi
    if [ -n "$MATCH" ] && ! printf '%s\n' "$out" | grep -Eq "$MATCH"; then ok=0; fi
    if [ "$nonzero" = 0 ] && printf '%s\n' "$out" | grep -q "FAIL:"; then ok=0; fi
    if [ $ok = 1 ]; then
        echo "vhost.sh: $name: ok (exit $rc)"
    else
        echo "vhost.sh: $name: FAILED (exit $rc); its output:"
        printf '%s\n' "$out" | tail -30
        failed=1
    fi
}

PASSES=4 MATCH="" \
    run nodes2.default 0 "$pmixrun" --nodes 2 -n 4 --timeout 30 "$job_info" vhost
PASSES=6 MATCH="" \
    run nodes3.host 0 "$pmixrun" --nodes 3 --isolate host --map-by node -n 6 --timeout 30 \
    "$job_info" vhost
PASSES=0 MATCH="FAIL: /dev/shm holds 4 of the job's files, want this node's 2" \
    run nodes2.none 1 "$pmixrun" --nodes 2 --isolate none -n 4 --timeout 30 "$job_info" vhost
# the host names the ranks see, one line per node
PASSES="" MATCH="^\[1\] node1$" \
    run nodes2.hostname 0 "$pmixrun" --nodes 2 --map-by node -n 2 --tag-output hostname
if command -v setpriv >/dev/null 2>&1; then
    # root without CAP_SYS_ADMIN: unshare fails, the job runs on the machine's
    PASSES="" MATCH="pmixd node1: the virtual node shares this machine's host name, /dev/shm and /tmp: unshare" \
        run nodes2.fallback 0 setpriv --bounding-set -sys_admin --inh-caps -sys_admin \
        "$pmixrun" --nodes 2 --map-by node -n 2 --tag-output hostname
    PASSES="" MATCH="^\[1\] $machine$" \
        run nodes2.fallback_name 0 setpriv --bounding-set -sys_admin --inh-caps -sys_admin \
        "$pmixrun" --nodes 2 --map-by node -n 2 --tag-output hostname
else
    echo "vhost.sh: nodes2.fallback: skipped (no setpriv to drop CAP_SYS_ADMIN)"
fi
if [ "$(hostname)" != "$machine" ]; then
    echo "vhost.sh: the machine's host name changed from $machine to $(hostname)"
    failed=1
fi
if ls /tmp/pmixlab-vhost.* /dev/shm/pmixlab-vhost.* >/dev/null 2>&1; then
    echo "vhost.sh: files of the isolated runs reached the machine's /tmp or /dev/shm"
    failed=1
fi
rm -f /tmp/pmixlab-vhost.* /dev/shm/pmixlab-vhost.*
exit $failed
