#!/bin/bash
# shellcheck disable=SC2016 # the ranks expand their own variables
# options.sh - pmixrun's mpirun-style options (docs/user-guide.md, "Coming
# from mpirun"), one case per run:
#
#   options.sh PMIXRUN CASE
#
# The ranks are shell commands (a program that never uses PMIx may run
# under pmixrun): they print what they see, and the case checks it.
#
#   help      --help groups the options; --version prints the version
#   np        --np N starts N processes
#   x         -x VAR=VAL and -x VAR set the ranks' environment; the last wins
#   wdir      --wdir runs the ranks there, and finds a relative program there
#   oversub   --oversubscribe is accepted; --nooversubscribe refuses more
#             processes than cores (exit 1) and accepts as many
#   yield     OMPI_MCA_mpi_yield_when_idle=1 when there are more processes
#             than cores, none otherwise, and a value the user set is kept
#   merge     --merge-stderr-to-stdout: the ranks' stderr comes on stdout
#   output    --output-filename DIR: DIR/1/rank.R/stdout and stderr, copied
#             to pmixrun's output too; a relative DIR; :nocopy; merged into
#             one file
#   stdin     rank 0 reads pmixrun's stdin by default, the others /dev/null;
#             --stdin all, --stdin 1, --stdin none; more than a pipe holds;
#             a closed stdin
#   signals   SIGUSR1 and SIGUSR2 reach every rank; SIGTSTP stops the ranks
#             and pmixrun, SIGCONT continues them; the job directory goes
#   ppr       --map-by ppr:N:core|node: N per core or node, -n defaults to
#             that many, and more is refused
#   bind      --bind-to core binds round robin and --report-bindings says so;
#             socket and numa are accepted
#   host      --host localhost:3 runs 3; --host node0:2,node1 runs 3 over
#             two virtual nodes, 2 on node0; other names are refused
#   nodes     with --nodes 2: -x, --merge-stderr-to-stdout and SIGUSR1 reach
#             every node's ranks; pmixrun's stdin reaches rank 0 by default,
#             --stdin 2 and --stdin all on the other node too, more than a
#             pipe holds (PD_STDIN through the daemons)
#   apps      application contexts separated by ':', on one node and with
#             --nodes 2: each its own ranks, program, arguments, -x and
#             --wdir; a ':' without a program after it, a context without
#             -n, and an empty --pset are refused (exit 2)
set -u

[ $# -eq 2 ] || { echo "usage: options.sh PMIXRUN CASE" >&2; exit 2; }
pmixrun=$(realpath "$1")
what=$2

. "$(dirname "$0")/harness.sh"
harness_init options

# run OPTS... -- sets $out (stdout), $err (stderr) and $status.
run() {
    timeout -k 5 60 "$pmixrun" --timeout 30 "$@" >"$work/out" 2>"$work/err" </dev/null
    status=$?
    out=$(cat "$work/out")
    err=$(cat "$work/err")
    echo "options.sh: pmixrun $* -> status $status"
    sed 's/^/    out: /' "$work/out"
    sed 's/^/    err: /' "$work/err"
}

# expect_lines N ERE TEXT: exactly N lines of TEXT match ERE.
expect_lines() {
    local n
    n=$(printf '%s\n' "$3" | grep -cE -- "$2")
    [ "$n" = "$1" ] || fail "wanted $1 lines matching '$2', got $n"
}

cores=$(nproc)

case $what in
help)
    run --help
    [ $status = 0 ] || fail "--help exited $status"
    for h in "^General:" "^Mapping and binding:" "^Input and output:" "^Signals:" \
        "^  -x VAR" "^  --host LIST" "^  --output-filename" "^  --stdin" "^  --bind-to" \
        "^  --map-by" "^  --report-bindings" "^  --merge-stderr-to-stdout" "^  --wdir" \
        "^  --nooversubscribe" "^  -V, --version" "^  --pset NAME"; do
        expect_lines 1 "$h" "$out"
    done
    run --version
    [ $status = 0 ] || fail "--version exited $status"
    expect_lines 1 '^pmixrun \(pmixlab\) [0-9]+\.[0-9]+' "$out"
    ;;
np)
    run --np 3 sh -c 'echo rank=$PMIX_RANK'
    [ $status = 0 ] || fail "status $status"
    expect_lines 3 '^rank=[0-2]$' "$out"
    ;;
