#!/bin/bash
# netns.sh - a job over three daemons in three network namespaces, joined by
# veth pairs through a bridge, so that the daemons' traffic crosses real
# interfaces rather than loopback. The script creates the namespaces when it
# may (root, iproute2, bridge and veth support) and skips otherwise (exit 77,
# with a message saying why); it removes everything it made.
#
#   netns.sh PMIXRUN JOB_INFO FENCE_RULES BIZCARD JOB_RULES
#
# Checks, each through pmixrun --hostfile with "NAME ADDRESS netns=NS" lines:
# the job data names the three nodes, collecting fences and direct modex work
# across namespaces, and a daemon killed during a fence makes the others'
# fences fail and pmixrun name the node.
set -u
[ $# -eq 5 ] || { echo "usage: netns.sh PMIXRUN JOB_INFO FENCE_RULES BIZCARD JOB_RULES" >&2; exit 2; }
pmixrun=$1 job_info=$2 fence_rules=$3 bizcard=$4 job_rules=$5
tag=pxt$$ # interface names must stay under 16 characters
hosts=$(mktemp "${TMPDIR:-/tmp}/netns-hosts.XXXXXX") || exit 2
made_bridge=0

skip() {
    echo "netns.sh: skipped: $*"
    exit 77
}
cleanup() {
    for i in 0 1 2; do
        ip netns del "${tag}n$i" 2>/dev/null
        ip link del "${tag}v$i" 2>/dev/null
    done
    [ $made_bridge = 1 ] && ip link del "${tag}br" 2>/dev/null
    rm -f "$hosts"
}
trap cleanup EXIT

[ "$(id -u)" = 0 ] || skip "creating network namespaces needs root"
command -v ip >/dev/null 2>&1 || skip "no ip command (iproute2)"
ip link add "${tag}br" type bridge 2>/dev/null || skip "cannot create a bridge here"
made_bridge=1
ip link set "${tag}br" up || skip "cannot bring a bridge up"
for i in 0 1 2; do
    ip netns add "${tag}n$i" 2>/dev/null || skip "cannot create a network namespace"
    ip link add "${tag}v$i" type veth peer name "${tag}p$i" 2>/dev/null ||
        skip "cannot create a veth pair"
    ip link set "${tag}p$i" netns "${tag}n$i" &&
        ip link set "${tag}v$i" master "${tag}br" &&
        ip link set "${tag}v$i" up &&
        ip -n "${tag}n$i" addr add "10.213.7.$((i + 1))/24" dev "${tag}p$i" &&
        ip -n "${tag}n$i" link set "${tag}p$i" up &&
        ip -n "${tag}n$i" link set lo up || skip "cannot configure namespace ${tag}n$i"
    echo "ns$i 10.213.7.$((i + 1)) netns=${tag}n$i" >>"$hosts"
done
ip netns exec "${tag}n0" true 2>/dev/null || skip "ip netns exec does not work here"

failed=0
# check NAME WANT_STATUS_NONZERO COMMAND... with checks in the variables
# PASSES (exact count of " PASS$" lines) and MATCH (an ERE that must match).
run() {
    local name=$1 nonzero=$2
    shift 2
    local out rc
    out=$(timeout 60 "$@" 2>&1)
    rc=$?
    local ok=1
    if [ "$nonzero" = 1 ]; then [ $rc -ne 0 ] || ok=0; else [ $rc -eq 0 ] || ok=0; fi
    if [ -n "$PASSES" ] && [ "$(printf '%s\n' "$out" | grep -c ' PASS$')" != "$PASSES" ]; then
        ok=0
    fi
    if [ -n "$MATCH" ] && ! printf '%s\n' "$out" | grep -Eq "$MATCH"; then ok=0; fi
    if printf '%s\n' "$out" | grep -q "FAIL:"; then ok=0; fi
    if [ $ok = 1 ]; then
        echo "netns.sh: $name: ok (exit $rc)"
    else
        echo "netns.sh: $name: FAILED (exit $rc); its output:"
        printf '%s\n' "$out" | tail -30
        failed=1
    fi
}

PASSES=6 MATCH="node 1 of 3 \(ns1\) with 2 of 6" \
    run job_info.nodes 0 "$pmixrun" --hostfile "$hosts" -n 6 --timeout 30 "$job_info" nodes 3
PASSES=6 MATCH="" \
    run fence_rules.collect 0 "$pmixrun" --hostfile "$hosts" -n 6 --timeout 30 "$fence_rules" collect
PASSES="" MATCH="^bizcard sparse: 6 processes, .*all cards verified" \
    run bizcard.sparse 0 "$pmixrun" --hostfile "$hosts" -n 6 --map-by node --timeout 30 \
    "$bizcard" sparse
PASSES=4 MATCH="daemon of ns2 .*killed by signal 9" \
    run kill_daemon 1 "$pmixrun" --hostfile "$hosts" -n 6 --timeout 30 "$job_rules" kill_daemon
exit $failed
