#!/bin/bash
# simtest.sh - pmixsim's tests (ctest label `sim`); see simtests.cmake.
#
#   simtest.sh formula PMIXSIM NODES ALGO SIZE
#       Every fence of `fence --iters 3 [--size SIZE]` on a crossbar under
#       CM02 ran ALGO and took the formula's time within 1%.
#   simtest.sh same-as-pmixrun PMIXSIM PMIXRUN PROGRAM ARGS...
#       PROGRAM ARGS gives the same output in pmixsim (1 node x 4 processes,
#       the workload named like the program)
#       as under `pmixrun -n 4`, once wall-clock figures are masked; and it
#       also succeeds on 4 nodes x 2 processes.
#   simtest.sh sessions PMIXSIM PMIXRUN SESSIONS SESSIONS_SO
#       examples/sessions.c with two process sets of 2 (pmixsim's --pset
#       ocean:2 --pset ice:2) on 2 nodes x 2 processes, on 4 nodes x 1,
#       and loaded from SESSIONS_SO: each set's group gets its context id,
#       and the lines are those of `pmixrun -n 2 --pset ocean SESSIONS : -n
#       2 --pset ice SESSIONS` once the ids are masked.
#   simtest.sh repeat PMIXSIM ARGS...
#       Two runs with the same arguments print the same thing (all but the
#       wall time and memory line).
#   simtest.sh coords PMIXSIM TOPOLOGY
#       The coords workload on 8 nodes x 2 processes, 2 planes, prints the
#       coordinates, NICs, endpoints, dims and shapes docs/simulation.md
#       gives for that topology (torus 2x2x2, fattree radix 8; dragonfly
#       on 32 nodes x 1 process).
#   simtest.sh coords-pmixrun PMIXRUN COORDS
#       Under pmixrun without a topology coords reads the flat default
#       (one switch: dims 1, every node at port 0 of a one-node job).
#   simtest.sh coords-same PMIXRUN PMIXSIM COORDS FILE NODES WANT...
#       One description serves both hosts: `pmixrun --nodes NODES --topology
#       FILE coords` and `pmixsim --nodes NODES --topology FILE coords` print
#       the same planes, dims, shapes and coordinates (NIC and endpoint names
#       differ: node0.nic0 and node-0.nic0), and those lines hold every WANT
#       line (so neither is the flat default).
#   simtest.sh coords-platform PMIXRUN PMIXSIM COORDS FILE NODES WANT...
#       The same with `pmixsim --platform FILE` (the file is the simulated
#       platform itself, not a description pmixsim generates one from):
#       the coordinates are those of the cluster pmixrun reads.
#   simtest.sh coords-hosts PMIXSIM FILE WANT...
#       `pmixsim --platform FILE coords` on every host of FILE prints every
#       WANT line: a node's coordinate, NIC and endpoint are those of its
#       host, found by name (SimGrid lists hosts by name: node-10 before
#       node-2).
#   simtest.sh plane-down PMIXSIM
#       Plane 0 goes down in the middle of a ring fence: every fence still
#       succeeds (the cut transfers are retried on plane 1, later ones
#       fail over); a NIC going down raises PMIX_NETWORK_COORDS_UPDATED to
#       every process that registered for it.
#   simtest.sh hier-groups PMIXSIM
#       The hierarchical algorithm's groups follow the coordinates: its
#       message count on 64 nodes is that of 8 leaf switches of 8 (fat
#       tree radix 16), 16 x-lines of 4 (torus 4x4x4), 2 dragonfly groups
#       of 32.
#   simtest.sh replay PMIXSIM
#       A run with faults drawn from a seed (a random node crashing at a
#       random time, a random process killed as it enters a fence) gives
#       the same event log and the same report twice; another seed gives
#       another log. The log shows the crash, the kill, the detection and
#       the survivors' failed fences.
#   simtest.sh depart PMIXSIM
#       Rank 0 finalizes and exits after a barrier while the others go on
#       to a second one (seq's leave:0), on 64 nodes (with an actor per
#       server too) and on 1,024: the event log shows `depart rank 0 node
#       0`, then every other node's fence ending with
#       PMIX_ERR_LOST_CONNECTION and every other process getting it, all
#       within 1 ms of simulated time although the fence's bound is 10 s.
#   simtest.sh depart-end PMIXSIM
#       The end of a run whose processes end at different times (the spawn
#       workload: the first job, then the spawned one): on 256 nodes x 1
#       and 64 x 4, every node hears of every departure in batches, so the
#       host core's departure messages stay within 3 N lg^2 N (N nodes, two
#       jobs; the sanitized build, whose actors are threads, ends runs in
#       another order and sends up to twice what the release build does;
#       one message per departure and node, as before, was about 2 N^2 x
#       ppn: 130,000 and 31,000), and no node hears of a departure twice
#       (records <= departures x (N - 1)).
#   simtest.sh pubsub PMIXSIM PMIXRUN PUBSUB
#       The data service (simpubsub.c): the pubsub workload prints the same
#       lines (the namespace masked) in pmixsim on 1 node x 4 processes, 2
#       x 2, 4 x 1 and 4 x 1 with --server-actors as PUBSUB (its standalone
#       build) under `pmixrun -n 4` and `pmixrun --nodes 2 -n 4`; the event
#       log shows the three PMIX_WAIT lookups parked at node 0 before rank
#       0's publish and answered by it, rank 0's own wait ending in
#       PMIX_ERR_TIMEOUT after 1 s of simulated time, and each request
#       taking simulated time.
#   simtest.sh cpu-model PMIXSIM
#       --cpu model:1us charges 1 us per message handled: a dissemination
#       barrier takes its formula plus lg P us (one message handled per
#       round on the critical path), on 16 and 64 nodes; without --cpu it
#       takes the formula.
#   simtest.sh bad-args PMIXSIM
#       Bad arguments end with status 2 and a message naming the problem;
#       a workload's bad argument is reported once, by rank 0, and the
#       other processes do not run.
#   simtest.sh one-actor PMIXSIM
#       With one process per node, the default (the process's actor also
#       runs its node's server: one actor per node) and --server-actors
#       (two) print the same report and the same events at the same times
#       (within 1e-4; but for the wall line and the run's final clock):
#       barriers and collecting
#       fences of every algorithm, seq (with direct modex Gets) and hello,
#       on a crossbar; with a slow loopback link too, where TCP gamma bounds
#       a large frame's rate (one actor computes a frame's loopback time,
#       an actor per server has SimGrid transfer it). (Where a local frame would wait behind a network
#       transfer with an actor per server, as in bizcard, the two differ:
#       docs/simulation.md, "How far to trust it".) The wall line counts
#       the actors.
#   simtest.sh jobkeys PMIXSIM PMIXRUN JOBKEYS [JOBKEYS_SO]
#       The host core's job information: examples/jobkeys (which reserved
#       job, node, app and process keys a process reads) prints the same
#       lines under `pmixrun -n 4`, `pmixrun --nodes 2 -n 4` and `pmixsim
#       --nodes 2 --ppn 2`, every layout key readable; the keys only a real
#       machine has (directories, cpuset, locality: "host" lines) are all
#       there under pmixrun, and none in pmixsim. With JOBKEYS_SO, pmixsim
#       runs that shared object (`pmixsim ... ./jobkeys.so`) instead of its
#       built-in jobkeys.
#   simtest.sh program-same PMIXSIM PMIXRUN NODES PROGRAM PROGRAM_SO ARGS...
#       PROGRAM built as a shared object and loaded (`pmixsim --nodes 2
#       --ppn 2 ./PROGRAM.so ARGS`, from its directory) prints the same
#       report (fences, simulated times; but the wall line and the workload's
#       name) and the same lines, in the same order, as pmixsim's built-in
#       PROGRAM; and its lines are those of `pmixrun -n 4 PROGRAM ARGS` (1
#       in NODES) and `pmixrun --nodes 2 -n 4 PROGRAM ARGS` (2: the nodes as
#       simulated; a program whose lines say what is local, as bizcard's
#       do, gives other lines on one node).
#   simtest.sh program-errors PMIXSIM NOMAIN_SO LINKED_SO EXECUTABLE
#       pmixsim refuses, with status 2 and a sentence, a missing file, a
#       file that is not ELF, a shared object without main, one linked
#       against libpmix.so.2, an executable, and --privatize with a
#       built-in workload.
#   simtest.sh program-globals PMIXSIM GLOBALS_SO
#       A program with writable globals is refused with their names; with
#       --privatize every simulated process has its own copy of them.
#   simtest.sh program-exports PMIXSIM LIBPMIX
#       pmixsim exports every function that libpmix.so.2 exports (a loaded
#       program may call any of them), and no function of its own (but
#       for the sanitizers' hooks, named __*).
#   simtest.sh fence-sets PMIXSIM
#       The participant set names the collective (the host core's
#       px_fence_set): on 2 nodes x 2, the even and the odd ranks fence as
#       two sets over the same two nodes, twice each, with data, then the
#       whole job: three collectives (three set ids in the event log), each
#       parity fence an allgather of two records, and every value checked.
#   simtest.sh spawn PMIXSIM
#       The spawn workload (simspawn.c): on 16 nodes x 2 (32 children), 8 x
#       1 from a rank outside the new job's nodes (4 children) and 8 x 1
#       from rank 0, every child starts (PMIX_PARENT_ID, its collecting
#       fence, a peer's card), the report's spawn line has each part and
#       the start time within 1e-4 of its formula (the launch tree and the
#       fence exactly their formulas': powers of two, where every node
#       starts its part at once), and the errors come back: a
#       workload that does not exist, more processes than slots.
#   simtest.sh events PMIXSIM
#       The events workload: an event notified with range namespace on 8
#       nodes x 1, and global on 13 x 2 from rank 3, reaches the handler of
#       every other process (one "got the event" line each), every node
#       (reached=NODES), in ceil(lg NODES) hops of its formula.
#   simtest.sh invite PMIXSIM
#       The invite workload (group invitations across nodes): on 4 nodes x 2
#       from rank 0 every process joins; on 8 x 1 from rank 5 with
#       --decline the odd ranks decline; on 3 x 3 from rank 4; on 4 x 1
#       from rank 1 with declines and on 4 x 2 from rank 2, the last member
#       then leaves (--leave) and the others hear PMIX_GROUP_LEFT before they
#       destruct the group without it. Every member
#       prints the same membership size and context id, every decliner
#       says so; the report has one PMIX_GROUP_INVITED event per invited
#       process of another node, each to that node alone (the first in one
#       hop of its formula), every event reached all its nodes, and the
#       construct and destruct ended on every member node. The report's
#       invitation line: every remote invitation answered, the whole
#       within 3% of its formula (invitations one after the other, the
#       measured answers, the outcome's tree and the construct's formula),
#       and on 4 x 2 (a quiet network) the invitations and the outcome
#       each within 1e-4 of their formulas.
#   simtest.sh invite-pmixrun PMIXSIM PMIXRUN INVITE
#       The invite workload built standalone (INVITE) under `pmixrun
#       --nodes 2 -n 4`, as it is, with --decline and with --leave, prints the lines it
#       prints in pmixsim on 2 nodes x 2 (context ids masked): one program,
#       the same invitation across nodes on both hosts.
#   simtest.sh connect PMIXSIM
#       The spawn workload with --connect: on 8 x 1, 4 children from rank 7;
#       on 13 x 2, 6 children from rank 3. Every process of both jobs
#       connects, reads a card of the other job and disconnects; the
#       connect and the disconnect are group operations over every node
#       (the parent's), the disconnect within 1e-4 of its formula and the
#       connect (uneven blocks, entered as each process arrives) within 10%.
#       Then with a parent killed (--fault) before or during the connect:
#       every survivor of both jobs gets PMIX_GROUP_MEMBER_FAILED from the
#       connect or the disconnect, once, within the bound.
#   simtest.sh group-fault PMIXSIM
#       A member of the group workload killed while the job constructs:
#       16 x 2 with rank 5 killed at 50 ns (as the others' requests reach
#       their servers, before its own is sent) gives every survivor
#       PMIX_GROUP_MEMBER_FAILED from construct 0; 16 x 2 at 1 us and 8 x
#       1 with rank 3 killed at 3 us (after its node sent its part: nodes
#       that complete the construct before the news comes succeed there)
#       give every survivor PMIX_GROUP_MEMBER_FAILED from construct 0 or
#       from its destruct, once each. The killed rank says nothing, and
#       the run ends within 1.1 s simulated (the failure bound), never a
#       hang.
set -u
cmd=$1
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