x)
    export OPTIONS_FROM_ENV=inherited OPTIONS_OVERRIDE=old
    run -n 2 -x OPTIONS_SET=a=b -x OPTIONS_FROM_ENV -x OPTIONS_OVERRIDE=new \
        -x OPTIONS_LAST=1 -x OPTIONS_LAST=2 \
        sh -c 'echo "set=$OPTIONS_SET env=$OPTIONS_FROM_ENV over=$OPTIONS_OVERRIDE last=$OPTIONS_LAST"'
    [ $status = 0 ] || fail "status $status"
    expect_lines 2 '^set=a=b env=inherited over=new last=2$' "$out"
    run -n 1 -x OPTIONS_NEVER_SET_XYZ true
    [ $status = 0 ] || fail "-x of an unset variable: status $status"
    expect_lines 1 'OPTIONS_NEVER_SET_XYZ is not set' "$err"
    ;;
wdir)
    mkdir "$work/w"
    printf '#!/bin/sh\necho "prog in $(pwd)"\n' >"$work/w/prog.sh"
    chmod +x "$work/w/prog.sh"
    run -n 2 --wdir "$work/w" ./prog.sh
    [ $status = 0 ] || fail "status $status"
    expect_lines 2 "^prog in $work/w\$" "$out"
    run -n 1 --wdir "$work/nonexistent" true
    [ $status = 1 ] || fail "--wdir to a missing directory: status $status, not 1"
    expect_lines 1 'nonexistent' "$err"
    ;;
oversub)
    run -n $((cores + 1)) --oversubscribe true
    [ $status = 0 ] || fail "--oversubscribe: status $status"
    run -n $((cores + 1)) --nooversubscribe true
    [ $status = 1 ] || fail "--nooversubscribe with $((cores + 1)) processes: status $status, not 1"
    expect_lines 1 'nooversubscribe' "$err"
    run -n "$cores" --nooversubscribe true
    [ $status = 0 ] || fail "--nooversubscribe with $cores processes: status $status"
    ;;
yield)
    unset OMPI_MCA_mpi_yield_when_idle
    run -n $((cores + 1)) sh -c 'echo "yield=${OMPI_MCA_mpi_yield_when_idle-unset}"'
    expect_lines $((cores + 1)) '^yield=1$' "$out"
    run -n "$cores" sh -c 'echo "yield=${OMPI_MCA_mpi_yield_when_idle-unset}"'
    expect_lines "$cores" '^yield=unset$' "$out"
    run -n $((cores + 1)) -x OMPI_MCA_mpi_yield_when_idle=0 \
        sh -c 'echo "yield=${OMPI_MCA_mpi_yield_when_idle-unset}"'
    expect_lines $((cores + 1)) '^yield=0$' "$out"
    ;;
merge)
    run -n 2 --merge-stderr-to-stdout sh -c 'echo "to-stdout $PMIX_RANK"; echo "to-stderr $PMIX_RANK" >&2'
    [ $status = 0 ] || fail "status $status"
    expect_lines 2 '^to-stderr [01]$' "$out"
    expect_lines 0 'to-stderr' "$err"
    ;;
output)
    prog='echo "out $PMIX_RANK"; echo "err $PMIX_RANK" >&2'
    run -n 10 --output-filename "$work/o" sh -c "$prog"
    [ $status = 0 ] || fail "status $status"
    expect_lines 10 '^out [0-9]$' "$out"
    expect_lines 10 '^err [0-9]$' "$err"
    for r in 0 9; do
        [ "$(cat "$work/o/1/rank.0$r/stdout" 2>&1)" = "out $r" ] || fail "rank.0$r/stdout is wrong"
        [ "$(cat "$work/o/1/rank.0$r/stderr" 2>&1)" = "err $r" ] || fail "rank.0$r/stderr is wrong"
    done
    [ "$(find "$work/o" -type f | wc -l)" = 20 ] || fail "not 20 files: $(find "$work/o" -type f)"
    # A relative DIR is relative to where pmixrun starts, not to --wdir.
    (cd "$work" && "$pmixrun" --timeout 30 -n 1 --wdir / --output-filename rel sh -c "$prog" \
        >/dev/null 2>&1 </dev/null)
    [ "$(cat "$work/rel/1/rank.0/stdout" 2>&1)" = "out 0" ] ||
        fail "a relative --output-filename is not taken from where pmixrun started"
    run -n 2 --output-filename "$work/m:nocopy" --merge-stderr-to-stdout sh -c "$prog"
    [ $status = 0 ] || fail "nocopy: status $status"
    expect_lines 0 '^(out|err) ' "$out$err"
    [ "$(sort "$work/m/1/rank.1/stdout" | tr '\n' ' ')" = "err 1 out 1 " ] ||
        fail "merged rank.1/stdout: $(cat "$work/m/1/rank.1/stdout")"
    [ -e "$work/m/1/rank.1/stderr" ] && fail "merged output has a stderr file"
    run -n 1 --output-filename "$work/x:bogus" true
    [ $status = 2 ] || fail "an unknown directive: status $status, not 2"
    expect_lines 1 "unknown directive 'bogus'" "$err"
    ;;
