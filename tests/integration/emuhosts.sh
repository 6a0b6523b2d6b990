#!/bin/bash
# emuhosts.sh - K emulated hosts on this machine, each a network namespace
# with its own address and host name and an sshd of its own, so that
# launching over ssh (`pmixrun --hostfile` with an ssh launch agent) can be
# tested for real. The harness makes everything it uses and removes it.
#
#   emuhosts.sh up DIR K     make K hosts emu0..emu{K-1}; DIR must not exist
#   emuhosts.sh down DIR     stop and remove what `up DIR` made
#   emuhosts.sh check DIR    ssh into every host, which must answer `hostname`
#                            with its own name
#   emuhosts.sh selftest K   up, check, down in a temporary directory, and
#                            check that down left nothing behind
#
# What `up` makes (names carry a tag unique to the run, interface names stay
# under 16 characters):
#   - a bridge TAGbr with the address NET.254/24, so that this machine
#     (where pmixrun runs) reaches the hosts and they reach it; NET is the
#     first of 10.213.9, 10.213.10, ... that no interface here has (other
#     runs may be up at the same time), written to DIR/state as net=NET;
#   - per host I: a network namespace TAGnI with a veth pair into the
#     bridge, NET.(I+1)/24 and loopback up, and in it, in a UTS
#     namespace of its own named emuI, an sshd listening on that address
#     (port 22) with the harness's host key, root's login by the harness's
#     key only, its pid in DIR;
#   - in DIR: ssh_config (a Host entry per name: address, user root, the
#     key, known_hosts, batch mode), hostfile (one name a line, for
#     --hostfile), id and id.pub (the client key), state (what down removes).
# A test then runs, say,
#   pmixrun --hostfile DIR/hostfile --launch-agent "ssh -F DIR/ssh_config" ...
# and `ssh -F DIR/ssh_config emu1 hostname` prints emu1.
#
# Needs root, iproute2, bridge and veth support, unshare, ssh and sshd
# (openssh-server: installed with apt-get when missing, as slurm.sh does
# with Slurm; Debian's package start-up scripts are not run in a container
# without init, and nothing here uses them). Exits 77 with a message when
# the machine cannot have the hosts, 1 when a check fails, 2 on misuse.
set -u
NET=10.213.9 # the first subnet tried (up picks one no interface here has)
SSHD=/usr/sbin/sshd

skip() {
    echo "emuhosts.sh: skipped: $*"
    exit 77
}
die() {
    echo "emuhosts.sh: $*" >&2
    exit 1
}

need() {
    [ "$(id -u)" = 0 ] || skip "network namespaces and sshd need root"
    command -v ip >/dev/null 2>&1 || skip "no ip command (iproute2)"
    command -v unshare >/dev/null 2>&1 || skip "no unshare (util-linux)"
    if [ ! -x $SSHD ] && command -v apt-get >/dev/null 2>&1; then
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
            openssh-server >/dev/null 2>&1 ||
            { apt-get update -q >/dev/null 2>&1 &&
                DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
                    openssh-server >/dev/null 2>&1; }
    fi
    [ -x $SSHD ] || skip "no sshd, and openssh-server cannot be installed"
    command -v ssh >/dev/null 2>&1 && command -v ssh-keygen >/dev/null 2>&1 ||
        skip "no ssh or ssh-keygen (openssh-client)"
}

# down DIR: every step is tried, whatever failed before.
down() {
    local dir=$1 tag k pid
    [ -f "$dir/state" ] || return 0
    tag=$(sed -n 's/^tag=//p' "$dir/state")
    k=$(sed -n 's/^k=//p' "$dir/state")
    for ((i = 0; i < k; i++)); do
        if [ -f "$dir/sshd.$i.pid" ]; then
            pid=$(cat "$dir/sshd.$i.pid")
            kill "$pid" 2>/dev/null
            for _ in 1 2 3 4 5 6 7 8 9 10; do
                kill -0 "$pid" 2>/dev/null || break
                sleep 0.1
            done
            kill -9 "$pid" 2>/dev/null
        fi
        ip netns del "${tag}n$i" 2>/dev/null
        ip link del "${tag}v$i" 2>/dev/null
    done
    ip link del "${tag}br" 2>/dev/null
    rm -rf "$dir"
}