case $cmd in
fence-sets)
    sim=$1
    "$sim" --quiet --nodes 2 --ppn 2 --events "$tmp/ev" seq put:100 fence:parity,collect get:2 \
        fence:parity fence:collect get:next >"$tmp/out" 2>"$tmp/err" ||
        fail "pmixsim seq with parity fences: $(cat "$tmp/err")"
    cat "$tmp/out"
    sets=$(awk -F'\t' '$2 == "fence-start" { split($4, w, " "); print w[2] }' "$tmp/ev" | sort -u | wc -l)
    [[ $sets -eq 3 ]] || fail "expected 3 fence sets (even, odd, all), the event log names $sets"
    awk -F'\t' '/^[0-9]/ && $2 == "allgather" && $1 <= 2 && $8 != 2 { bad++ } END { exit bad }' \
        "$tmp/out" || fail "a parity allgather did not carry exactly two records"
    grep -q "seq: 4 processes, 6 steps: ok" "$tmp/out" || fail "the sequence did not end ok"
    echo "ok: $sets fence sets"
    ;;
jobkeys)
    sim=$1 run=$2 prog=$3 wl=${4:-jobkeys}
    "$run" -n 4 "$prog" >"$tmp/one" 2>"$tmp/err" || fail "pmixrun -n 4 jobkeys: $(cat "$tmp/err")"
    "$run" --nodes 2 -n 4 "$prog" >"$tmp/two" 2>"$tmp/err" ||
        fail "pmixrun --nodes 2 -n 4 jobkeys: $(cat "$tmp/err")"
    "$sim" --quiet --nodes 2 --ppn 2 "$wl" >"$tmp/simout" 2>"$tmp/err" ||
        fail "pmixsim --nodes 2 --ppn 2 $wl: $(cat "$tmp/err")"
    grep -v -e '^#' -e '^fence	' -e '^[0-9]' "$tmp/simout" >"$tmp/sim"
    cat "$tmp/one"
    [[ $(grep -vc '^host ' "$tmp/one") -ge 40 ]] || fail "too few layout keys printed"
    grep -v '^host ' "$tmp/one" | grep -F ': ' && fail "pmixrun lacks the layout keys above"
    grep '^host ' "$tmp/one" | grep -F ': ' && fail "pmixrun lacks the host keys above"
    diff <(grep -v '^host ' "$tmp/one") <(grep -v '^host ' "$tmp/two") ||
        fail "pmixrun --nodes 2 gives other keys than pmixrun alone"
    diff <(grep -v '^host ' "$tmp/one") <(grep -v '^host ' "$tmp/sim") ||
        fail "pmixsim gives other keys than pmixrun"
    [[ $(grep '^host ' "$tmp/sim" | grep -vc ': not found') -eq 0 ]] ||
        fail "pmixsim gives a host key it has no real value for: $(grep '^host ' "$tmp/sim")"
    echo "ok: the same $(grep -vc '^host ' "$tmp/one") layout keys under pmixrun and pmixsim"
    ;;
program-same)
    sim=$1 run=$2 layouts=$3 exe=$4 so=$5 prog=$(basename "$4")
    shift 5
    mask='s/[0-9]+\.[0-9]+ s/X s/g'
    (cd "$(dirname "$so")" && "$sim" --quiet --nodes 2 --ppn 2 "./$(basename "$so")" "$@") \
        >"$tmp/so" 2>"$tmp/so.err" ||
        fail "pmixsim --nodes 2 --ppn 2 ./$(basename "$so") $*: $(cat "$tmp/so.err")"
    "$sim" --quiet --nodes 2 --ppn 2 "$prog" "$@" >"$tmp/builtin" 2>"$tmp/builtin.err" ||
        fail "pmixsim --nodes 2 --ppn 2 $prog $*: $(cat "$tmp/builtin.err")"
    grep -q "workload=./$(basename "$so") " "$tmp/so" || fail "the report does not name ./$(basename "$so")"
    echo "--- pmixsim --nodes 2 --ppn 2 ./$(basename "$so") $*:"
    cat "$tmp/so"
    norm() { grep -v '^# wall:' "$1" | sed -E "s/ workload=[^ ]+//; $mask"; }
    diff <(norm "$tmp/builtin") <(norm "$tmp/so") ||
        fail "the loaded program's run differs from the built-in $prog's"
    grep -v -e '^#' -e '^fence	' -e '^[0-9]' "$tmp/so" | sed -E "$mask" | sort >"$tmp/a"
    for k in $layouts; do
        opts=(-n 4)
        [[ $k == 1 ]] || opts=(--nodes "$k" -n 4)
        "$run" "${opts[@]}" "$exe" "$@" >"$tmp/real" 2>"$tmp/real.err" ||
            fail "pmixrun ${opts[*]} $prog $*: $(cat "$tmp/real.err")"
        sed -E "$mask" "$tmp/real" | sort >"$tmp/b"
        diff "$tmp/b" "$tmp/a" ||
            fail "the loaded program's lines differ from pmixrun ${opts[*]} $prog's"
        echo "ok: the same lines as under pmixrun ${opts[*]}"
    done
    echo "ok: the same run as the built-in $prog"
    ;;
program-errors)
    sim=$1 nomain=$2 linked=$3 exe=$4
    check() { # EXPECTED-WORDS ARGS...
        local want=$1
        shift
        "$sim" --quiet "$@" >"$tmp/o" 2>"$tmp/e"
        local rc=$?
        [[ $rc -eq 2 ]] || fail "pmixsim $*: exit status $rc, expected 2: $(cat "$tmp/e")"
        grep -q -- "$want" "$tmp/e" || fail "pmixsim $*: no '$want' in: $(cat "$tmp/e")"
        [[ -s $tmp/o ]] && fail "pmixsim $*: it ran: $(cat "$tmp/o")"
        echo "ok: pmixsim $* -> $(head -1 "$tmp/e")"
    }
    echo "just text" >"$tmp/text.so"
    check "cannot open the program $tmp/nosuch.so: No such file" "$tmp/nosuch.so"
    check "$tmp/text.so is not an ELF file" "$tmp/text.so"
    check "is not a file" "$tmp"
    check "$nomain has no main function" "$nomain"
    check "is linked against libpmix.so.2" "$linked"
    check "is an executable" "$exe"
    check "unknown workload hello.so (a program built as a shared object is given by a path" hello.so
    check "--privatize: hello is built into pmixsim" --privatize hello
    ;;
