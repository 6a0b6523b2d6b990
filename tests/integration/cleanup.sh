#!/usr/bin/env bash
# cleanup.sh PMIXRUN JOB_RULES [pmixrun options...] - the cleanups a job
# registers (PMIx_Job_control: PMIX_REGISTER_CLEANUP_DIR, recursive, with
# PMIX_CLEANUP_IGNORE, and PMIX_REGISTER_CLEANUP) are carried out when the
# job ends: everything under the directory goes but the ignored entry,
# with all it holds; the directory stays since that entry is in it; a
# symbolic link goes, not what it points to; the registered file goes.
# Prints "cleanup.sh: PASS" or FAILED lines (tests/integration/expect.sh).
. "$(dirname "$0")/harness.sh"
pmixrun=$1 prog=$2
shift 2
harness_init cleanup
d=$work/tree
mkdir "$d"
"$pmixrun" --timeout 30 "$@" "$prog" cleanup "$d" || fail "the job failed (status $?)"
[ -f "$d/keep/d" ] || fail "the ignored entry keep/d went"
[ -d "$d" ] || fail "the directory went although keep/ is in it"
for gone in a sub; do
    [ -e "$d/$gone" ] && fail "$gone is still there"
done
[ -f "$d.out/target" ] || fail "the link's target went (the link was followed)"
[ -e "$d.file" ] && fail "the registered file is still there"
[ "$failures" -eq 0 ] && echo "cleanup.sh: PASS"
exit $((failures > 0))
