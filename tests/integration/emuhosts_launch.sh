#!/bin/bash
# emuhosts_launch.sh - pmixrun over hosts reached by ssh, for real: three
# emulated hosts (emuhosts.sh: each a network namespace with its own
# address, host name and sshd), pmixrun --hostfile naming them and an ssh
# launch agent. Each daemon is started by ssh inside its host, connects
# back to pmixrun across the hosts' bridge (PMIXLAB_PMIXRUN_ADDR, the
# bridge's address on this machine), and the daemons' mesh runs between
# the hosts' own addresses.
#
#   emuhosts_launch.sh PMIXRUN BIZCARD LIBDIR SRC_DIR   (LIBDIR: our libpmix.so.2)
#
# Checks: a plain program runs twice on each host and sees the host's
# name; bizcard's fence and direct gets verify every card across the three
# hosts; Open MPI's ring (when mpicc is installed) runs over the hosts,
# with the variables it needs forwarded by -x as with mpirun over ssh.
# Exits 77 (skipped) where emuhosts.sh cannot make the hosts, 1 on a
# failed check; the hosts are always removed.
set -u
pmixrun=$(readlink -f "$1") bizcard=$(readlink -f "$2") libdir=$(readlink -f "$3")
src=$(readlink -f "$4")
here=$(dirname "$(readlink -f "$0")")
emu="$here/emuhosts.sh"
dir=$(mktemp -u "${TMPDIR:-/tmp}/emulaunch.XXXXXX")
failed=0

fail() {
    echo "emuhosts_launch.sh: FAILED: $*"
    failed=1
}

out=$(bash "$emu" up "$dir" 3 2>&1)
rc=$?
if [ $rc -eq 77 ]; then
    echo "$out"
    exit 77
fi
trap 'bash "$emu" down "$dir"' EXIT
[ $rc -eq 0 ] || { echo "$out"; echo "emuhosts_launch.sh: FAILED: emuhosts.sh up: $rc"; exit 1; }

# The agent: ssh with the harness's configuration (one word, so that it can
# also go through PMIXRUN_OPTS, which is split at spaces).
printf '#!/bin/sh\nexec ssh -F %s/ssh_config "$@"\n' "$dir" >"$dir/agent"
chmod +x "$dir/agent"
# the bridge's address on this machine (emuhosts.sh picks the subnet)
export PMIXLAB_PMIXRUN_ADDR=$(sed -n 's/^net=//p' "$dir/state").254
run=("$pmixrun" --hostfile "$dir/hostfile" --launch-agent "$dir/agent" --timeout 50)

# 1. Each host's name, as its processes see it: two ranks a host, by slot.
timeout 60 "${run[@]}" -n 6 --map-by node hostname >"$dir/hostname.out" 2>&1 ||
    fail "pmixrun -n 6 hostname: exit status $? ($(tr '\n' ' ' <"$dir/hostname.out"))"
for h in emu0 emu1 emu2; do
    n=$(grep -cx "$h" "$dir/hostname.out")
    [ "$n" -eq 2 ] || fail "$n processes on $h, expected 2: $(tr '\n' ' ' <"$dir/hostname.out")"
done
echo "ok: two processes on each of emu0, emu1, emu2"

# 2. A fence and direct gets across the hosts.
timeout 60 "${run[@]}" -n 6 "$bizcard" full >"$dir/bizcard.out" 2>&1 ||
    fail "bizcard full: exit status $?"
grep -q "all cards verified" "$dir/bizcard.out" ||
    fail "bizcard did not verify every card: $(tail -3 "$dir/bizcard.out")"
echo "ok: $(grep 'all cards verified' "$dir/bizcard.out" | head -1)"

# 3. Open MPI 4.1 over the hosts. Over ssh a rank has its daemon's
# environment, not pmixrun's: our library's directory and Open MPI's
# launcher variable go with -x, as users give them to mpirun.
if command -v mpicc >/dev/null 2>&1; then
    PMIXRUN_OPTS="--hostfile $dir/hostfile --launch-agent $dir/agent -x LD_LIBRARY_PATH -x FLUX_JOB_ID" \
        timeout 120 bash "$src/tests/foreign/run-foreign.sh" openmpi "$pmixrun" \
        "$libdir" "$src/tests/foreign/mpi_ring.c" 6 >"$dir/ring.out" 2>&1
    rc=$?
    if [ $rc -eq 77 ]; then # run-foreign.sh cannot run it here (a sanitizer build)
        echo "note: the Open MPI ring was skipped: $(tail -1 "$dir/ring.out")"
    else
        [ $rc -eq 0 ] || fail "Open MPI ring: exit status $rc ($(tail -3 "$dir/ring.out" | tr '\n' ' '))"
        n=$(grep -c "^mpi_ring: rank [0-5] of 6 got [0-5] from its left, allreduce 6$" "$dir/ring.out")
        [ "$n" -eq 6 ] || fail "Open MPI ring: $n of 6 ranks right: $(tail -6 "$dir/ring.out" | tr '\n' ' ')"
        [ $rc -ne 0 ] || [ "$n" -ne 6 ] || echo "ok: Open MPI ring, 6 ranks over 3 hosts"
    fi
else
    echo "note: Open MPI's mpicc is not installed: the ring was not run"
fi

[ $failed -eq 0 ] && echo "emuhosts_launch.sh: PASS"
exit $failed