program-globals)
    sim=$1 so=$2
    "$sim" --quiet --nodes 2 --ppn 2 "$so" >"$tmp/o" 2>"$tmp/e"
    rc=$?
    cat "$tmp/e"
    [[ $rc -eq 2 ]] || fail "a program with writable globals: exit status $rc, expected 2"
    [[ -s $tmp/o ]] && fail "a program with writable globals ran: $(cat "$tmp/o")"
    for g in total start 'calls (static)' 'depth (static, in a function)'; do
        grep -qF "$g" "$tmp/e" || fail "the refusal does not name $g"
    done
    "$sim" --quiet --nodes 2 --ppn 2 --privatize "$so" >"$tmp/o" 2>"$tmp/e" ||
        fail "--privatize: $(cat "$tmp/e")"
    cat "$tmp/o"
    for r in 0 1 2 3; do
        grep -qx "rank $r: calls 1 total 1 start 7 depth 1" "$tmp/o" ||
            fail "--privatize: rank $r did not have globals of its own"
    done
    [[ $(grep -c '^rank ' "$tmp/o") -eq 4 ]] || fail "--privatize: expected 4 lines"
    "$sim" --quiet --nodes 4097 --privatize "$so" >"$tmp/o" 2>"$tmp/e"
    rc=$?
    [[ $rc -eq 2 ]] && grep -q "at most 4096 processes" "$tmp/e" ||
        fail "--privatize with 4097 processes: status $rc, $(cat "$tmp/e")"
    echo "ok: refused with the names of its globals; per-process globals with --privatize"
    ;;
program-exports)
    sim=$1 lib=$2
    funcs() { nm -D --defined-only "$1" | awk '$2 == "T" { print $3 }' | sort; }
    funcs "$lib" >"$tmp/lib"
    funcs "$sim" >"$tmp/sim"
    [[ $(wc -l <"$tmp/lib") -ge 200 ]] || fail "libpmix exports only $(wc -l <"$tmp/lib") functions"
    comm -23 "$tmp/lib" "$tmp/sim" >"$tmp/missing"
    [[ -s $tmp/missing ]] && fail "pmixsim does not export: $(head "$tmp/missing")"
    # (A sanitized build also exports the sanitizers' hooks: __lsan_*.)
    comm -13 "$tmp/lib" "$tmp/sim" | grep -v '^__' >"$tmp/extra"
    [[ -s $tmp/extra ]] && fail "pmixsim exports functions of its own: $(head "$tmp/extra")"
    echo "ok: pmixsim exports the $(wc -l <"$tmp/lib") functions of libpmix.so.2, and no other"
    ;;
formula)
    sim=$1 nodes=$2 algo=$3 size=$4
    shift 4 # the rest: more pmixsim options (--planes 2)
    "$sim" --quiet --nodes "$nodes" --topology crossbar --model cm02 --algo "$algo" "$@" \
        fence --iters 3 --size "$size" >"$tmp/out" 2>"$tmp/err" ||
        fail "pmixsim exited with $?: $(cat "$tmp/err")"
    cat "$tmp/out"
    awk -F'\t' -v algo="$algo" '
        /^[0-9]/ {
            n++
            if ($3 != algo) { print "fence " $1 " ran " $3 ", not " algo; bad++ }
            if ($12 != "ok") { print "fence " $1 " failed: " $12; bad++ }
            if ($11 == "-" || $11 < 0.99 || $11 > 1.01) {
                print "fence " $1 ": simulated " $7 " us, formula " $10 " us (ratio " $11 ")"; bad++
            }
        }
        END { if (n != 3) { print "expected 3 fences, saw " n; bad++ } exit bad != 0 }
    ' "$tmp/out" || fail "simulated times do not match the formula"
    ;;
same-as-pmixrun)
    sim=$1 run=$2 path=$3 prog=$(basename "$3")
    shift 3
    mask='s/[0-9]+\.[0-9]+ s/X s/g'
    "$run" -n 4 "$path" "$@" >"$tmp/real" 2>"$tmp/real.err" ||
        fail "pmixrun -n 4 $prog $*: $(cat "$tmp/real.err")"
    "$sim" --quiet --nodes 1 --ppn 4 "$prog" "$@" >"$tmp/sim" 2>"$tmp/sim.err" ||
        fail "pmixsim --nodes 1 --ppn 4 $prog $*: $(cat "$tmp/sim.err")"
    grep -v -e '^#' -e '^fence	' -e '^[0-9]' "$tmp/sim" | sed -E "$mask" | sort >"$tmp/a"
    sed -E "$mask" "$tmp/real" | sort >"$tmp/b"
    echo "--- under pmixrun -n 4:"
    cat "$tmp/b"
    echo "--- in pmixsim, 1 node x 4 processes:"
    cat "$tmp/a"
    diff "$tmp/b" "$tmp/a" || fail "pmixsim's output differs from pmixrun's"
    "$sim" --quiet --nodes 4 --ppn 2 "$prog" "$@" >"$tmp/sim2" 2>"$tmp/sim2.err" ||
        fail "pmixsim --nodes 4 --ppn 2 $prog $*: $(cat "$tmp/sim2.err")"
    echo "--- in pmixsim, 4 nodes x 2 processes:"
    cat "$tmp/sim2"
    ;;
sessions)
    sim=$1 run=$2 exe=$3 so=$4
    sets=(--pset ocean:2 --pset ice:2)
    mask='s/ cid [0-9]+:/ cid ID:/'
    "$run" -n 2 --pset ocean "$exe" : -n 2 --pset ice "$exe" >"$tmp/real" 2>"$tmp/real.err" ||
        fail "pmixrun with two sets: $(cat "$tmp/real.err") $(cat "$tmp/real")"
    sed -E "$mask" "$tmp/real" | sort >"$tmp/b"
    [[ $(grep -c ': fence ok, cards ok$' "$tmp/b") == 4 ]] || fail "pmixrun: not 4 groups in use"
    grep -q FAIL "$tmp/b" && fail "pmixrun: $(grep FAIL "$tmp/b")"
    for layout in "2 2" "4 1"; do
        read -r nodes ppn <<<"$layout"
        "$sim" --quiet --nodes "$nodes" --ppn "$ppn" "${sets[@]}" sessions >"$tmp/sim" 2>&1 ||
            fail "pmixsim --nodes $nodes --ppn $ppn: $(cat "$tmp/sim")"
        grep '^sessions:' "$tmp/sim" | sed -E "$mask" | sort >"$tmp/a"
        echo "--- pmixsim --nodes $nodes --ppn $ppn ${sets[*]} sessions:"
        cat "$tmp/a"
        diff "$tmp/b" "$tmp/a" || fail "pmixsim's lines differ from pmixrun's"
        # one id per group, and the two groups' ids differ
        ids=$(grep -oE 'group sessions[.][a-z]+ size 2 cid [0-9]+' "$tmp/sim" | sort -u | wc -l)
        [[ $ids == 2 ]] || fail "$ids distinct (group, id) pairs, want 2"
    done
    (cd "$(dirname "$so")" && "$sim" --quiet --nodes 2 --ppn 2 "${sets[@]}" "./$(basename "$so")") \
        >"$tmp/so" 2>&1 || fail "pmixsim ./$(basename "$so"): $(cat "$tmp/so")"
    grep '^sessions:' "$tmp/so" | sed -E "$mask" | sort >"$tmp/a"
    diff "$tmp/b" "$tmp/a" || fail "the loaded program's lines differ from pmixrun's"
    echo "ok: the same lines as pmixrun's, built in and loaded"
    ;;
repeat)
    sim=$1
    shift
    "$sim" --quiet "$@" >"$tmp/1" 2>&1 || fail "first run: $(cat "$tmp/1")"
    "$sim" --quiet "$@" >"$tmp/2" 2>&1 || fail "second run: $(cat "$tmp/2")"
    grep -v '^# wall:' "$tmp/1" >"$tmp/1f"
    grep -v '^# wall:' "$tmp/2" >"$tmp/2f"
    cat "$tmp/1"
    diff "$tmp/1f" "$tmp/2f" || fail "two runs with the same seed differ"
    ;;
coords)
    sim=$1 topo=$2
    shape=(--nodes 8 --ppn 2)
    [[ $topo == dragonfly ]] && shape=(--nodes 32 --ppn 1) # 32 nodes at least
    "$sim" --quiet "${shape[@]}" --planes 2 --topology "$topo" --radix 8 coords \
        >"$tmp/out" 2>"$tmp/err" || fail "pmixsim coords: $(cat "$tmp/err")"
    cat "$tmp/out"
    case $topo in
    torus)
        want="rank 0: dims 3 3
rank 0: dims physical 3 3
rank 0: shape plane0 logical 2x2x2
rank 0: shape plane1 physical 2x2x2
rank 0: rank 0 coord logical plane0:(0,0,0) plane1:(0,0,0)
rank 0: rank 2 coord logical plane0:(1,0,0) plane1:(1,0,0)
rank 0: rank 2 coord physical plane0:p(1,0,0) plane1:p(1,0,0)
rank 0: rank 2 coord plane1 plane1:(1,0,0)
rank 13: rank 13 coord logical plane0:(0,1,1) plane1:(0,1,1)
rank 13: rank 15 coord logical plane0:(1,1,1) plane1:(1,1,1)
rank 13: rank 15 nic plane0=node-7.nic0 plane1=node-7.nic1
rank 13: rank 15 endpt node-7 node-7.p1
rank 13: rank 15 coord nic node-7.nic1 physical plane1:p(1,1,1)"
        ;;
    fattree)
        want="rank 0: dims 2 2
