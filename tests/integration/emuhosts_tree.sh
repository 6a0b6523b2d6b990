#!/bin/bash
# emuhosts_tree.sh - the launch tree over ssh and what ends it, on five
# emulated hosts (emuhosts.sh: each a network namespace with its own
# address, host name and sshd).
#
#   emuhosts_tree.sh tree PMIXRUN JOB_RULES      the tree, --host, a lost daemon
#   emuhosts_tree.sh signals PMIXRUN JOB_RULES   signals, and pmixrun killed
#
# tree: `--host emu0:2,emu1:2,emu2,emu3,emu4 --launch-fanout 2`: pmixrun
# starts the daemons of emu0 and emu3 itself, emu0's starts emu1's and
# emu2's, emu3's starts emu4's (the agent, a script, logs which host ran
# it for which); every rank runs where --host's slots put it. Then
# job_rules kill_daemon: the last rank, on emu4 (started by emu3's
# daemon), kills its daemon; the others' fence fails and pmixrun names the
# node and exits non-zero.
#
# signals: SIGUSR1 to pmixrun reaches every rank on every host (over the
# daemons' control connections: ssh forwards no signal); then, for SIGINT
# and SIGKILL, pmixrun is signalled while its ranks sleep, and within a few
# seconds no pmixd and no rank remains in any host's namespace (only its
# sshd) and their PMIx directories are gone.
#
# Exits 77 (skipped) where emuhosts.sh cannot make the hosts, 1 on a
# failed check; the hosts are always removed.
set -u
mode=$1
pmixrun=$(readlink -f "$2") job_rules=$(readlink -f "$3")
here=$(dirname "$(readlink -f "$0")")
emu="$here/emuhosts.sh"
dir=$(mktemp -u "${TMPDIR:-/tmp}/emutree.XXXXXX")
failed=0

fail() {
    echo "emuhosts_tree.sh: FAILED: $*"
    failed=1
}

out=$(bash "$emu" up "$dir" 5 2>&1)
rc=$?
if [ $rc -eq 77 ]; then
    echo "$out"
    exit 77
fi
trap 'bash "$emu" down "$dir"' EXIT
[ $rc -eq 0 ] || { echo "$out"; echo "emuhosts_tree.sh: FAILED: emuhosts.sh up: $rc"; exit 1; }
tag=$(sed -n 's/^tag=//p' "$dir/state")

# The agent: ssh with the harness's configuration, and a line per start
# ("WHERE HOST": the host name where it runs, the host it starts).
printf '#!/bin/sh\necho "$(hostname) $1" >>%s/agent.log\nexec ssh -F %s/ssh_config "$@"\n' \
    "$dir" "$dir" >"$dir/agent"
chmod +x "$dir/agent"
# the bridge's address on this machine (emuhosts.sh picks the subnet)
export PMIXLAB_PMIXRUN_ADDR=$(sed -n 's/^net=//p' "$dir/state").254
hosts=emu0:2,emu1:2,emu2,emu3,emu4
run=("$pmixrun" --host "$hosts" --launch-agent "$dir/agent" --launch-fanout 2 --timeout 30)
me=$(hostname)

# What runs in host I's namespace besides its sshd (pids, one line).
leftovers() {
    local i pid
    for ((i = 0; i < 5; i++)); do
        for pid in $(ip netns pids "${tag}n$i" 2>/dev/null); do
            [ "$pid" = "$(cat "$dir/sshd.$i.pid" 2>/dev/null)" ] && continue
            grep -q sshd "/proc/$pid/cmdline" 2>/dev/null && continue
            printf 'emu%d: %s; ' "$i" "$(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline")"
        done
    done
}

