#!/bin/bash
# tool.sh - tools attached to a running pmixrun job (docs/user-guide.md,
# "Tools"): found by pid, by URI, by namespace, by the system rendezvous
# file, by the environment and by search; their proc table checked against
# what ps says; two at once; DO_NOT_CONNECT and CONNECT_OPTIONAL;
# disconnect and attach again; pmixps; a tool of another user refused;
# OpenPMIx's own tool example built against our headers; the rendezvous
# files gone with pmixrun.
#
#   tool.sh PMIXRUN PMIXPS TOOL_PROBE INCDIR LIBDIR
#
# Every process here runs with TMPDIR set to the test's own directory, so
# the tools see this test's pmixrun only. The part with another user needs
# root and setpriv or runuser; without them it says so and is skipped.
set -u

[ $# -eq 5 ] || { echo "usage: tool.sh PMIXRUN PMIXPS TOOL_PROBE INCDIR LIBDIR" >&2; exit 2; }
pmixrun=$1
pmixps=$2
probe=$3
incdir=$(realpath "$4")
libdir=$(realpath "$5")

. "$(dirname "$0")/harness.sh"
harness_init tool
host=$(hostname)
uid=$(id -u)
export TMPDIR=$work
unset PMIX_SERVER_URI PMIX_NAMESPACE PMIX_RANK PMIX_SERVER_TMPDIR PMIX_SYSTEM_TMPDIR

# ---- a running job: pmixrun -n 4 sleep ----
"$pmixrun" -n 4 --timeout 120 sleep 100 >"$work/job.out" 2>&1 &
job=$!
pids_to_kill="$job"
nspace="pmixrun.$host.$job"
for _ in $(seq 100); do
    [ "$(pgrep -c -P "$job" -x sleep)" = 4 ] && ls "$work"/pmixrun.$uid.$job.*/pmix.$host.tool.$job >/dev/null 2>&1 && break
    sleep 0.1
done
dir=$(ls -d "$work"/pmixrun.$uid.$job.* 2>/dev/null | head -1)
pidfile=$dir/pmix.$host.tool.$job
[ -f "$pidfile" ] || { echo "tool.sh: FAILED: no rendezvous file $pidfile"; cat "$work/job.out"; exit 1; }

# ---- the rendezvous files: 0600 in a 0700 directory, holding the URI ----
[ "$(stat -c %a "$dir")" = 700 ] || fail "job directory mode $(stat -c %a "$dir"), want 700"
for f in "$pidfile" "$dir/pmix.$host.tool.$nspace" "$dir/pmix.$host.tool.$nspace.srv"; do
    [ -f "$f" ] || { fail "no rendezvous file $f"; continue; }
    [ "$(stat -c %a "$f")" = 600 ] || fail "$f has mode $(stat -c %a "$f"), want 600"
done
uri=$(head -1 "$pidfile")
[ "$uri" = "unix:$dir/pmix.sock" ] || fail "rendezvous file holds '$uri'"

# What ps says of the ranks: "pid exe" lines, sorted.
ps_table() {
    for p in $(pgrep -P "$job" -x sleep); do
        echo "$p $(readlink -f /proc/$p/exe)"
    done | sort
}
expect_ps=$(ps_table)
[ "$(echo "$expect_ps" | wc -l)" = 4 ] || fail "ps shows $(echo "$expect_ps" | wc -l) ranks"

# check_probe NAME OUTFILE: the tool got a name of this job's and a proc
# table of 4 ranks whose host, pid and executable are what ps says.
check_probe() {
    local name=$1 out=$2
    grep -q "^init ok $nspace\.tool\.[0-9]* 0$" "$out" || fail "$name: no tool name of the job: $(head -3 "$out")"
    grep -q "^tool $nspace\.tool\.[0-9]* 0 server $nspace\.srv 0$" "$out" || fail "$name: the server's name (PMIx_tool_get_servers): $(grep '^tool' "$out")"
    grep -q "^job $nspace$" "$out" || fail "$name: PMIX_QUERY_NAMESPACES lacks $nspace"
    grep -q "^cmd $nspace " "$out" || fail "$name: PMIX_QUERY_NAMESPACE_INFO lacks $nspace"
    local got ranks
    got=$(awk -v h="$host" '$1 == "proc" && $3 == h { print $4, $7 }' "$out" | sort)
    ranks=$(awk '$1 == "proc" { print $2 }' "$out" | sort -n | tr '\n' ' ')
    [ "$ranks" = "0 1 2 3 " ] || fail "$name: ranks '$ranks'"
    [ "$got" = "$expect_ps" ] || fail "$name: proc table (pid, executable on $host) differs from ps:
$got
--- ps:
$expect_ps"
    grep -q "^error" "$out" && fail "$name: $(grep '^error' "$out")"
    grep -q "^finalized$" "$out" || fail "$name: did not finalize"
}

# ---- by pid, by URI, by namespace, by search, system first ----
for how in "pid $job" "uri $uri" "nspace $nspace" "none" "sysfirst"; do
    set -- $how
    timeout 30 "$probe" $how >"$work/probe.$1.out" 2>&1 || fail "tool_probe $how: exit $?: $(cat "$work/probe.$1.out")"
    check_probe "by $1" "$work/probe.$1.out"
done

# ---- two tools at once: one holds its connection while the other reads ----
timeout 30 "$probe" pid "$job" 3 >"$work/probe.hold.out" 2>&1 &
holder=$!
sleep 0.5
timeout 30 "$probe" nspace "$nspace" >"$work/probe.second.out" 2>&1 || fail "second tool: exit $?"
wait $holder || fail "holding tool: exit $?"
check_probe "holding tool" "$work/probe.hold.out"
check_probe "second tool" "$work/probe.second.out"
a=$(awk '$1 == "init" { print $3 }' "$work/probe.hold.out")
b=$(awk '$1 == "init" { print $3 }' "$work/probe.second.out")
[ -n "$a" ] && [ "$a" != "$b" ] || fail "two tools at once got the names '$a' and '$b'"

# ---- the system server's rendezvous file (pmix.sys.<host>) ----
timeout 30 "$probe" system >"$work/probe.nosys.out" 2>&1 && fail "PMIX_CONNECT_TO_SYSTEM without a system server succeeded"
grep -q "^init PMIX_ERR_NOT_FOUND$" "$work/probe.nosys.out" || fail "no system server: $(cat "$work/probe.nosys.out")"
mkdir -m 700 "$work/sys"
(umask 022 && echo "$uri" >"$work/sys/pmix.sys.$host")
PMIX_SYSTEM_TMPDIR=$work/sys timeout 30 "$probe" system >"$work/probe.system.out" 2>&1 || fail "by system file: exit $?"
check_probe "by system file" "$work/probe.system.out"
chmod 666 "$work/sys/pmix.sys.$host" # writable by others: not to be trusted
PMIX_SYSTEM_TMPDIR=$work/sys timeout 30 "$probe" system >"$work/probe.sysbad.out" 2>&1 && fail "a system file others may write was trusted"

# ---- the environment a launcher gives a tool it starts ----
PMIX_SERVER_URI=$uri TMPDIR=/nonexistent timeout 30 "$probe" none >"$work/probe.env.out" 2>&1 || fail "by environment: exit $?"
check_probe "by environment" "$work/probe.env.out"

# ---- DO_NOT_CONNECT, then attach; CONNECT_OPTIONAL; a dead pid ----
timeout 30 "$probe" noconnect "$job" >"$work/probe.nc.out" 2>&1 || fail "noconnect: exit $?: $(cat "$work/probe.nc.out")"
grep -q "^init ok pmix\.tool\.$host\.[0-9]* 0$" "$work/probe.nc.out" || fail "DO_NOT_CONNECT: $(head -1 "$work/probe.nc.out")"
grep -q "server none (0)" "$work/probe.nc.out" || fail "DO_NOT_CONNECT: a server before attaching"
grep -q "^unconnected query PMIX_ERR" "$work/probe.nc.out" || fail "DO_NOT_CONNECT: a query without a server"
grep -q "^attached $nspace\.tool\.[0-9]* 0 to " "$work/probe.nc.out" || fail "attach after DO_NOT_CONNECT: $(cat "$work/probe.nc.out")"
sed -i 's/^attached \([^ ]*\) .*/init ok \1 0/; /^init ok pmix\.tool/d' "$work/probe.nc.out"
check_probe "attached after DO_NOT_CONNECT" "$work/probe.nc.out"
dead=$(sh -c 'echo $$')
timeout 30 "$probe" optional "$dead" >"$work/probe.opt.out" 2>&1 || fail "CONNECT_OPTIONAL with no server: exit $?"
grep -q "^init ok pmix\.tool\.$host\.[0-9]* 0$" "$work/probe.opt.out" || fail "CONNECT_OPTIONAL: $(cat "$work/probe.opt.out")"
grep -q "server none (0)" "$work/probe.opt.out" || fail "CONNECT_OPTIONAL: a server"
timeout 30 "$probe" pid "$dead" >"$work/probe.dead.out" 2>&1 && fail "a pid with no server: init succeeded"
grep -q "^init PMIX_ERR_NOT_FOUND$" "$work/probe.dead.out" || fail "a pid with no server: $(cat "$work/probe.dead.out")"

# ---- disconnect and attach again ----
timeout 30 "$probe" reattach "$job" >"$work/probe.re.out" 2>&1 || fail "reattach: exit $?: $(cat "$work/probe.re.out")"
grep -q "^after disconnect 0 servers$" "$work/probe.re.out" || fail "disconnect left a server"
grep -q "^attached $nspace\.tool\.[0-9]* 0 to " "$work/probe.re.out" || fail "attach after disconnect"

# ---- pmixps ----
timeout 30 "$pmixps" --pid "$job" >"$work/ps.out" 2>&1 || fail "pmixps --pid: exit $?: $(cat "$work/ps.out")"
for p in $(echo "$expect_ps" | awk '{ print $1 }'); do
    grep -Eq "^ +[0-3]  $host +$p  running +0  /.*sleep$" "$work/ps.out" || fail "pmixps does not list pid $p: $(cat "$work/ps.out")"
done
timeout 30 "$pmixps" --nspace "$nspace" --json >"$work/ps.json" 2>&1 || fail "pmixps --json: exit $?"
if command -v python3 >/dev/null; then
    python3 - "$work/ps.json" "$nspace" "$(echo "$expect_ps" | awk '{ print $1 }' | tr '\n' ' ')" <<'EOF' || fail "pmixps --json: $(cat "$work/ps.json")"
import json, sys
d = json.load(open(sys.argv[1]))
jobs = {j["nspace"]: j for j in d["jobs"]}
pids = sorted(p["pid"] for p in jobs[sys.argv[2]]["procs"])
assert pids == sorted(int(x) for x in sys.argv[3].split()), pids
EOF
fi
timeout 30 "$pmixps" -N --uri "$uri" >"$work/ps.n" 2>&1 && [ "$(cat "$work/ps.n")" = "$nspace" ] || fail "pmixps -N: $(cat "$work/ps.n")"
timeout 30 "$pmixps" --pid "$dead" >/dev/null 2>&1; [ $? = 1 ] || fail "pmixps with no server did not exit 1"
timeout 30 "$pmixps" --pid 1 --uri x >/dev/null 2>&1; [ $? = 2 ] || fail "pmixps with two ways did not exit 2"

# ---- OpenPMIx's tool example, built unchanged against our headers ----
ex=/usr/share/doc/libpmix-dev/examples/tool.c
if ldd "$libdir/libpmix.so.2" 2>/dev/null | grep -q libasan; then
    echo "tool.sh: SKIP the OpenPMIx tool example: the library is built with AddressSanitizer"
elif [ -f "$ex" ] && command -v "${CC:-cc}" >/dev/null; then
    mkdir "$work/ompix"
    cp "$ex" "$(dirname "$0")/../foreign/openpmix-examples/examples.h" "$work/ompix/"
    if (cd "$work/ompix" && ${CC:-cc} -o tool tool.c -I"$incdir" -L"$libdir" -lpmix -Wl,-rpath,"$libdir") >"$work/ompix.cc" 2>&1; then
        timeout 30 "$work/ompix/tool" --url "$uri" >"$work/ompix.out" 2>&1 || fail "OpenPMIx's tool: exit $?"
        grep -Pq "^\t$nspace\tsleep 100$" "$work/ompix.out" || fail "OpenPMIx's tool did not list the job: $(cat "$work/ompix.out")"
        timeout 30 "$work/ompix/tool" --url "$uri" --nspace "$nspace" >"$work/ompix2.out" 2>&1 || fail "OpenPMIx's tool --nspace: exit $?"
        grep -q "^JOB SIZE FOR NSPACE $nspace: 4$" "$work/ompix2.out" || fail "OpenPMIx's tool --nspace: $(cat "$work/ompix2.out")"
    else
        fail "OpenPMIx's tool example does not compile against our headers: $(cat "$work/ompix.cc")"
    fi
else
    echo "tool.sh: SKIP the OpenPMIx tool example: $ex or a C compiler is missing"
fi

# ---- a tool of another user ----
as_other=""
if [ "$uid" = 0 ]; then
    if command -v setpriv >/dev/null; then
        as_other="setpriv --reuid=65534 --regid=65534 --clear-groups"
    elif command -v runuser >/dev/null; then
        as_other="runuser -u nobody --"
    fi
fi
if [ -z "$as_other" ] || ! $as_other test -x "$probe" 2>/dev/null || ! $as_other test -x "$pmixrun" 2>/dev/null; then
    echo "tool.sh: SKIP the other user: needs root, setpriv or runuser, and the build readable by nobody"
else
    chmod 755 "$work"
    # nobody cannot reach our socket (0700 directory), nor trusts our files
    $as_other env TMPDIR="$work" timeout 30 "$probe" uri "$uri" >"$work/other.uri" 2>&1 && fail "nobody attached to root's job by URI"
    $as_other env TMPDIR="$work" timeout 30 "$probe" pid "$job" >"$work/other.pid" 2>&1 && fail "nobody attached to root's job by pid"
    # root reaches nobody's socket, and nobody's server refuses it: the uid
    mkdir -m 700 "$work/nb" && chown 65534:65534 "$work/nb"
    $as_other env TMPDIR="$work/nb" "$pmixrun" -n 1 --timeout 60 sleep 50 >"$work/nb.out" 2>&1 &
    nbjob=$!
    pids_to_kill="$pids_to_kill $nbjob"
    for _ in $(seq 100); do
        ls "$work"/nb/pmixrun.65534.*/pmix.sock >/dev/null 2>&1 && break
        sleep 0.1
    done
    nburi="unix:$(ls "$work"/nb/pmixrun.65534.*/pmix.sock 2>/dev/null | head -1)"
    timeout 30 "$probe" uri "$nburi" >"$work/root.uri" 2>&1 && fail "root attached to nobody's job"
    grep -q "^init PMIX_ERR" "$work/root.uri" || fail "root at nobody's job: $(cat "$work/root.uri")"
    sleep 0.2
    grep -q "refused connection [0-9]* from uid 0" "$work/nb.out" || fail "nobody's pmixrun did not refuse uid 0 itself: $(cat "$work/nb.out")"
    TMPDIR=$work/nb timeout 30 "$probe" none >"$work/root.none" 2>&1 && fail "root found nobody's job by search (its files are not root's)"
    kill -TERM "$nbjob" 2>/dev/null
    wait "$nbjob" 2>/dev/null
fi

# ---- pmixrun ends: its rendezvous files go with it, and an attached tool
# no longer lists it as its server ----
timeout 30 "$probe" lost "$job" >"$work/probe.lost.out" 2>&1 &
lostprobe=$!
for _ in $(seq 100); do
    grep -q "^attached$" "$work/probe.lost.out" && break
    sleep 0.1
done
kill -TERM "$job"
wait "$job" 2>/dev/null
wait "$lostprobe" || fail "tool_probe lost: exit $?: $(cat "$work/probe.lost.out")"
grep -q "^after the server ended 0 servers$" "$work/probe.lost.out" ||
    fail "PMIx_tool_get_servers still lists a server that ended: $(cat "$work/probe.lost.out")"
[ -e "$pidfile" ] && fail "the rendezvous file outlived pmixrun"
ls "$work"/pmixrun.$uid.$job.* >/dev/null 2>&1 && fail "the job directory outlived pmixrun"
timeout 30 "$probe" pid "$job" >"$work/probe.gone.out" 2>&1 && fail "a tool attached to a pmixrun that is gone"

if [ "$failures" -gt 0 ]; then
    echo "tool.sh: $failures failure(s)"
    exit 1
fi
echo "tool.sh: all checks passed"
exit 0