rank 0: shape plane0 logical 2x4
rank 0: shape plane1 physical 2x4
rank 7: rank 7 coord logical plane0:(0,3) plane1:(0,3)
rank 7: rank 9 coord logical plane0:(1,0) plane1:(1,0)
rank 7: rank 9 coord plane1 plane1:(1,0)
rank 7: rank 9 nic plane0=node-4.nic0 plane1=node-4.nic1
rank 15: rank 15 coord physical plane0:p(1,3) plane1:p(1,3)
rank 15: rank 1 coord logical plane0:(0,0) plane1:(0,0)"
        ;;
    dragonfly) # 1 group, 2 chassis, 4 routers each, 4 nodes per router
        want="rank 0: dims 3 3
rank 0: dims physical 4 4
rank 0: shape plane0 logical 1x8x4
rank 0: shape plane0 physical 1x2x4x4
rank 13: rank 13 coord logical plane0:(0,3,1) plane1:(0,3,1)
rank 13: rank 13 coord physical plane0:p(0,0,3,1) plane1:p(0,0,3,1)
rank 20: rank 21 coord logical plane0:(0,5,1) plane1:(0,5,1)
rank 20: rank 21 coord physical plane0:p(0,1,1,1) plane1:p(0,1,1,1)"
        ;;
    *) fail "no expected values for $topo" ;;
    esac
    while IFS= read -r line; do
        grep -qxF -- "$line" "$tmp/out" || fail "missing: $line"
    done <<<"$want"
    grep -q "planes plane0 plane1" "$tmp/out" || fail "no plane list"
    [[ $(grep -c ': rank [0-9]* coord logical' "$tmp/out") -eq $((2 * shape[1] * shape[3])) ]] ||
        fail "expected a coordinate line per process for itself and for its peer"
    ;;
dragonfly-groups)
    # Past 4 groups the default dragonfly widens its chassis (topo.c), as
    # SimGrid's minimal routing needs: 256 nodes are 4 groups of 2 chassis
    # of 8 routers, and a fence crosses every group's global links.
    sim=$1
    # (Past 64 nodes a process gets no other node's network keys, so the
    # coords workload's peer lookups fail by design: only the shape and
    # each process's own coordinate are read here.)
    "$sim" --quiet --nodes 256 --topology dragonfly coords >"$tmp/out" 2>"$tmp/err"
    grep -qxF "rank 0: shape plane0 physical 4x2x8x4" "$tmp/out" ||
        fail "256-node dragonfly shape: $(grep 'rank 0: shape' "$tmp/out")"
    grep -qxF "rank 255: rank 255 coord physical plane0:p(3,1,7,3)" "$tmp/out" ||
        fail "rank 255's coordinate: $(grep 'rank 255: rank 255 coord physical' "$tmp/out")"
    for n in 256 1024; do
        "$sim" --quiet --nodes $n --topology dragonfly --algo recdbl fence --iters 1 --size 64 \
            --check >"$tmp/out" 2>"$tmp/err" || fail "fence on a $n-node dragonfly: $(cat "$tmp/err")"
        echo "ok: fence on a $n-node dragonfly"
    done
    ;;
coords-pmixrun)
    run=$1 prog=$2
    # the flat default is one plane only on a node with at most one
    # OpenFabrics NIC (hostcore/nics.c): read such a node, whatever this
    # machine has
    PMIXLAB_NICS_XML=$(dirname "$0")/../../tests/integration/topology/one-eth.xml \
        "$run" -n 2 "$prog" >"$tmp/out" 2>"$tmp/err" || fail "pmixrun coords: $(cat "$tmp/err")"
    cat "$tmp/out"
    [[ $(grep -c '^rank [01]: dims 1$' "$tmp/out") -eq 2 &&
        $(grep -c '^rank [01]: rank [01] coord logical plane0:(0)$' "$tmp/out") -eq 2 ]] ||
        fail "coords should read the flat default on both ranks"
    ;;
coords-same | coords-platform)
    run=$1 sim=$2 prog=$3 file=$4 nodes=$5
    shift 5
    simflag=--topology
    [[ $cmd == coords-platform ]] && simflag=--platform
    # one plane whatever NICs this machine has (hostcore/nics.c), or the
    # NICs of SIMTEST_NICS (an hwloc XML file of the topology directory)
    PMIXLAB_NICS_XML=$(dirname "$file")/${SIMTEST_NICS:-one-eth.xml} \
        "$run" --nodes "$nodes" -n "$nodes" --timeout 30 --topology "$file" "$prog" \
        >"$tmp/run" 2>"$tmp/err" || fail "pmixrun coords: $(cat "$tmp/err")"
    "$sim" --quiet --nodes "$nodes" "$simflag" "$file" coords >"$tmp/sim" 2>"$tmp/err" ||
        fail "pmixsim coords: $(cat "$tmp/err")"
    grep '^rank ' "$tmp/run" | grep -v ' nic \| nic$\| endpt ' | sort >"$tmp/run.c"
    grep '^rank ' "$tmp/sim" | grep -v ' nic \| nic$\| endpt ' | sort >"$tmp/sim.c"
    cat "$tmp/run.c"
    [[ -s $tmp/run.c ]] || fail "pmixrun's coords printed nothing"
    diff "$tmp/sim.c" "$tmp/run.c" || fail "pmixsim and pmixrun give other coordinates"
    for w in "$@"; do
        grep -qxF "$w" "$tmp/run.c" || fail "missing: $w"
    done
    ;;
platform-planes)
    # A platform's planes carry the traffic: every plane's cluster takes
    # its share of the messages between nodes (planes.c).
    sim=$1 file=$2 planes=$3
    "$sim" --platform "$file" --ppn 2 fence --iters 4 --size 64 --check >"$tmp/out" 2>"$tmp/err" ||
        fail "pmixsim fence: $(cat "$tmp/err")"
    line=$(grep '^# planes:' "$tmp/out") || fail "no planes line: $(cat "$tmp/out")"
    echo "$line"
    [[ $line =~ ^#\ planes:\ $planes\;\ messages\ between\ nodes\ per\ plane:\ ([0-9 ]+)\; ]] ||
        fail "expected $planes planes"
    for n in ${BASH_REMATCH[1]}; do
        [[ $n -gt 0 ]] || fail "a plane carried no message: $line"
    done
    ;;
coords-hosts)
    sim=$1 file=$2
    shift 2
    "$sim" --quiet --platform "$file" coords >"$tmp/sim" 2>"$tmp/err" ||
        fail "pmixsim coords: $(cat "$tmp/err")"
    grep '^rank ' "$tmp/sim"
    for w in "$@"; do
        grep -qxF "$w" "$tmp/sim" || fail "missing: $w"
    done
    ;;
plane-down)
    sim=$1
    "$sim" --quiet --nodes 8 --ppn 2 --planes 2 --test-plane-down 0@0.000008 --algo ring \
        fence --iters 6 --size 10000 >"$tmp/out" 2>"$tmp/err" ||
        fail "fences with plane 0 going down: $(cat "$tmp/out" "$tmp/err")"
    cat "$tmp/out" "$tmp/err"
    grep -q 'plane 0 down' "$tmp/err" || fail "plane 0 did not go down"
    [[ $(grep -c '	ok$' "$tmp/out") -eq 6 ]] || fail "not every fence succeeded"
    awk '/^# planes:/ { for (i = 1; i <= NF; i++) { if ($i == "failovers") f = $(i + 1) + 0
                                                    if ($i == "retries") r = $(i + 1) + 0
                                                    if ($i == "lost") l = $(i + 1) + 0 }
                        found = 1 }
         END { exit !(found && f > 0 && r > 0 && l == 0) }' "$tmp/out" ||
        fail "expected failovers and retries, and no message lost"
    "$sim" --quiet --nodes 4 --ppn 2 --planes 2 --test-plane-down 1.2@0.00002 \
        coords --wait-update 20 >"$tmp/out2" 2>"$tmp/err2" ||
        fail "coords with a NIC going down: $(cat "$tmp/err2")"
    grep -e UPDATED -e '^#' "$tmp/out2"
    [[ $(grep -c 'PMIX_NETWORK_COORDS_UPDATED plane=plane1 nic=node-2.nic1' "$tmp/out2") -eq 8 ]] ||
        fail "every process should have seen PMIX_NETWORK_COORDS_UPDATED for node-2.nic1"
    ;;