up() {
    local dir=$1 k=$2 tag=pxe$$ i addr
    [[ $k =~ ^[1-9][0-9]?$ ]] && [ "$k" -le 50 ] || die "K must be 1 to 50, not '$k'"
    [ -e "$dir" ] && die "$dir exists already"
    need
    mkdir -m 0700 "$dir" || die "cannot create $dir"
    printf 'tag=%s\nk=%s\n' "$tag" "$k" >"$dir/state"
    # From here on a failure removes what was made.
    fail_up() {
        echo "emuhosts.sh: $*" >&2
        down "$dir"
        exit 77
    }
    ssh-keygen -q -t ed25519 -N '' -f "$dir/host_key" >/dev/null &&
        ssh-keygen -q -t ed25519 -N '' -f "$dir/id" >/dev/null &&
        cp "$dir/id.pub" "$dir/authorized_keys" || fail_up "cannot make the keys"
    mkdir -p /run/sshd # sshd's privilege separation directory
    # Harnesses of other runs on this machine may be up at the same time:
    # under a lock, the first subnet 10.213.X (X >= 9) that no interface
    # here has yet, taken by the bridge before the lock goes.
    exec 9>/tmp/pmixlab-emuhosts.lock && flock -w 20 9 || fail_up "cannot take the subnet lock"
    local x
    for ((x = ${NET##*.}; x < 250; x++)); do
        ip -o -4 addr show | grep -q " 10\.213\.$x\." || break
    done
    NET=10.213.$x
    printf 'net=%s\n' "$NET" >>"$dir/state"
    ip link add "${tag}br" type bridge 2>/dev/null || fail_up "cannot create a bridge here"
    ip addr add "$NET.254/24" dev "${tag}br" && ip link set "${tag}br" up ||
        fail_up "cannot configure the bridge"
    exec 9>&-
    : >"$dir/ssh_config"
    : >"$dir/hostfile"
    : >"$dir/known_hosts"
    for ((i = 0; i < k; i++)); do
        addr=$NET.$((i + 1))
        ip netns add "${tag}n$i" 2>/dev/null || fail_up "cannot create a network namespace"
        ip link add "${tag}v$i" type veth peer name "${tag}p$i" 2>/dev/null ||
            fail_up "cannot create a veth pair"
        ip link set "${tag}p$i" netns "${tag}n$i" &&
            ip link set "${tag}v$i" master "${tag}br" &&
            ip link set "${tag}v$i" up &&
            ip -n "${tag}n$i" addr add "$addr/24" dev "${tag}p$i" &&
            ip -n "${tag}n$i" link set "${tag}p$i" up &&
            ip -n "${tag}n$i" link set lo up || fail_up "cannot configure ${tag}n$i"
        cat >"$dir/sshd_config.$i" <<EOF
ListenAddress $addr:22
HostKey $dir/host_key
PidFile $dir/sshd.$i.pid
AuthorizedKeysFile $dir/authorized_keys
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PrintMotd no
LogLevel ERROR
EOF
        cat >>"$dir/ssh_config" <<EOF
Host emu$i
    HostName $addr
    User root
    IdentityFile $dir/id
    IdentitiesOnly yes
    UserKnownHostsFile $dir/known_hosts
    StrictHostKeyChecking yes
    BatchMode yes
    ConnectTimeout 5
    LogLevel ERROR
EOF
        echo "$addr $(cut -d' ' -f1,2 "$dir/host_key.pub")" >>"$dir/known_hosts"
        echo "emu$i" >>"$dir/hostfile"
        # sshd in the host's network namespace and a UTS namespace of its
        # own; each exec keeps the pid, so the pid file names this process
        ip netns exec "${tag}n$i" unshare --uts sh -c \
            "hostname emu$i && exec $SSHD -D -e -f '$dir/sshd_config.$i'" \
            >>"$dir/sshd.$i.log" 2>&1 </dev/null &
        echo $! >"$dir/sshd.$i.pid"
    done
    # ready when every sshd answers on its port (within 10 s)
    for ((i = 0; i < k; i++)); do
        local ok=0
        for _ in $(seq 100); do
            if ! kill -0 "$(cat "$dir/sshd.$i.pid")" 2>/dev/null; then
                fail_up "sshd of emu$i exited: $(tail -3 "$dir/sshd.$i.log")"
            fi
            if ip netns exec "${tag}n$i" bash -c "exec 3<>/dev/tcp/$NET.$((i + 1))/22" \
                2>/dev/null; then
                ok=1
                break
            fi
            sleep 0.1
        done
        [ $ok = 1 ] || fail_up "sshd of emu$i does not answer on $NET.$((i + 1)):22"
    done
}

check() {
    local dir=$1 k got failed=0
    k=$(sed -n 's/^k=//p' "$dir/state" 2>/dev/null)
    [ -n "$k" ] || die "$dir holds no emulated hosts"
    for ((i = 0; i < k; i++)); do
        got=$(timeout 20 ssh -F "$dir/ssh_config" "emu$i" hostname 2>&1)
        if [ "$got" = "emu$i" ]; then
            echo "emuhosts.sh: ssh emu$i hostname: emu$i: ok"
        else
            echo "emuhosts.sh: ssh emu$i hostname: FAILED, got: $got"
            failed=1
        fi
    done
    return $failed
}

selftest() {
    local k=$1 dir failed=0 tag
    dir=$(mktemp -u "${TMPDIR:-/tmp}/emuhosts.XXXXXX")
    trap 'down "$dir"' EXIT
    up "$dir" "$k"
    tag=$(sed -n 's/^tag=//p' "$dir/state")
    check "$dir" || failed=1
    # the machine's own host name is untouched
    [ "$(hostname)" != emu0 ] || { echo "emuhosts.sh: FAILED: this machine is named emu0"; failed=1; }
    # a name that is no host of the harness is refused, not answered
    if timeout 20 ssh -F "$dir/ssh_config" "emu$k" hostname >/dev/null 2>&1; then
        echo "emuhosts.sh: FAILED: ssh to emu$k, which does not exist, succeeded"
        failed=1
    fi
    local pids
    pids=$(cat "$dir"/sshd.*.pid)
    down "$dir"
    trap - EXIT
    for p in $pids; do
        if kill -0 "$p" 2>/dev/null; then
            echo "emuhosts.sh: FAILED: sshd $p still runs after down"
            failed=1
        fi
    done
    if ip netns list | grep -q "^${tag}n" || ip link show "${tag}br" >/dev/null 2>&1; then
        echo "emuhosts.sh: FAILED: namespaces or the bridge of $tag remain after down"
        failed=1
    fi
    [ ! -e "$dir" ] || { echo "emuhosts.sh: FAILED: $dir remains after down"; failed=1; }
    [ $failed = 0 ] && echo "emuhosts.sh: PASS"
    return $failed
}

case ${1:-} in
up) [ $# -eq 3 ] || die "usage: emuhosts.sh up DIR K"; up "$2" "$3" ;;
down) [ $# -eq 2 ] || die "usage: emuhosts.sh down DIR"; down "$2" ;;
check) [ $# -eq 2 ] || die "usage: emuhosts.sh check DIR"; check "$2" ;;
selftest) [ $# -eq 2 ] || die "usage: emuhosts.sh selftest K"; selftest "$2" ;;
*)
    echo "usage: emuhosts.sh up DIR K | down DIR | check DIR | selftest K" >&2
    exit 2
    ;;
esac
