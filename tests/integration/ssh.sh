#!/bin/bash
# ssh.sh - pmixrun --hostfile with host names starts its daemons over ssh
# (--launch-agent), and they connect back.
#
#   ssh.sh PMIXRUN JOB_INFO BIZCARD
#
# An sshd of the test's own on loopback (its port, host key, authorized key
# and configuration in a temporary directory; stopped and removed on every
# exit path), and an ssh_config with an entry per host name (Host nodeA ->
# 127.0.0.1, port P). Checks, with `pmixrun --hostfile H --launch-agent
# "ssh -F CONFIG" -n 4`:
#   - job_info nodes 2: four PASS lines, the nodes named nodeA and nodeB;
#   - bizcard full: every card verified across the two daemons;
#   - no command line on this machine carries the job's secret (no word of
#     64 hexadecimal digits in /proc/*/cmdline while the job runs);
#   - the daemon of nodeB killed during a job: pmixrun names its node and
#     its lost ranks and ends the job with a non-zero status;
#   - another user (uid 65534) at pmixrun's own port while it waits for a
#     daemon gets at most a challenge, no job data, and the job runs.
# Skipped (77) where it cannot run: not root, no sshd or ssh.
set -u
[ $# -eq 3 ] || { echo "usage: ssh.sh PMIXRUN JOB_INFO BIZCARD" >&2; exit 2; }
pmixrun=$(readlink -f "$1") job_info=$(readlink -f "$2") bizcard=$(readlink -f "$3")
sshd=/usr/sbin/sshd
skip() {
    echo "ssh.sh: skipped: $*"
    exit 77
}
[ "$(id -u)" = 0 ] || skip "an sshd of our own that accepts root needs root"
[ -x $sshd ] || skip "no $sshd (openssh-server)"
command -v ssh >/dev/null 2>&1 && command -v ssh-keygen >/dev/null 2>&1 ||
    skip "no ssh or ssh-keygen (openssh-client)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pmixlab-ssh.XXXXXX") || exit 2