hier-groups)
    sim=$1
    check_msgs() { # WANT ALGO ARGS...
        local want=$1 algo=$2
        shift 2
        "$sim" --quiet --nodes 64 --algo "$algo" "$@" fence --iters 1 --size 100 >"$tmp/out" \
            2>"$tmp/err" || fail "pmixsim $*: $(cat "$tmp/err")"
        local got
        got=$(awk -F'\t' '/^1\t/ { print $8 }' "$tmp/out")
        echo "$algo $* -> $got messages (want $want)"
        [[ $got == "$want" ]] || fail "$algo on $*: $got messages, expected $want"
    }
    # one leader: sum over groups of 2(c-1), plus recdbl among the G
    # leaders (G lg G)
    check_msgs 136 hier:one --topology fattree --radix 16  # 8 x 2*7 + 8*3
    check_msgs 160 hier:one --topology torus               # 16 x 2*3 + 16*4
    check_msgs 126 hier:one --topology dragonfly           # 2 x 2*31 + 2*1
    check_msgs 136 hier:one --topology fattree --radix 16 --planes 2
    # every member a leader (the default): c columns of recdbl over G, G
    # groups of Bruck over c; with both powers of two, P lg P in all
    check_msgs 384 hier --topology fattree --radix 16      # 8 x 8*3 + 8 x 8*3
    check_msgs 384 hier --topology torus                   # 4 x 16*4 + 16 x 4*2
    check_msgs 384 hier --topology dragonfly               # 32 x 2*1 + 2 x 32*5
    check_msgs 384 auto --topology fattree --radix 16      # auto picks hier there
    # ... and says so
    grep -q "allgather	hier:recdbl:all	64" "$tmp/out" || fail "auto did not run hier: $(cat "$tmp/out")"
    check_msgs 384 hier --topology fattree --radix 16 --planes 2
    ;;
replay)
    sim=$1
    faults=(--nodes 32 --ppn 2 --detect 2us --fault 'node:rand@5us..40us' --fault 'proc:rand@fence:3'
        fence --iters 8 --size 64)
    for i in 1 2; do
        "$sim" --quiet --seed 11 --events "$tmp/ev$i" --json "$tmp/j$i" "${faults[@]}" \
            >"$tmp/o$i" 2>"$tmp/e$i"
        [[ $? -le 1 ]] || fail "run $i: $(tail -5 "$tmp/e$i")"
        sed -E 's/"(wall_s|peak_rss_kb)":[0-9.e+-]+//g' "$tmp/j$i" >"$tmp/jf$i"
    done
    "$sim" --quiet --seed 12 --events "$tmp/ev3" "${faults[@]}" >"$tmp/o3" 2>&1
    cmp -s "$tmp/ev1" "$tmp/ev2" || fail "the same seed gave two event logs: $(diff "$tmp/ev1" "$tmp/ev2" | head)"
    cmp -s "$tmp/jf1" "$tmp/jf2" || fail "the same seed gave two reports: $(diff "$tmp/jf1" "$tmp/jf2" | head)"
    cmp -s "$tmp/ev1" "$tmp/ev3" && fail "seeds 11 and 12 gave the same event log"
    for what in $'\tcrash\tnode ' $'\tkill\trank ' $'\tdetect\tnode ' $'\tbroken\tnode ' \
        $'PMIX_ERR_PROC_TERM_WO_SYNC'; do
        grep -qF -- "$what" "$tmp/ev1" || fail "no '$what' in the event log"
    done
    grep -q '"injected":true' "$tmp/j1" || fail "no fault was injected: $(cat "$tmp/j1")"
    echo "ok: $(grep -c . "$tmp/ev1") events, identical twice; $(grep -E $'\t(crash|kill)\t' "$tmp/ev1" | tr '\t' ' ' | tr '\n' ';')"
    ;;
depart)
    sim=$1
    for run in "64" "64 --server-actors" "1024"; do
        read -r n extra <<<"$run"
        rm -f "$tmp/ev"
        # shellcheck disable=SC2086 # $extra is one option or none
        "$sim" --quiet --nodes "$n" $extra --coll-timeout 10s --events "$tmp/ev" \
            seq fence leave:0 fence:expect=err_lost_connection >"$tmp/o" 2>"$tmp/e"
        [[ $? -eq 1 ]] || fail "$run: pmixsim should exit 1 (a fence failed): $(tail -3 "$tmp/e")"
        grep -q 'procs_failed=0 ' "$tmp/o" || fail "$run: a process failed: $(tail -3 "$tmp/e")"
        awk -F'\t' -v n="$n" '
            $2 == "depart" && $3 == "rank 0" && $4 == "node 0" { if (!dep) dep = $1 }
            $2 == "fence-end" && $5 == "PMIX_ERR_LOST_CONNECTION" { nodes++; if ($1 > last) last = $1
                if (!dep || $1 < dep) early++ }
            $2 == "proc-fence" && $4 == "fence 2" && $5 == "PMIX_ERR_LOST_CONNECTION" { procs++ }
            END {
                if (!dep) { print "no depart of rank 0 in the event log"; exit 1 }
                if (early) { print early " fences failed before rank 0 departed"; exit 1 }
                if (nodes != n - 1 || procs != n - 1) {
                    printf "%d nodes and %d processes failed fence 2 with LOST_CONNECTION, expected %d\n", nodes, procs, n - 1
                    exit 1
                }
                if (last > 0.001) { print "the last node failed at " last " s, not within 1 ms"; exit 1 }
                printf "%d nodes: rank 0 departed at %.2f us, the last of %d nodes failed at %.2f us\n", n, dep * 1e6, nodes, last * 1e6
            }' "$tmp/ev" >"$tmp/r" || fail "$run: $(cat "$tmp/r")"
        echo "ok: $(cat "$tmp/r")${extra:+ ($extra)}"
    done
    ;;
depart-end)
    sim=$1
    for layout in "256 1" "64 4"; do
        read -r n ppn <<<"$layout"
        "$sim" --quiet --nodes "$n" --ppn "$ppn" --json "$tmp/j" spawn >"$tmp/o" 2>"$tmp/e" ||
            fail "$layout: pmixsim failed: $(tail -3 "$tmp/e")"
        grep -q 'procs_failed=0 ' "$tmp/o" || fail "$layout: a process failed: $(tail -3 "$tmp/o")"
        line=$(grep '^# departures: ' "$tmp/o") || fail "$layout: no departures line"
        grep -q "\"departures\":{\"procs\":" "$tmp/j" || fail "$layout: no departures in the JSON"
        awk -v n="$n" -v ppn="$ppn" -v line="$line" 'BEGIN {
            nf = split(line, f, /[ =]/)
            for (i = 1; i < nf; i++) v[f[i]] = f[i + 1] + 0
            lg = 0; while (2 ^ lg < n) lg++
            if (v["procs"] < n * ppn) { print "only " v["procs"] " departures"; exit 1 }
            bound = 3 * n * lg * lg # two jobs, each ending in a wave; see above
            # no window (sanitized builds): one message per departure and node at most
            if (v["window_ns"] == 0) bound = v["procs"] * (n - 1)
            if (v["messages"] > bound) {
                print v["messages"] " messages for " v["procs"] " departures on " n " nodes, more than " bound
                exit 1
            }
            if (v["records"] > v["procs"] * (n - 1)) {
                print v["records"] " records: a node heard of a departure twice"; exit 1
            }
            printf "%d nodes x %d: %d departures, %d messages (bound %d), %d records\n", n, ppn, v["procs"], v["messages"], bound, v["records"]
        }' >"$tmp/r" || fail "$layout: $(cat "$tmp/r")"
        echo "ok: $(cat "$tmp/r")"
    done
    ;;
pubsub)
    sim=$1 run=$2 exe=$3
    mask='s/port-of-[^ ]*/port-of-NSPACE/'
    "$run" -n 4 "$exe" >"$tmp/r1" 2>"$tmp/r1.err" || fail "pmixrun -n 4: $(cat "$tmp/r1.err" "$tmp/r1")"
    "$run" --nodes 2 -n 4 "$exe" >"$tmp/r2" 2>"$tmp/r2.err" ||
        fail "pmixrun --nodes 2 -n 4: $(cat "$tmp/r2.err" "$tmp/r2")"
    sed -E "$mask" "$tmp/r1" | sort >"$tmp/want"
    sed -E "$mask" "$tmp/r2" | sort | cmp -s - "$tmp/want" || fail "pmixrun's two layouts differ"
    [[ $(grep -c ' ok$' "$tmp/want") == 4 ]] || fail "pmixrun: not 4 ranks ok: $(cat "$tmp/want")"
    for layout in "1 4" "2 2" "4 1" "4 1 --server-actors"; do
        read -r nodes ppn extra <<<"$layout"
        rm -f "$tmp/ev"
        # shellcheck disable=SC2086 # $extra is one option or none
        "$sim" --quiet --nodes "$nodes" --ppn "$ppn" $extra --events "$tmp/ev" pubsub >"$tmp/s" \
            2>"$tmp/s.err" || fail "pmixsim $layout: $(cat "$tmp/s.err" "$tmp/s")"
        grep -v -e '^#' -e '^fence	' -e '^[0-9]' "$tmp/s" | sed -E "$mask" | sort >"$tmp/got"
        diff "$tmp/want" "$tmp/got" || fail "pmixsim $layout: its lines differ from pmixrun's"
        awk -F'\t' '
            $2 != "pubsub" { next }
            $3 == "lookup" && $5 == "waits" && $4 != "rank 0" && !pub { waited++ }
            $3 == "answer" && $4 != "rank 0" && $5 == "PMIX_SUCCESS" { answered++ }
            $3 == "answer" && $4 == "rank 0" && $5 == "PMIX_ERR_TIMEOUT" { tmo = $1 }
            $3 == "publish" && $5 == "PMIX_SUCCESS" { pub = $1 }
            $3 == "lookup" && $4 == "rank 0" && $5 == "waits" { t0 = $1 }
            $3 == "unpublish" && $5 == "PMIX_SUCCESS" { unpub = $1 }
            END {
                if (waited != 3 || answered != 3) { print waited " lookups waited before the publish, " answered " answered (expected 3 and 3)"; exit 1 }
                if (tmo - t0 < 0.999 || tmo - t0 > 1.001) { print "rank 0 waited " tmo - t0 " s, not 1 s"; exit 1 }
                if (!(pub > tmo && unpub > pub)) { print "the publish at " pub ", the unpublish at " unpub ": no simulated time"; exit 1 }
                printf "3 lookups waited, the timeout after %.6f s, publish at %.6f s\n", tmo - t0, pub
            }' "$tmp/ev" >"$tmp/r" || fail "pmixsim $layout: $(cat "$tmp/r")"
        echo "ok: pmixsim $layout: the same $(wc -l <"$tmp/got") lines as pmixrun; $(cat "$tmp/r")"
    done
    ;;
