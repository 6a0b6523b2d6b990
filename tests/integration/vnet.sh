#!/bin/bash
# vnet.sh - pmixrun --nodes 2 --isolate net: each virtual node's daemon
# and processes in a network namespace of their own, the nodes joined by
# veth pairs on a bridge that pmixrun makes (in a namespace of its own, so
# it goes with pmixrun).
#
#   vnet.sh PMIXRUN FENCE_RULES BIZCARD
#
# Checks: the ranks of a node share a network namespace that is neither
# the other node's nor this machine's, with the node's address
# (10.214.0.1, .2) on its one interface besides loopback; collecting and
# non-collecting fences and bizcard's exchange (fence and direct gets)
# work across the nodes, whose daemons can only reach each other there;
# the job leaves no interface behind on this machine; and without root
# pmixrun says it cannot and runs the job over loopback. Exits 77 where
# this machine cannot make the namespaces (the fallback message says so).
set -u
pmixrun=$(readlink -f "$1") fence_rules=$(readlink -f "$2") bizcard=$(readlink -f "$3")
failed=0
fail() {
    echo "vnet.sh: FAILED: $*"
    failed=1
}
[ "$(id -u)" = 0 ] || { echo "vnet.sh: skipped: network namespaces need root"; exit 77; }
links_before=$(ip -o link show | wc -l)
mine=$(readlink /proc/self/ns/net)

# 1. Where the ranks are.
out=$(timeout 30 "$pmixrun" --nodes 2 --isolate net -n 4 --timeout 20 sh -c \
    'echo "rank $PMIX_RANK $(hostname) $(readlink /proc/self/ns/net) $(ip -o -4 addr show | grep -v " lo " | awk "{print \$4}" | tr "\n" " ")"' 2>&1)
rc=$?
if printf '%s\n' "$out" | grep -q -- "--isolate net: .*share this machine's network"; then
    echo "vnet.sh: skipped: $(printf '%s\n' "$out" | grep -- '--isolate net' | head -1)"
    exit 77
fi
[ $rc -eq 0 ] || fail "the job: exit status $rc: $out"
for n in 0 1; do
    lines=$(printf '%s\n' "$out" | grep "^rank [0-9] node$n ")
    [ "$(printf '%s\n' "$lines" | grep -c .)" -eq 2 ] || fail "node$n: not two ranks: $out"
    [ "$(printf '%s\n' "$lines" | awk '{print $4}' | sort -u | wc -l)" -eq 1 ] ||
        fail "node$n's ranks are in different network namespaces: $lines"
    printf '%s\n' "$lines" | grep -q " 10\.214\.0\.$((n + 1))/16 *$" ||
        fail "node$n's address is not 10.214.0.$((n + 1))/16: $lines"
done
nets=$(printf '%s\n' "$out" | awk '/^rank/ {print $4}' | sort -u)
[ "$(printf '%s\n' "$nets" | grep -c .)" -eq 2 ] || fail "not two network namespaces: $nets"
printf '%s\n' "$nets" | grep -qx "$mine" && fail "a node is in this machine's network namespace"
[ $failed -eq 0 ] && echo "ok: two nodes, each in its own network namespace with its address"

# 2. Fences and the business-card exchange across the namespaces.
for mode in collect nocollect; do
    o=$(timeout 30 "$pmixrun" --nodes 2 --isolate net -n 4 --timeout 20 "$fence_rules" $mode 2>&1) ||
        fail "fence_rules $mode: exit status $?: $(printf '%s\n' "$o" | tail -5)"
    [ "$(printf '%s\n' "$o" | grep -c ' PASS$')" -eq 4 ] ||
        fail "fence_rules $mode: not 4 PASS: $(printf '%s\n' "$o" | tail -5)"
done
o=$(timeout 30 "$pmixrun" --nodes 2 --isolate net -n 4 --timeout 20 "$bizcard" full 2>&1) ||
    fail "bizcard full: exit status $?: $(printf '%s\n' "$o" | tail -5)"
printf '%s\n' "$o" | grep -q "all cards verified" || fail "bizcard: $(printf '%s\n' "$o" | tail -3)"
[ $failed -eq 0 ] && echo "ok: collecting and plain fences, bizcard full across the namespaces"

# 3. Nothing left on this machine.
links_after=$(ip -o link show | wc -l)
[ "$links_after" -eq "$links_before" ] ||
    fail "interfaces before $links_before, after $links_after: $(ip -o link show | tail -3)"

# 4. Without root: the message, and the job over loopback.
if command -v setpriv >/dev/null 2>&1 &&
    setpriv --reuid=65534 --regid=65534 --clear-groups "$pmixrun" --version >/dev/null 2>&1; then
    o=$(cd / && timeout 30 setpriv --reuid=65534 --regid=65534 --clear-groups \
        env TMPDIR=/tmp "$pmixrun" --nodes 2 --isolate net -n 2 --timeout 20 "$fence_rules" collect 2>&1)
    rc=$?
    [ $rc -eq 0 ] || fail "as uid 65534: exit status $rc: $(printf '%s\n' "$o" | tail -3)"
    printf '%s\n' "$o" | grep -q "pmixrun: --isolate net: network namespaces need root; the virtual nodes share this machine's network" ||
        fail "as uid 65534: no fallback message: $(printf '%s\n' "$o" | head -3)"
    [ $failed -eq 0 ] && echo "ok: without root, a message and the job over loopback"
else
    echo "note: cannot run pmixrun as uid 65534 here: the fallback was not checked"
fi

[ $failed -eq 0 ] && echo "vnet.sh: PASS"
exit $failed
