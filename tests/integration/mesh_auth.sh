#!/bin/bash
# mesh_auth.sh - another local user cannot join a job's daemons (docs/pmixd.md,
# "Who may join").
#
#   mesh_auth.sh PMIXRUN BIZCARD
#
# Runs `pmixrun --nodes 2 -n 4 sh -c "BIZCARD full && sleep 20"` with the
# daemon of node1 held back 8 s before it joins the mesh
# (PMIXLAB_PMIXD_JOIN_DELAY), so that node0 waits for a connection that
# claims to be node1. Meanwhile mesh_stranger.py, run as a throwaway user
# (uid 65534, setpriv), makes five tries at each daemon's port with
# plausible frames. Checks: no try gets more than one challenge back (61
# bytes) and none gets the job's data (the business cards, the namespace);
# the over-sized frame is refused at once and the silent connection is
# closed by the daemon's deadline for strangers (5 s); and the job runs to
# its end with every card verified. Skipped (77) where it cannot switch
# users (not root, no setpriv or python3).
set -u
[ $# -eq 2 ] || { echo "usage: mesh_auth.sh PMIXRUN BIZCARD" >&2; exit 2; }
pmixrun=$1 bizcard=$2
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mesh-auth.XXXXXX") || exit 2
pid= holder=
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null
    [ -n "$holder" ] && kill "$holder" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
skip() {
    echo "mesh_auth.sh: skipped: $*"
    exit 77
}
fail() {
    echo "mesh_auth.sh: FAIL: $*"
    failed=1
}
. "$here/jobchecks.sh"
[ "$(id -u)" = 0 ] || skip "switching to another user needs root"
command -v setpriv >/dev/null 2>&1 || skip "no setpriv (util-linux)"
# a python3 that uid 65534 may run (not one under root's home)
py=/usr/bin/python3
[ -x $py ] || skip "no $py"
command -v ss >/dev/null 2>&1 || skip "no ss (iproute2)"
cp "$here/mesh_stranger.py" "$tmp/" && chmod 755 "$tmp" "$tmp/mesh_stranger.py"
setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null ||
    skip "cannot switch to uid 65534 here"

failed=0
# The ranks wait while this process lives (no file: each virtual node has
# a /tmp of its own, and the build directory may be under /tmp).
sleep 120 &
holder=$!
PMIXLAB_PMIXD_JOIN_DELAY=1:8000 "$pmixrun" --nodes 2 -n 4 --timeout 50 \
    sh -c "\"$bizcard\" full && while kill -0 $holder 2>/dev/null; do sleep 0.1; done" \
    >"$tmp/job.out" 2>&1 &
pid=$!

# the daemons' listening ports (ss names their processes to root), those
# whose parent is our pmixrun, and which one is node0's (its command line
# says --node 0)
ports="" port0=""
for _ in $(seq 100); do
    ports="" port0=""
    while read -r port dpid; do
        # this job's daemons only (other jobs may run on this machine)
        [ "$(awk '/^PPid:/ { print $2 }' "/proc/$dpid/status" 2>/dev/null)" = "$pid" ] || continue
        ports="$ports $port"
        tr '\0' ' ' <"/proc/$dpid/cmdline" 2>/dev/null | grep -q -- "--node 0 " && port0=$port
    done < <(ss -ltnpH 2>/dev/null | sed -n 's/.*127\.0\.0\.1:\([0-9]*\) .*"pmixd",pid=\([0-9]*\),.*/\1 \2/p')
    [ "$(echo $ports | wc -w)" = 2 ] && [ -n "$port0" ] && break
    sleep 0.05
done
[ -n "$port0" ] || { cat "$tmp/job.out"; fail "the daemons' ports did not show up"; exit 1; }
echo "mesh_auth.sh: daemons listen on$ports (node0: $port0)"

setpriv --reuid=65534 --regid=65534 --clear-groups $py "$tmp/mesh_stranger.py" $ports \
    >"$tmp/stranger.out" 2>&1
# the ranks stay up (the daemons with them) until the stranger is done
kill "$holder" 2>/dev/null
holder=
grep -v '^HEX' "$tmp/stranger.out"
wait "$pid"
rc=$?
pid=
cat "$tmp/job.out"

[ $rc = 0 ] || fail "the job ended with status $rc"
grep -q "^bizcard full: 4 processes, .*all cards verified" "$tmp/job.out" ||
    fail "the job did not verify every card"
[ "$(grep -c '^try ' "$tmp/stranger.out")" = 10 ] || fail "the stranger did not make its 10 tries"
# what came back: at most one challenge, no business card
stranger_learned_nothing "a stranger" "$tmp/stranger.out"
# node0 answers the PD_PEER with a nonce with its challenge, and closes the
# connection at the made-up proof
stranger_try "$tmp/stranger.out" 2 "$port0" 61 0 ||
    fail "node0 did not answer a PD_PEER with one challenge, then close at a wrong proof"
stranger_try "$tmp/stranger.out" 1 "$port0" 0 0 ||
    fail "node0 did not close at once a PD_PEER without a nonce"
stranger_try "$tmp/stranger.out" 4 "$port0" 0 0 ||
    fail "node0 did not refuse at once a 1 MiB frame before authentication"
stranger_try "$tmp/stranger.out" 5 "$port0" 0 '[4-6]' ||
    fail "node0 did not close a silent stranger after its deadline (5 s)"
[ $failed = 0 ] && echo "mesh_auth.sh: PASS"
exit $failed