stdin)
    prog='if read -r line; then echo "rank $PMIX_RANK read $line"; else echo "rank $PMIX_RANK eof"; fi'
    printf 'first line\n' >"$work/in"
    stdin_run() {
        timeout -k 5 60 "$pmixrun" --timeout 30 "$@" sh -c "$prog" <"$work/in" >"$work/out" 2>&1
        status=$?
        out=$(cat "$work/out")
        echo "options.sh: pmixrun $* < file -> status $status"
        sed 's/^/    /' "$work/out"
    }
    stdin_run -n 2
    expect_lines 1 '^rank 0 read first line$' "$out"
    expect_lines 1 '^rank 1 eof$' "$out"
    stdin_run -n 3 --stdin all
    expect_lines 3 '^rank [0-2] read first line$' "$out"
    stdin_run -n 3 --stdin 1
    expect_lines 1 '^rank 1 read first line$' "$out"
    expect_lines 2 '^rank [02] eof$' "$out"
    stdin_run -n 2 --stdin none
    expect_lines 2 '^rank [01] eof$' "$out"
    # More than a pipe holds, to a rank that reads it all.
    head -c 300000 /dev/zero | tr '\0' 'x' >"$work/in"
    timeout -k 5 60 "$pmixrun" --timeout 30 -n 2 --stdin all sh -c 'echo "rank $PMIX_RANK got $(wc -c)"' \
        <"$work/in" >"$work/out" 2>&1
    expect_lines 2 '^rank [01] got 300000$' "$(cat "$work/out")"
    # No stdin at all (closed): every rank reads end of file, none hangs.
    timeout -k 5 60 "$pmixrun" --timeout 30 -n 2 sh -c "$prog" >"$work/out" 2>&1 <&-
    expect_lines 2 '^rank [01] eof$' "$(cat "$work/out")"
    run -n 2 --stdin 2 true
    [ $status = 2 ] || fail "--stdin 2 with 2 ranks: status $status, not 2"
    ;;
signals)
    prog='trap "echo \"rank $PMIX_RANK got USR1\"" USR1; trap "echo \"rank $PMIX_RANK got USR2\"; exit 0" USR2
          echo "ready $PMIX_RANK $$"; i=0; while [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done'
    mkdir -m 700 "$work/tmp"
    TMPDIR="$work/tmp" "$pmixrun" --timeout 60 -n 2 sh -c "$prog" "$marker" >"$work/out" 2>&1 </dev/null &
    pid=$!
    for _ in $(seq 1 100); do
        [ "$(grep -c '^ready' "$work/out")" = 2 ] && break
        sleep 0.1
    done
    [ "$(grep -c '^ready' "$work/out")" = 2 ] || fail "the ranks did not start: $(cat "$work/out")"
    ranks=$(awk '/^ready/ { print $3 }' "$work/out")
    state() { awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null; }
    kill -TSTP "$pid"
    sleep 0.5
    [ "$(state "$pid")" = T ] || fail "pmixrun is not stopped after SIGTSTP: $(state "$pid")"
    for r in $ranks; do
        [ "$(state "$r")" = T ] || fail "rank pid $r is not stopped after SIGTSTP: $(state "$r")"
    done
    kill -CONT "$pid"
    sleep 0.5
    for p in "$pid" $ranks; do
        [ "$(state "$p")" != T ] || fail "pid $p still stopped after SIGCONT"
    done
    kill -USR1 "$pid"
    for _ in $(seq 1 50); do
        [ "$(grep -c 'got USR1' "$work/out")" = 2 ] && break
        sleep 0.1
    done
    kill -0 "$pid" 2>/dev/null || fail "pmixrun ended on SIGUSR1"
    kill -USR2 "$pid"
    wait "$pid"
    status=$?
    sed 's/^/    /' "$work/out"
    [ $status = 0 ] || fail "the ranks exit 0 on SIGUSR2, but pmixrun exited $status"
    out=$(cat "$work/out")
    expect_lines 2 '^rank [01] got USR1$' "$out"
    expect_lines 2 '^rank [01] got USR2$' "$out"
    [ -z "$(ls -A "$work/tmp")" ] || fail "left behind: $(ls -A "$work/tmp")"
    ;;
ppr)
    run --map-by ppr:1:core sh -c 'echo rank=$PMIX_RANK'
    [ $status = 0 ] || fail "status $status"
    expect_lines "$cores" '^rank=' "$out"
    run --map-by ppr:2:node sh -c 'echo rank=$PMIX_RANK'
    expect_lines 2 '^rank=' "$out"
    run --map-by ppr:2:node -n 3 true
    [ $status = 2 ] || fail "-n 3 over ppr:2:node: status $status, not 2"
    expect_lines 1 'at most 2 processes' "$err"
    run --map-by ppr:1:board true
    [ $status = 2 ] || fail "ppr:1:board: status $status, not 2"
    ;;
