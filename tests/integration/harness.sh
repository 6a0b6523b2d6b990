# harness.sh - what the integration scripts that start their own jobs
# share (sourced, not run): a private work directory, a marker that every
# process of the test carries in its command line, fail() counting
# failures, and a cleanup on exit that stops the script's own jobs (the
# pids it adds to $pids_to_kill), kills exactly the marked processes and
# removes the work directory.
#
#   . "$(dirname "$0")/harness.sh"
#   harness_init NAME     # sets $work, $marker, $failures, $pids_to_kill; defines fail()
#
# A script that made its marker itself sets $marker before calling
# harness_init; at the end it reports with `exit $((failures > 0))` or as
# it likes.

harness_init() {
    harness_name=$1
    work=$(mktemp -d "${TMPDIR:-/tmp}/$harness_name.XXXXXX") || exit 2
    marker=${marker:-"$harness_name-marker-$$-$(date +%s%N)"}
    failures=0
    pids_to_kill=""
    trap harness_cleanup EXIT
}

fail() {
    echo "$harness_name.sh: FAILED: $*"
    failures=$((failures + 1))
}

harness_cleanup() {
    # The jobs the script started itself ($pids_to_kill): asked to end
    # (TERM), given a moment to, then killed.
    if [ -n "$pids_to_kill" ]; then
        for p in $pids_to_kill; do kill -TERM "$p" 2>/dev/null; done
        sleep 0.3
        for p in $pids_to_kill; do kill -KILL "$p" 2>/dev/null; done
    fi
    # Only the processes of this run: their command lines carry our marker.
    for p in $(pgrep -f -- "$marker"); do
        kill -KILL "$p" 2>/dev/null
    done
    rm -rf "$work"
}