cpu-model)
    sim=$1
    for n in 16 64; do
        rounds=$(awk -v n=$n 'BEGIN { r = 0; while (2 ^ r < n) r++; print r }')
        for cpu in none model:1us; do
            line=$("$sim" --quiet --nodes $n --cpu $cpu fence --iters 1 | awk -F'\t' '$1 == "1"')
            [[ -n $line ]] || fail "$n nodes, --cpu $cpu: no fence line"
            want=0
            [[ $cpu == none ]] || want=$rounds
            awk -F'\t' -v want=$want '{ d = $7 - $10 - want; exit !(d < 0.001 && d > -0.001) }' \
                <<<"$line" || fail "$n nodes, --cpu $cpu: $line (expected the formula + $want us)"
            echo "ok: $n nodes, --cpu $cpu: $(cut -f7,10 <<<"$line" | tr '\t' ' ') (+$want us)"
        done
    done
    "$sim" --quiet --nodes 8 --cpu measured fence --iters 2 | grep -q 'cpu=measured cpu_charged_s=0\.0*[1-9]' ||
        fail "--cpu measured charged nothing"
    ;;
stack)
    # The report's stack_max_b: the deepest use of any process actor's
    # stack. It does not depend on the node count (each process does the
    # same) nor on where SimGrid took the stacks from: at 8 nodes they are
    # blocks the process used before, at 256 fresh mappings. It is more
    # than the 4 kB left out at the top and less than a stack, and more
    # with one actor per node (the actor runs its node's server too) than
    # with --server-actors.
    sim=$1
    depth() { # ARGS...: the run's stack_max_b
        "$sim" --quiet "$@" --algo dissemination fence --iters 1 >"$tmp/o" 2>&1 ||
            fail "$*: $(tail -3 "$tmp/o")"
        v=$(sed -n 's/^# wall: .* stack_max_b=\([0-9]*\) .*/\1/p' "$tmp/o")
        [[ -n $v ]] || fail "$*: no stack_max_b in: $(grep '^# wall' "$tmp/o")"
        ((v > 4096 && v < 32768)) || fail "$*: stack_max_b=$v, not between 4 and 32 kB"
        echo "$*: stack_max_b=$v" >&2
        echo "$v"
    }
    one=$(depth --nodes 8) && [[ $(depth --nodes 256) == "$one" ]] ||
        fail "one actor per node: not the same at 8 and 256 nodes"
    two=$(depth --nodes 8 --server-actors) &&
        [[ $(depth --nodes 256 --server-actors) == "$two" ]] ||
        fail "--server-actors: not the same at 8 and 256 nodes"
    ((one > two)) || fail "stack_max_b $one with one actor per node, $two with --server-actors"
    ;;