bind)
    run -n "$cores" --bind-to core --report-bindings sh -c 'grep Cpus_allowed_list /proc/self/status'
    [ $status = 0 ] || fail "status $status"
    expect_lines "$cores" 'MCW rank [0-9]+ bound to socket [0-9]+\[core [0-9]+\]: \[' "$err"
    expect_lines "$cores" '^Cpus_allowed_list:[[:space:]]+[0-9]+$' "$out"
    for b in socket numa none; do
        run -n 2 --bind-to $b --report-bindings true
        [ $status = 0 ] || fail "--bind-to $b: status $status"
        expect_lines 2 'MCW rank [01] ' "$err"
    done
    run -n 2 --bind-to board true
    [ $status = 2 ] || fail "--bind-to board: status $status, not 2"
    ;;
host)
    run --host localhost:3 sh -c 'echo rank=$PMIX_RANK'
    [ $status = 0 ] || fail "localhost:3: status $status"
    expect_lines 3 '^rank=' "$out"
    run --host node0:2,node1 sh -c 'echo "rank=$PMIX_RANK parent=$(tr "\0" " " </proc/$PPID/cmdline)"'
    [ $status = 0 ] || fail "node0:2,node1: status $status"
    expect_lines 2 '^rank=[01] parent=.*--node 0 ' "$out"
    expect_lines 1 '^rank=2 parent=.*--node 1 ' "$out"
    run --host otherhost.example,node0 true
    [ $status = 2 ] || fail "another host: status $status, not 2"
    expect_lines 1 "otherhost.example,node0: give this machine, virtual nodes .* not a mix" "$err"
    # other hosts go to the launch agent, as a hostfile of host names does
    run --host otherhost.invalid:2 --launch-agent false true
    [ $status = 1 ] || fail "a host whose agent fails: status $status, not 1"
    expect_lines 1 "the daemon of otherhost.invalid .pid [0-9]*. exited with status 1" "$err"
    # daemons that never say hello: the set-up deadline is per level of
    # the launch tree (a.invalid starts b.invalid: two levels)
    printf '#!/bin/sh\nexec sleep 20\n' >"$work/mute_agent"
    chmod +x "$work/mute_agent"
    PMIXLAB_PMIXRUN_SETUP_S=1 run --host a.invalid,b.invalid,c.invalid --launch-fanout 2 \
        --launch-agent "$work/mute_agent" true
    [ $status = 1 ] || fail "daemons that never say hello: status $status, not 1"
    expect_lines 1 "only 0 of 3 daemons started within 2 s .1 s per level of the launch tree.$" "$err"
    run --launch-fanout 0 --host otherhost.invalid true
    [ $status = 2 ] || fail "--launch-fanout 0: status $status, not 2"
    run --launch-fanout 2 --nodes 2 -n 2 true
    [ $status = 2 ] || fail "--launch-fanout without hosts: status $status, not 2"
    expect_lines 1 "launch-fanout need host names" "$err"
    run --host node1 true
    [ $status = 2 ] || fail "node1 alone: status $status, not 2"
    run --host localhost:1 -n 2 --nooversubscribe true
    [ $status = 1 ] || fail "2 processes on 1 slot with --nooversubscribe: status $status, not 1"
    ;;