sshd_pid= job= made_run=0
cleanup() {
    [ -n "$job" ] && kill "$job" 2>/dev/null
    if [ -n "$sshd_pid" ]; then
        kill "$sshd_pid" 2>/dev/null
        wait "$sshd_pid" 2>/dev/null
    fi
    [ $made_run = 1 ] && rmdir /run/sshd 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
failed=0
fail() {
    echo "ssh.sh: FAIL: $*"
    failed=1
}
. "$(dirname "$0")/jobchecks.sh"

port=
for _ in $(seq 50); do
    p=$((20000 + RANDOM % 30000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
        port=$p
        break
    fi
done
[ -n "$port" ] || { echo "ssh.sh: no free port"; exit 1; }
ssh-keygen -q -t ed25519 -N '' -f "$tmp/host_key" && ssh-keygen -q -t ed25519 -N '' -f "$tmp/id" ||
    exit 1
cp "$tmp/id.pub" "$tmp/authorized_keys"
cat >"$tmp/sshd_config" <<EOF
Port $port
ListenAddress 127.0.0.1
HostKey $tmp/host_key
AuthorizedKeysFile $tmp/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PidFile $tmp/sshd.pid
LogLevel ERROR
EOF
cat >"$tmp/ssh_config" <<EOF
Host nodeA nodeB
  HostName 127.0.0.1
  Port $port
  User root
  IdentityFile $tmp/id
  IdentitiesOnly yes
  UserKnownHostsFile $tmp/known_hosts
  StrictHostKeyChecking accept-new
  BatchMode yes
  LogLevel ERROR
EOF
printf 'nodeA\nnodeB\n' >"$tmp/hosts"
# sshd's privilege separation directory, if this machine has none
if [ ! -d /run/sshd ]; then
    mkdir -m 755 /run/sshd && made_run=1
fi
$sshd -D -e -f "$tmp/sshd_config" 2>"$tmp/sshd.log" &
sshd_pid=$!
up=0
for _ in $(seq 100); do
    ssh -F "$tmp/ssh_config" nodeA true 2>/dev/null && { up=1; break; }
    kill -0 $sshd_pid 2>/dev/null || break
    sleep 0.1
done
[ $up = 1 ] || { cat "$tmp/sshd.log"; echo "ssh.sh: FAIL: our sshd did not let us in"; exit 1; }
ssh -F "$tmp/ssh_config" nodeB true || { echo "ssh.sh: FAIL: no ssh to nodeB"; exit 1; }
echo "ssh.sh: sshd on 127.0.0.1:$port, hosts nodeA and nodeB"

agent="ssh -F $tmp/ssh_config"
# end_bizcard_job NAME OUT: waits for the job started in the background
# ($job), shows its output (file OUT), and fails unless it ended with
# status 0 and `bizcard full` verified every card.
end_bizcard_job() {
    local name=$1 out=$2
    wait $job
    rc=$? job=
    sed 's/^/    /' "$out"
    [ $rc = 0 ] || fail "$name: the job ended with status $rc"
    grep -q '^bizcard full: 4 processes, .*all cards verified' "$out" ||
        fail "$name: not every card verified"
}
run() { # NAME ARGS...: pmixrun over ssh, output in $tmp/NAME.out, status in rc
    local name=$1
    shift
    echo "ssh.sh: pmixrun --hostfile H --launch-agent \"ssh -F CONFIG\" $*"
    timeout -k 5 40 "$pmixrun" --hostfile "$tmp/hosts" --launch-agent "$agent" --timeout 30 "$@" \
        >"$tmp/$name.out" 2>&1
    rc=$?
    sed 's/^/    /' "$tmp/$name.out"
}

run job_info -n 4 "$job_info" nodes 2
[ $rc = 0 ] || fail "job_info: status $rc"
[ "$(grep -c ' PASS$' "$tmp/job_info.out")" = 4 ] || fail "job_info: expected 4 PASS lines"
grep -q 'node 1 of 2 (nodeB)' "$tmp/job_info.out" || fail "job_info: no rank on node 1, nodeB"

# bizcard, and meanwhile no command line with a 64-digit hexadecimal word
"$pmixrun" --hostfile "$tmp/hosts" --launch-agent "$agent" --timeout 30 -n 4 \
    sh -c "\"$bizcard\" full && sleep 3" >"$tmp/bizcard.out" 2>&1 &
job=$!
for _ in $(seq 20); do
    for c in /proc/[0-9]*/cmdline; do
        { tr '\0' ' ' <"$c"; } 2>/dev/null | grep -Eq '(^| )[0-9a-fA-F]{64}( |$)' &&
            echo "$c: $({ tr '\0' ' ' <"$c"; } 2>/dev/null)" >>"$tmp/argv.out"
    done
    sleep 0.1
done
end_bizcard_job bizcard "$tmp/bizcard.out"
[ -s "$tmp/argv.out" ] && { cat "$tmp/argv.out"; fail "a command line carries a 64-digit hex word"; }

# a lost daemon: kill nodeB's (node 1) while its ranks sleep
"$pmixrun" --hostfile "$tmp/hosts" --launch-agent "$agent" --timeout 30 -n 4 sleep 20 \
    >"$tmp/lost.out" 2>&1 &
job=$!
victim=
for _ in $(seq 100); do
    for c in /proc/[0-9]*/cmdline; do
        # the daemon itself (sshd's grandchild), not the ssh that started it
        [ "$({ cat "${c%/cmdline}/comm"; } 2>/dev/null)" = pmixd ] || continue
        line=$({ tr '\0' ' ' <"$c"; } 2>/dev/null)
        # ours: the pmixd next to this pmixrun (other runs on this machine
        # have daemons of their own)
        case "$line" in "$(dirname "$pmixrun")/pmixd --connect "*"--node 1 --key-stdin"*)
            victim=${c#/proc/} victim=${victim%/cmdline} ;;
        esac
    done
    [ -n "$victim" ] && break
    sleep 0.1
done
sleep 1
[ -n "$victim" ] && kill -KILL "$victim"
start=$SECONDS
wait $job
rc=$? job=
check_lost_daemon lost "$tmp/lost.out" nodeB "$victim" $rc $start

# A stranger at pmixrun's own port while it waits for nodeB's daemon
# (held back 8 s by a slow agent): as at a daemon's port (mesh_auth.sh),
# at most one challenge back, no job data, and the job runs.
py=/usr/bin/python3
if [ -x $py ] && command -v setpriv >/dev/null 2>&1 && command -v ss >/dev/null 2>&1 &&
    setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null; then
    here=$(cd "$(dirname "$0")" && pwd)
    cp "$here/mesh_stranger.py" "$tmp/" && chmod 755 "$tmp" "$tmp/mesh_stranger.py"
    printf '#!/bin/sh\ncase " $* " in *" nodeB "*) sleep 8 ;; esac\nexec "$@"\n' >"$tmp/slow_agent"
    chmod 755 "$tmp/slow_agent"
    "$pmixrun" --hostfile "$tmp/hosts" --launch-agent "$tmp/slow_agent $agent" --timeout 30 -n 4 \
        "$bizcard" full >"$tmp/stranger_job.out" 2>&1 &
    job=$!
    rport=
    for _ in $(seq 100); do
        rport=$(ss -ltnpH 2>/dev/null | sed -n "s/.*:\([0-9]*\) .*\"pmixrun\",pid=$job,.*/\1/p")
        [ -n "$rport" ] && break
        sleep 0.05
    done
    if [ -z "$rport" ]; then
        fail "stranger: pmixrun's port did not show up"
    else
        setpriv --reuid=65534 --regid=65534 --clear-groups $py "$tmp/mesh_stranger.py" "$rport" \
            >"$tmp/stranger.out" 2>&1
        grep -v '^HEX' "$tmp/stranger.out" | sed 's/^/    /'
        stranger_learned_nothing "stranger: the stranger at pmixrun's port" "$tmp/stranger.out"
        stranger_try "$tmp/stranger.out" 2 "$rport" 61 0 ||
            fail "stranger: pmixrun did not answer one challenge, then close at a wrong proof"
        stranger_try "$tmp/stranger.out" 5 "$rport" 0 '[4-6]' ||
            fail "stranger: pmixrun did not close a silent stranger in 5 s"
    fi
    end_bizcard_job stranger "$tmp/stranger_job.out"
else
    echo "ssh.sh: the stranger at pmixrun's port skipped: no $py, setpriv, ss or uid 65534"
fi

[ $failed = 0 ] && echo "ssh.sh: all checks passed"
exit $failed