one-actor)
    sim=$1
    cases=(
        "--nodes 24 --algo dissemination fence --iters 2"
        "--nodes 24 --algo tree fence --iters 2"
        "--nodes 24 --algo auto fence --iters 2 --size 1000 --check"
        "--nodes 24 --algo recdbl fence --iters 2 --size 1000 --check"
        "--nodes 24 --algo ring fence --iters 2 --size 1000 --check"
        "--nodes 24 --algo bruck fence --iters 2 --size 1000 --check"
        "--nodes 24 --algo hier fence --iters 2 --size 1000 --check"
        "--nodes 8 seq put:100 fence:collect get:next put:50 fence get:prev"
        "--nodes 8 seq put:64 fence:collect,timeout=1 get:2 fence"
        "--nodes 8 seq put:64 fence get:next get:prev get:3"
        "--nodes 12 hello"
        "--loopback-lat 1ms --nodes 4 seq put:1000000 fence:collect get:next"
        "--loopback-lat 1ms --nodes 4 seq put:1000000 fence get:next"
        "--loopback-bw 1GBps --nodes 8 seq put:100000 fence:collect get:next put:5000 fence"
    )
    # Numbers equal within 1e-4 (relative), the rest equal: with one actor
    # a frame's loopback time is CM02's formula, while SimGrid's transfer
    # rounds to its solver's precision (a tree barrier: 18.0230 against
    # 18.0224 us).
    same_report() {
        awk -F '\t' 'NR == FNR { line[FNR] = $0; n = FNR; next }
            { m = FNR; k = split(line[FNR], a, "\t")
              if (k != NF) exit 1
              for (i = 1; i <= NF; i++) {
                  if (a[i] == $i) continue
                  if (a[i] !~ /^-?[0-9.e+-]+$/ || $i !~ /^-?[0-9.e+-]+$/) exit 1
                  d = a[i] - $i; if (d < 0) d = -d
                  s = (a[i] < 0 ? -a[i] : a[i]) + ($i < 0 ? -$i : $i)
                  if (d > 1e-4 * s) exit 1
              } }
            END { if (n != m) exit 1 }' "$1" "$2"
    }
    # The same events, each at the same time within 1e-9 s plus 1e-4 of it
    # (events of one instant may come in another order).
    # The processes' departures as they end (`depart`) are left out: none
    # of these workloads leaves early, and with one actor per node the run
    # ends as its last process becomes a daemon, before the nodes have
    # taken the others' exit messages, which server actors take at once.
    same_events() {
        awk -F '\t' '/^#/ || $2 == "depart" { next }
            { t = $1; sub(/^[^\t]*\t/, "") }
            NR == FNR { at[$0] = t; n++; next }
            { if (!($0 in at)) exit 1; d = at[$0] - t; if (d < 0) d = -d
              if (d > 1e-9 + 1e-4 * t) exit 1; m++ }
            END { if (n != m) exit 1 }' "$1" "$2"
    }
    for c in "${cases[@]}"; do
        read -r -a args <<<"$c"
        n=$(sed -n 's/.*--nodes \([0-9]*\).*/\1/p' <<<"$c")
        for mode in one two; do
            extra=()
            [[ $mode == two ]] && extra=(--server-actors)
            "$sim" --quiet "${extra[@]}" --events "$tmp/$mode.ev" "${args[@]}" >"$tmp/$mode" \
                2>&1 || fail "$c ${extra[*]}: $(tail -3 "$tmp/$mode")"
            want=$n
            [[ $mode == two ]] && want=$((2 * n))
            grep -q "^# wall: .* actors=$want\$" "$tmp/$mode" ||
                fail "$c ${extra[*]}: not $want actors: $(grep '^# wall' "$tmp/$mode")"
            # the run's final clock: a process's last frame (CLOSE, 0 bytes)
            # crosses the loopback link with one actor, while SimGrid hands
            # it over at once through a server actor's mailbox; and the
            # departures line, for the reason same_events gives
            grep -v -e '^# wall:' -e '^# departures:' "$tmp/$mode" | sed -e 's/sim_s=[0-9.]*//' \
                >"$tmp/$mode.f"
        done
        same_report "$tmp/one.f" "$tmp/two.f" ||
            fail "$c: the reports differ: $(diff "$tmp/one.f" "$tmp/two.f")"
        same_events "$tmp/one.ev" "$tmp/two.ev" || fail "$c: the event logs differ"
        same_events "$tmp/two.ev" "$tmp/one.ev" || fail "$c: the event logs differ"
        rm -f "$tmp"/*.ev
        echo "same: $c"
    done
    ;;
bad-args)
    sim=$1
    check() { # EXPECTED-WORDS ARGS...
        local want=$1
        shift
        "$sim" "$@" >"$tmp/o" 2>"$tmp/e"
        local rc=$?
        [[ $rc -eq 2 ]] || fail "pmixsim $*: exit status $rc, expected 2"
        grep -q -- "$want" "$tmp/e" || fail "pmixsim $*: no '$want' in: $(cat "$tmp/e")"
        echo "ok: pmixsim $* -> $(head -1 "$tmp/e")"
    }
    check "--nodes 0" --nodes 0 fence
    check "--nodes 70000" --nodes 70000 fence
    check "--topology mesh" --topology mesh fence
    check "--model foo" --model foo fence
    check "--algo nosuch" --algo nosuch fence
    check "unknown workload" nosuch
    check "no WORKLOAD" --nodes 4
    check "--planes 3" --planes 3 fence
    check "--planes 2 with --platform" --planes 2 --platform /dev/null fence
    check "needs --planes 2" --test-plane-down 0@1 fence
    check "expected PLANE" --planes 2 --test-plane-down 5@1 fence
    check "--lat" --lat fast fence
    check "unknown option" --frobnicate fence
    check "no default shape for --nodes 33" --nodes 33 --topology dragonfly fence
    check "8 groups but 4 routers per chassis" --nodes 256 --topology dragonfly \
        --topo-params "8,1;2,1;4,1;4" fence
    check "a node below 16" --nodes 16 --fault node:16@1us fence
    check "expected node:ID@T" --fault bogus fence
    check "unknown kind" --fault disk:1@1us fence
    check "needs --planes 2" --fault plane:0@1us fence
    check "@fence:K must be 1 or more" --fault proc:1@fence:0 fence
    check "a rank below 8" --nodes 4 --ppn 2 --fault proc:8@fence:1 fence
    check "expected @T or @T1..T2" --fault node:1@40us..10us fence
    check "P must be a plane" --planes 2 --fault link:1.2@1us fence
    check "--coll-timeout soon" --coll-timeout soon fence
    check "--cpu fast" --cpu fast fence
    check "--cpu model:x" --cpu model:x fence
    "$sim" --list >"$tmp/o" || fail "pmixsim --list failed"
    grep -q '^fence ' "$tmp/o" || fail "--list does not list the fence workload"
    # a workload's bad argument: rank 0 says so once, the others do not run
    for extra in "" --server-actors; do
        "$sim" --quiet $extra --nodes 128 fence --iters 0 >"$tmp/o" 2>"$tmp/e" &&
            fail "fence --iters 0 succeeded"
        [[ $(grep -c '^usage: fence' "$tmp/e") -eq 1 ]] ||
            fail "fence --iters 0 $extra: not one usage line: $(head -5 "$tmp/e")"
        grep -q 'rank 0 ended with status 2 before PMIx_Init: the other 127 processes' "$tmp/e" ||
            fail "fence --iters 0 $extra: no word of the others: $(cat "$tmp/e")"
        grep -q 'procs_failed=1 ' "$tmp/o" || fail "fence --iters 0 $extra: $(cat "$tmp/o")"
    done
    echo "ok: a workload's bad argument is reported once"
    ;;
spawn)
    sim=$1
    for layout in "16 2 0 32" "8 1 7 4" "8 1 0 8"; do
        read -r nodes ppn from procs <<<"$layout"
        "$sim" --quiet --nodes "$nodes" --ppn "$ppn" spawn --procs "$procs" --from "$from" \
            --errors >"$tmp/o" 2>"$tmp/e" || fail "spawn $layout: $(cat "$tmp/e" "$tmp/o")"
        [[ $(grep -c 'started, parent rank '"$from"': ok$' "$tmp/o") == "$procs" ]] ||
            fail "spawn $layout: not $procs children started: $(grep -v '^[0-9]' "$tmp/o")"
        grep -q "^spawn: rank $from spawned pmixsim.1 ($procs processes): ok" "$tmp/o" ||
            fail "spawn $layout: the requestor: $(cat "$tmp/o")"
        grep -q 'a program that does not exist: PMIX_ERR_JOB_EXE_NOT_FOUND' "$tmp/o" ||
            fail "spawn $layout: no PMIX_ERR_JOB_EXE_NOT_FOUND"
        grep -q 'more processes than slots: PMIX_ERR_OUT_OF_RESOURCE' "$tmp/o" ||
            fail "spawn $layout: no PMIX_ERR_OUT_OF_RESOURCE"
        grep '^# spawn' "$tmp/o" | tr ' ' '\n' | grep = >"$tmp/kv"
        awk -F= -v procs="$procs" -v ppn="$ppn" -v from="$from" '
            { n[$1]++; v[$1 "#" n[$1]] = $2 }
            END {
                nodes = int((procs + ppn - 1) / ppn)
                if (v["procs#1"] != procs || v["nodes#1"] != nodes) { print "procs/nodes " v["procs#1"] "/" v["nodes#1"]; exit 1 }
                # launch: measured #1, formula #2 (the spawn-formula line)
                if (v["launch_s#1"] <= 0 || (v["launch_s#1"] - v["launch_s#2"])^2 > (1e-4 * v["launch_s#2"])^2) { print "launch " v["launch_s#1"] " formula " v["launch_s#2"]; exit 1 }
                if ((v["fence_s#1"] - v["fence_s#2"])^2 > (1e-4 * v["fence_s#2"])^2) { print "fence " v["fence_s#1"] " formula " v["fence_s#2"]; exit 1 }
                if ((v["hop_s#1"] - v["hop_s#2"])^2 > 1e-18 || (from < ppn) != (v["hop_s#1"] == 0)) { print "hop " v["hop_s#1"] " formula " v["hop_s#2"]; exit 1 }
                if (v["start_s#1"] <= v["launch_s#1"] + v["fence_s#1"] || (v["ratio#1"] - 1)^2 > 1e-8) { print "start " v["start_s#1"] " ratio " v["ratio#1"]; exit 1 }
                printf "start %s s = hop %s + launch %s + local %s + fence %s (formula %s)\n", v["start_s#1"], v["hop_s#1"], v["launch_s#1"], v["local_s#1"], v["fence_s#1"], v["formula_s#1"]
            }' "$tmp/kv" >"$tmp/r" || fail "spawn $layout: $(cat "$tmp/r"; grep '^#' "$tmp/o")"
        echo "ok: $nodes x $ppn, $procs children from rank $from: $(cat "$tmp/r")"
    done
    ;;
events)
    sim=$1
    for layout in "8 1 namespace 0" "13 2 global 3"; do
        read -r nodes ppn range from <<<"$layout"
        "$sim" --quiet --nodes "$nodes" --ppn "$ppn" events --range "$range" --from "$from" \
            >"$tmp/o" 2>"$tmp/e" || fail "events $layout: $(cat "$tmp/e" "$tmp/o")"
        [[ $(grep -c "got the event from rank $from (range PMIX_RANGE_${range^^}): ok$" "$tmp/o") == \
            $((nodes * ppn - 1)) ]] || fail "events $layout: not every process got it: $(cat "$tmp/o")"
        line=$(grep '^# event:' "$tmp/o") || fail "events $layout: no event line: $(cat "$tmp/o")"
        [[ $(grep -c '^# event:' "$tmp/o") == 1 ]] || fail "events $layout: not one event line"
        grep -q " reached=$nodes " <<<"$line" || fail "events $layout: $line"
        grep -q " ratio=1.000000$" <<<"$line" || fail "events $layout: not its formula: $line"
        echo "ok: $layout: $line"
    done
    ;;
invite)
    sim=$1
    for layout in "4 2 0 -" "8 1 5 --decline" "3 3 4 -" "4 1 1 --decline,--leave" "4 2 2 --leave"; do
        read -r nodes ppn from opt <<<"$layout"
        [[ $opt == - ]] && opt=""
        opt=${opt//,/ }
        np=$((nodes * ppn))
        # shellcheck disable=SC2086
        "$sim" --quiet --nodes "$nodes" --ppn "$ppn" invite --from "$from" $opt \
            >"$tmp/o" 2>"$tmp/e" || fail "invite $layout: $(cat "$tmp/e" "$tmp/o")"
        members=$np declined=0 left=0
        [[ $opt == *--leave* ]] && left=1
        if [[ $opt == *--decline* ]]; then
            declined=$(((np - (from % 2 == 1 ? 1 : 0)) / 2))
            members=$((np - declined))
        fi
        [[ $(grep -c " in group pmixsim.inv of $members, context id [1-9][0-9]*: ok$" "$tmp/o") == \
            $((members - left)) ]] || fail "invite $layout: not $members members: $(grep -v '^[0-9#f]' "$tmp/o")"
        # --leave: the last member left, and every other member heard PMIX_GROUP_LEFT first
        [[ $(grep -c " left group pmixsim.inv of $members: ok$" "$tmp/o") == "$left" ]] ||
            fail "invite $layout: not $left leaver: $(grep -v '^[0-9#f]' "$tmp/o")"
        [[ $(grep ' in group pmixsim.inv' "$tmp/o" | sed 's/.*context id //' | sort -u | wc -l) == 1 ]] ||
            fail "invite $layout: more than one context id"
        [[ $(grep -c ' declined: ok$' "$tmp/o") == "$declined" ]] ||
            fail "invite $layout: not $declined decliners"
        # one PMIX_GROUP_INVITED (-159) per invited process off the inviter's node
        remote=$((np - ppn))
        [[ $(grep -c '^# event: status=-159 ' "$tmp/o") == "$remote" ]] ||
            fail "invite $layout: not $remote invitations: $(grep '^# event' "$tmp/o")"
        grep '^# event: status=-159 ' "$tmp/o" | grep -v ' nodes=2 reached=2 ' &&
            fail "invite $layout: an invitation went to another node than its process's"
        # the first crosses a quiet network: one hop, its formula's time (later
        # ones may share a link with an answer coming back)
        grep -m1 '^# event: status=-159 ' "$tmp/o" | grep -q ' ratio=1.000000$' ||
            fail "invite $layout: the first invitation took more than one hop: $(grep -m1 '^# event' "$tmp/o")"
        grep '^# event:' "$tmp/o" | awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
            if (v["reached"] != v["nodes"]) { print; bad = 1 } } END { exit bad }' ||
            fail "invite $layout: an event did not reach all its nodes"
        mnodes=$(for ((r = 0; r < np; r++)); do
            [[ $opt != *--decline* || $r == "$from" || $((r % 2)) == 0 ]] && echo $((r / ppn))
        done | sort -u | wc -l)
        # the construct, and the destruct (over fewer nodes after a leave, maybe)
        awk -F'\t' -v n="$mnodes" -v left="$left" '$2 == "allgather" && $12 == "ok" { a++; if ($4 == n) c++ }
            $12 != "ok" && $1 ~ /^[0-9]+$/ { bad++ }
            END { exit bad > 0 || a != 2 || c < 2 - left }' \
            "$tmp/o" || fail "invite $layout: no construct and destruct over $mnodes nodes: $(grep '^[0-9]' "$tmp/o")"
        # the invitation as a whole against its formula (siminvite.c): R
        # invitations one after the other, the measured answers, the
        # outcome's tree and the construct's catalog formula
        grep '^# invite' "$tmp/o" | tr ' ' '\n' | grep = >"$tmp/kv"
        # (4 x 1 from rank 1: a decliner's publish reaches node 0, which
        # holds the data service, while node 0 relays the outcome: the
        # workload's own traffic, so the whole is not held to its formula)
        awk -F= -v remote="$remote" -v quiet="$([[ $layout == "4 2 0 -" ]] && echo 1)" \
            -v loose="$([[ $layout == "4 1 1 "* ]] && echo 1)" '
            { n[$1]++; v[$1 "#" n[$1]] = $2 }
            END {
                if (v["invited#1"] != remote || v["answers#1"] != remote) { print "invited " v["invited#1"] " answers " v["answers#1"]; exit 1 }
                if (v["ratio#1"] < 0.9999 || (v["ratio#1"] > 1.03 && !loose)) { print "total " v["total_s#1"] " formula " v["formula_s#1"]; exit 1 }
                # on a quiet network each part is its formula (invite_s#2 is the formula line)
                if (quiet && ((v["invite_s#1"] - v["invite_s#2"])^2 > (1e-4 * v["invite_s#2"])^2 ||
                              (v["outcome_s#1"] - v["outcome_s#2"])^2 > (1e-4 * v["outcome_s#2"])^2)) {
                    print "invite " v["invite_s#1"] "/" v["invite_s#2"] " outcome " v["outcome_s#1"] "/" v["outcome_s#2"]; exit 1 }
                printf "invitation %s s, formula %s s\n", v["total_s#1"], v["formula_s#1"]
            }' "$tmp/kv" >"$tmp/r" || fail "invite $layout: $(cat "$tmp/r"; grep '^# invite' "$tmp/o")"
        echo "ok: $layout: $members members, $declined declined, $remote invitations of one hop; $(cat "$tmp/r")"
    done
    ;;
invite-pmixrun)
    sim=$1 run=$2 exe=$3
    mask='s/context id [0-9]+/context id ID/'
    for opt in "" --decline --leave; do
        # shellcheck disable=SC2086 # $opt is one option or none
        "$run" --nodes 2 -n 4 "$exe" --from 1 $opt >"$tmp/r" 2>"$tmp/r.err" ||
            fail "pmixrun --nodes 2 -n 4 invite $opt: $(cat "$tmp/r.err" "$tmp/r")"
        sed -E "$mask" "$tmp/r" | sort >"$tmp/want"
        [[ $(grep -c ': ok$' "$tmp/want") == 4 ]] || fail "pmixrun invite $opt: not 4 ok: $(cat "$tmp/r")"
        [[ $opt != --leave ]] || grep -q '^invite: rank 3 left group pmixsim.inv of 4: ok$' "$tmp/want" ||
            fail "pmixrun invite --leave: rank 3 did not leave: $(cat "$tmp/r")"
        # shellcheck disable=SC2086
        "$sim" --quiet --nodes 2 --ppn 2 invite --from 1 $opt >"$tmp/s" 2>"$tmp/s.err" ||
            fail "pmixsim invite $opt: $(cat "$tmp/s.err" "$tmp/s")"
        grep -v -e '^#' -e '^fence	' -e '^[0-9]' "$tmp/s" | sed -E "$mask" | sort >"$tmp/got"
        diff "$tmp/want" "$tmp/got" || fail "pmixsim invite $opt: its lines differ from pmixrun's"
        echo "ok: invite $opt: the same lines under pmixrun --nodes 2 and pmixsim 2 x 2"
    done
    ;;
connect)
    sim=$1
    for layout in "8 1 7 4" "13 2 3 6"; do
        read -r nodes ppn from procs <<<"$layout"
        "$sim" --quiet --nodes "$nodes" --ppn "$ppn" spawn --connect --procs "$procs" --from "$from" \
            >"$tmp/o" 2>"$tmp/e" || fail "connect $layout: $(cat "$tmp/e" "$tmp/o")"
        want=$((nodes * ppn + procs))
        [[ $(grep -c ' connected with pmixsim.*, read its rank [0-9]*: ok$' "$tmp/o") == "$want" ]] ||
            fail "connect $layout: not $want connected: $(grep -v '^[0-9]' "$tmp/o")"
        [[ $(grep -c '^spawn: pmixsim.1 rank [0-9]* connected with pmixsim (' "$tmp/o") == "$procs" ]] ||
            fail "connect $layout: not every child connected"
        # the connect and the disconnect: the allgathers over every node
        awk -F'\t' -v n="$nodes" '$2 == "allgather" && $4 == n { c++; r[c] = $11; s[c] = $12 }
            END {
                if (c != 2 || s[1] != "ok" || s[2] != "ok") { print c " allgathers over " n " nodes"; exit 1 }
                if (r[1] > 1.1 || r[1] < 0.9999) { print "connect ratio " r[1]; exit 1 }
                if ((r[2] - 1)^2 > 1e-8) { print "disconnect ratio " r[2]; exit 1 }
                printf "connect %s, disconnect %s of their formulas\n", r[1], r[2]
            }' "$tmp/o" >"$tmp/r" || fail "connect $layout: $(cat "$tmp/r"; grep '^[0-9]' "$tmp/o")"
        echo "ok: $layout: $want processes connected; $(cat "$tmp/r")"
    done
    # A parent killed before the connect (0.5 s) or during it (1.000025 s,
    # after its node sent its part): every survivor of either job fails
    # the connect, or then its disconnect, with PMIX_GROUP_MEMBER_FAILED,
    # once, within the bound; the children's own last barrier still works.
    for at in 0.5s 1.000025s; do
        "$sim" --quiet --nodes 8 --ppn 1 --fault "proc:6@$at" spawn --connect --procs 4 --from 7 \
            >"$tmp/o" 2>"$tmp/e"
        rc=$?
        [[ $rc == 1 ]] || fail "connect, rank 6 killed at $at: exit $rc: $(cat "$tmp/e")"
        n=$(grep -cE '^FAIL: pmixsim(\.1)? rank [0-9]+: PMIx_(Connect with pmixsim(\.1)?|Disconnect): PMIX_GROUP_MEMBER_FAILED$' "$tmp/o")
        [[ $n == 11 ]] || fail "connect, rank 6 killed at $at: $n of 11 survivors failed: $(grep -v '^[0-9#]' "$tmp/o")"
        [[ $(grep -oE '^FAIL: pmixsim(\.1)? rank [0-9]+: PMIx_' "$tmp/o" | sort -u | wc -l) == 11 ]] ||
            fail "connect, rank 6 killed at $at: not once per survivor"
        grep -q '^FAIL: pmixsim rank 6:' "$tmp/o" && fail "connect, rank 6 killed at $at: the killed rank spoke"
        grep -q '^FAIL: pmixsim.1 rank [0-9]*: the last barrier' "$tmp/o" &&
            fail "connect, rank 6 killed at $at: a child's own barrier failed"
        t=$(sed -n 's/^# run: .* sim_s=\([0-9.]*\) .*/\1/p' "$tmp/o")
        awk -v t="$t" 'BEGIN { exit !(t > 1 && t <= 2.1) }' ||
            fail "connect, rank 6 killed at $at: the run ended at $t s"
        echo "ok: rank 6 killed at $at: 11 survivors got PMIX_GROUP_MEMBER_FAILED, the run ended at $t s"
    done
    ;;
