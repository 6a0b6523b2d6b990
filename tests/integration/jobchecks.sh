# jobchecks.sh - checks on pmixrun jobs that several integration scripts
# share (sourced, not run): a job that lost a daemon (slurm.sh, ssh.sh), and
# what a stranger at a job's port got back (mesh_auth.sh, ssh.sh).
#
#   . "$(dirname "$0")/jobchecks.sh"
#
# The sourcing script defines fail MESSAGE, which reports a failed check.

# check_lost_daemon WHAT OUT NODE VICTIM RC START: the checks after a job
# whose daemon of NODE (pid VICTIM; empty if it never showed up) was killed
# while that node's ranks 2 and 3 ran. Shows the job's output (file OUT)
# and fails unless the daemon showed up, the job ended with a non-zero
# status RC within 15 s of START (a value of $SECONDS), and pmixrun named
# NODE and ranks 2,3 as lost. WHAT begins every message.
check_lost_daemon() {
    local what=$1 out=$2 node=$3 victim=$4 rc=$5 start=$6
    sed 's/^/    /' "$out"
    [ -n "$victim" ] || fail "$what: the daemon of $node never showed up"
    [ "$rc" != 0 ] || fail "$what: status 0 after a daemon was killed"
    [ $((SECONDS - start)) -le 15 ] || fail "$what: the job took more than 15 s to end"
    grep -Eq "the daemon of $node .*its processes are lost: rank\(s\) 2,3" "$out" ||
        fail "$what: pmixrun did not name $node and its ranks"
}

# stranger_learned_nothing WHO FILE: looks at what each try of
# mesh_stranger.py got back (its HEX lines in FILE) and fails for a try
# that got more than one challenge (u32 length, u8 type, namespace, tag:
# 61 bytes, 122 hexadecimal digits) or a business card. WHO begins every
# message.
stranger_learned_nothing() {
    local who=$1 file=$2 hex card
    card=$(printf 'bizcard' | od -An -tx1 | tr -d ' \n')
    while read -r _ hex; do
        [ ${#hex} -le 122 ] || fail "$who got ${#hex} hex digits back: more than a challenge"
        case "$hex" in *"$card"*) fail "$who got a business card" ;; esac
    done < <(grep '^HEX' "$file")
}

# stranger_try FILE TRY PORT BYTES SECONDS: true when mesh_stranger.py's
# try number TRY at PORT (its lines in FILE) got BYTES bytes back and was
# closed after SECONDS seconds (an ERE for the whole seconds; one decimal
# follows).
stranger_try() {
    grep -Eq "^try $2 port $3: got $4 bytes, closed after $5\.[0-9] s" "$1"
}
