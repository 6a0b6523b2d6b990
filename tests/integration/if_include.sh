#!/bin/bash
# if_include.sh PMIXRUN - pmixrun --if-include: which address daemons on
# other hosts listen on, and which one pmixrun gives them to connect back
# to.
#
# Runs in a network namespace of its own (unshare -n) holding loopback and
# a veth pair, v0 at 10.9.0.1/24 and v1 at 10.9.1.1/24; the "hosts" are
# started by a launch agent that runs pmixd here (it drops the host name),
# so every address is one of this namespace's. A rank lists the TCP
# listeners of pmixd (ss): all must be on the chosen address.
#
# Exits 77 (skipped) without root, unshare, ip, ss or network namespaces;
# 1 on a failed check.
set -u
if [ "${1:-}" != inner ]; then
    pmixrun=$(readlink -f "$1")
    for t in unshare ip ss; do
        command -v $t >/dev/null || { echo "if_include.sh: skipped: no $t"; exit 77; }
    done
    [ "$(id -u)" = 0 ] || { echo "if_include.sh: skipped: needs root"; exit 77; }
    unshare -n true 2>/dev/null || { echo "if_include.sh: skipped: no network namespaces"; exit 77; }
    exec unshare -n bash "$0" inner "$pmixrun"
fi
pmixrun=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/ifinc.XXXXXX")
trap 'rm -rf "$work"' EXIT
failed=0
fail() {
    echo "if_include.sh: FAILED: $*"
    failed=1
}

ip link set lo up &&
    ip link add v0 type veth peer name v1 &&
    ip addr add 10.9.0.1/24 dev v0 && ip addr add 10.9.1.1/24 dev v1 &&
    ip link set v0 up && ip link set v1 up || { echo "if_include.sh: skipped: cannot make veth"; exit 77; }
printf '#!/bin/sh\nshift\nexec "$@"\n' >"$work/agent"
chmod +x "$work/agent"
unset PMIXLAB_PMIXRUN_ADDR

# run ARGS...: pmixrun over the agent; rank 0 lists pmixd's listeners
run() {
    timeout -k 5 60 "$pmixrun" --timeout 30 --launch-agent "$work/agent" "$@" \
        sh -c 'if [ "$PMIX_RANK" = 0 ]; then ss -Htlnp | grep "\"pmixd\"" | awk "{print \"listen \" \$4}"; fi' \
        >"$work/out" 2>"$work/err" </dev/null
    status=$?
    echo "if_include.sh: pmixrun $* -> status $status"
    sed 's/^/    out: /' "$work/out"
    sed 's/^/    err: /' "$work/err"
}

# every pmixd listener on ADDR, and N of them
expect_listen() {
    local n=$1 addr=$2 got all
    all=$(grep -c '^listen ' "$work/out")
    got=$(grep -c "^listen $addr:[0-9]*\$" "$work/out")
    [ "$all" = "$n" ] && [ "$got" = "$n" ] ||
        fail "$n listeners on $addr expected, $got of $all are"
}

# an interface; three hosts at fan-out 1, so two daemons are started by
# other daemons and must get the list too (they connect to pmixrun over
# loopback: without the list they would listen there)
PMIXLAB_PMIXRUN_ADDR=127.0.0.1 run --host a.test,b.test,c.test --launch-fanout 1 --if-include v0
[ $status = 0 ] || fail "--if-include v0: status $status"
expect_listen 3 10.9.0.1

# a subnet, after an interface that is not there; pmixrun's own address
# for the daemons is chosen by the list too
run --host a.test,b.test -n 2 --if-include nosuch0,10.9.1.0/24
[ $status = 0 ] || fail "--if-include nosuch0,10.9.1.0/24: status $status"
expect_listen 2 10.9.1.1

# nothing matches on pmixrun's host: it says so, starts nothing
run --host a.test,b.test -n 2 --if-include 10.7.0.0/16
[ $status = 1 ] || fail "no match at pmixrun: status $status, not 1"
grep -q 'pmixrun: --if-include 10.7.0.0/16: no IPv4 address of this host is on 10.7.0.0/16' \
    "$work/err" || fail "no match at pmixrun: no message"

# nothing matches on the daemons' host (pmixrun's address given): each
# daemon says so and the job fails, without waiting for the deadline
PMIXLAB_PMIXRUN_ADDR=127.0.0.1 run --host a.test,b.test -n 2 --if-include nosuch0
[ $status = 1 ] || fail "no match at the daemons: status $status, not 1"
grep -q 'pmixd on .* (node [01]): --if-include nosuch0: no IPv4 address of this host is on nosuch0' \
    "$work/err" || fail "no match at the daemons: no message"

[ $failed = 0 ] && echo "if_include.sh: all checks passed"
exit $failed