group-fault)
    sim=$1
    for layout in "16 2 5 50ns construct" "16 2 5 1us any" "8 1 3 3us any"; do
        read -r nodes ppn victim at which <<<"$layout"
        np=$((nodes * ppn))
        "$sim" --quiet --nodes "$nodes" --ppn "$ppn" --fault "proc:$victim@$at" group --iters 3 \
            >"$tmp/o" 2>"$tmp/e"
        rc=$?
        [[ $rc == 1 ]] || fail "group-fault $layout: exit $rc: $(cat "$tmp/e")"
        pat='(construct|destruct) 0 failed: PMIX_GROUP_MEMBER_FAILED$'
        [[ $which == construct ]] && pat='construct 0 failed: PMIX_GROUP_MEMBER_FAILED$'
        [[ $(grep -cE "^group: rank [0-9]+: $pat" "$tmp/e") == $((np - 1)) ]] ||
            fail "group-fault $layout: not every survivor failed: $(cat "$tmp/e")"
        [[ $(grep -c '^group: rank ' "$tmp/e") == $((np - 1)) ]] ||
            fail "group-fault $layout: a survivor failed twice, or otherwise: $(cat "$tmp/e")"
        [[ $(grep -oE '^group: rank [0-9]+' "$tmp/e" | sort -u | wc -l) == $((np - 1)) ]] ||
            fail "group-fault $layout: not one line per survivor"
        grep -q "^group: rank $victim:" "$tmp/e" && fail "group-fault $layout: the killed rank spoke"
        t=$(sed -n 's/^# run: .* sim_s=\([0-9.]*\) .*/\1/p' "$tmp/o")
        awk -v t="$t" 'BEGIN { exit !(t > 0 && t <= 1.1) }' ||
            fail "group-fault $layout: the run ended at $t s"
        echo "ok: $layout: $((np - 1)) survivors got PMIX_GROUP_MEMBER_FAILED; the run ended at $t s"
    done
    ;;
*)
    fail "unknown test $cmd"
    ;;
esac
exit 0