case $mode in
tree)
    # 1. The tree and --host's slots: 7 ranks, by slot.
    timeout 60 "${run[@]}" hostname >"$dir/hostname.out" 2>&1 ||
        fail "pmixrun --host $hosts hostname: exit status $? ($(tr '\n' ' ' <"$dir/hostname.out"))"
    for hn in emu0:2 emu1:2 emu2:1 emu3:1 emu4:1; do
        n=$(grep -cx "${hn%:*}" "$dir/hostname.out")
        [ "$n" -eq "${hn#*:}" ] ||
            fail "$n processes on ${hn%:*}, expected ${hn#*:}: $(tr '\n' ' ' <"$dir/hostname.out")"
    done
    want=$(printf '%s emu0\n%s emu3\nemu0 emu1\nemu0 emu2\nemu3 emu4\n' "$me" "$me" | sort)
    got=$(sort "$dir/agent.log")
    [ "$got" = "$want" ] ||
        fail "the launch tree: started $(tr '\n' ',' <"$dir/agent.log"), expected $(echo "$want" | tr '\n' ',')"
    [ $failed -eq 0 ] && echo "ok: 7 ranks on 5 hosts by --host slots, started as a tree of fan-out 2"

    # 2. A daemon two levels down is lost: the job ends, with its name.
    timeout 60 "${run[@]}" -n 5 --map-by node "$job_rules" kill_daemon >"$dir/kill.out" 2>&1
    rc=$?
    [ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "kill_daemon: exit status $rc, expected a failure"
    grep -q "the daemon of emu4 (started by the daemon of emu3).*rank(s) 4" "$dir/kill.out" ||
        fail "pmixrun did not name emu4's daemon: $(grep pmixrun: "$dir/kill.out" | tr '\n' ' ')"
    n=$(grep -c "kill_daemon\] PASS" "$dir/kill.out")
    [ "$n" -eq 4 ] || fail "$n of 4 survivors saw their fence fail: $(tail -5 "$dir/kill.out")"
    [ $failed -eq 0 ] && echo "ok: emu4's daemon (started by emu3's) lost: $(grep -o 'the daemon of emu4.*' "$dir/kill.out")"
    ;;
signals)
    # 1. SIGUSR1 reaches every rank on every host (one each).
    "${run[@]}" -n 5 --map-by node sh -c \
        'trap "echo usr1 on \$(hostname); exit 0" USR1; echo ready; sleep 20 & wait' \
        >"$dir/usr1.out" 2>&1 &
    pid=$!
    for _ in $(seq 100); do
        [ "$(grep -c '^ready$' "$dir/usr1.out" 2>/dev/null)" = 5 ] && break
        sleep 0.1
    done
    kill -USR1 $pid
    wait $pid
    rc=$?
    [ $rc -eq 0 ] || fail "SIGUSR1: exit status $rc ($(tr '\n' ' ' <"$dir/usr1.out"))"
    for h in emu0 emu1 emu2 emu3 emu4; do
        grep -qx "usr1 on $h" "$dir/usr1.out" || fail "SIGUSR1 did not reach the ranks of $h"
    done
    [ $failed -eq 0 ] && echo "ok: SIGUSR1 reached the 5 ranks on 5 hosts"

    # 2. pmixrun interrupted or killed while its ranks sleep.
    for sig in INT KILL; do
        "${run[@]}" -n 5 --map-by node "$job_rules" sleep EMUTREE >"$dir/$sig.out" 2>&1 &
        pid=$!
        for _ in $(seq 100); do
            [ "$(grep -c 'sleeping' "$dir/$sig.out" 2>/dev/null)" = 5 ] && break
            sleep 0.1
        done
        [ "$(grep -c 'sleeping' "$dir/$sig.out")" -eq 5 ] ||
            fail "SIG$sig: the ranks did not start: $(tail -3 "$dir/$sig.out")"
        kill -$sig $pid
        wait $pid 2>/dev/null
        left=""
        for _ in $(seq 50); do
            left=$(leftovers)
            [ -z "$left" ] && break
            sleep 0.2
        done
        [ -z "$left" ] || fail "SIG$sig to pmixrun: still running: $left"
        for d in $(sed -n 's/^.*dir [a-z.]*=//p' "$dir/$sig.out"); do
            [ ! -e "$d" ] || fail "SIG$sig to pmixrun: $d is left"
        done
        [ $failed -eq 0 ] && echo "ok: SIG$sig to pmixrun: no pmixd, rank or directory left on the hosts"
        pkill -KILL -f "job_rules sleep EMUTREE" 2>/dev/null # a failed run's
    done
    ;;
*)
    echo "usage: emuhosts_tree.sh tree|signals PMIXRUN JOB_RULES" >&2
    exit 2
    ;;
esac

[ $failed -eq 0 ] && echo "emuhosts_tree.sh $mode: PASS"
exit $failed