nodes)
    run --nodes 2 -n 4 -x OPTIONS_X=on --merge-stderr-to-stdout sh -c 'echo "x=$OPTIONS_X $PMIX_RANK" >&2'
    [ $status = 0 ] || fail "status $status"
    expect_lines 4 '^x=on [0-3]$' "$out"
    prog='if read -r line; then echo "rank $PMIX_RANK read $line"; else echo "rank $PMIX_RANK eof"; fi'
    printf 'first line\n' >"$work/in"
    for to in 0 2 all; do
        timeout -k 5 60 "$pmixrun" --timeout 30 --nodes 2 -n 3 --map-by node --stdin $to \
            sh -c "$prog" <"$work/in" >"$work/out" 2>&1
        out=$(cat "$work/out")
        if [ $to = all ]; then
            expect_lines 3 '^rank [0-2] read first line$' "$out"
        else
            expect_lines 1 "^rank $to read first line\$" "$out"
            expect_lines 2 '^rank [0-2] eof$' "$out"
        fi
    done
    head -c 300000 /dev/zero | tr '\0' 'x' >"$work/in"
    timeout -k 5 60 "$pmixrun" --timeout 30 --nodes 2 -n 2 --map-by node --stdin all \
        sh -c 'echo "rank $PMIX_RANK got $(wc -c)"' <"$work/in" >"$work/out" 2>&1
    expect_lines 2 '^rank [01] got 300000$' "$(cat "$work/out")"
    prog='trap "echo \"rank $PMIX_RANK got USR1\"; exit 0" USR1; echo ready; while :; do sleep 0.1; done'
    "$pmixrun" --timeout 60 --nodes 2 -n 2 sh -c "$prog" "$marker" >"$work/out" 2>&1 </dev/null &
    pid=$!
    for _ in $(seq 1 100); do
        [ "$(grep -c '^ready' "$work/out")" = 2 ] && break
        sleep 0.1
    done
    kill -USR1 "$pid"
    wait "$pid"
    status=$?
    sed 's/^/    /' "$work/out"
    [ $status = 0 ] || fail "SIGUSR1 with --nodes: status $status"
    expect_lines 2 '^rank [01] got USR1$' "$(cat "$work/out")"
    ;;
apps)
    mkdir "$work/w"
    prog='echo "$0 rank=$PMIX_RANK a=${OPTIONS_A-} b=${OPTIONS_B-} dir=$(pwd) args=$*"'
    for nodes in "" "--nodes 2"; do
        # shellcheck disable=SC2086 # $nodes is one option and its value, or nothing
        run $nodes -n 2 -x OPTIONS_A=1 sh -c "$prog" first x : \
            -n 3 -x OPTIONS_B=2 --wdir "$work/w" sh -c "$prog" second y z
        [ $status = 0 ] || fail "$nodes: status $status"
        expect_lines 2 "^first rank=[01] a=1 b= dir=$(pwd) args=x\$" "$out"
        expect_lines 3 "^second rank=[234] a= b=2 dir=$work/w args=y z\$" "$out"
    done
    run -n 2 true :
    [ $status = 2 ] || fail "nothing after ':': status $status, not 2"
    expect_lines 1 "application context 2 .*has no program" "$err"
    run -n 2 true : -n 1
    [ $status = 2 ] || fail "no program after ':' -n 1: status $status, not 2"
    expect_lines 1 "application context 2 .*has no program" "$err"
    run -n 1 true : : -n 1 true
    [ $status = 2 ] || fail "'::': status $status, not 2"
    run true : -n 1 true
    [ $status = 2 ] || fail "a context without -n: status $status, not 2"
    expect_lines 1 "application context 1 \(true\) needs -n" "$err"
    run -n 1 --pset "" true
    [ $status = 2 ] || fail "--pset '': status $status, not 2"
    expect_lines 1 "^pmixrun: --pset needs the name of a process set" "$err"
    run -n 1 --pset ocean true : -n 1 --pset= true
    [ $status = 2 ] || fail "--pset=: status $status, not 2"
    run -n 1 --pset ocean true : -n 1 --pset ice true
    [ $status = 0 ] || fail "two sets: status $status"
    ;;
*)
    echo "options.sh: unknown case $what" >&2
    exit 2
    ;;
esac

if [ $failures -ne 0 ]; then
    echo "options.sh: $what: $failures check(s) failed"
    exit 1
fi
echo "options.sh: $what: all checks passed"
