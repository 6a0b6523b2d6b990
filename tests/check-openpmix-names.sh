#!/usr/bin/env bash
# check-openpmix-names.sh - do our headers give every name OpenPMIx's do?
#
# usage: check-openpmix-names.sh CC OUR_INCLUDE_DIR NAMES_LIST ABI_DOC
#
# NAMES_LIST (tests/abi/openpmix-4.2.2-names.txt) holds every macro and
# inline function of OpenPMIx 4.2.2's public headers, "HEADER KIND NAME" a
# line. Each name must be defined as a macro, or declared (a function, an
# inline function), once a program includes our pmix.h, pmix_server.h,
# pmix_tool.h and pmix_deprecated.h; the compiler says which are not. A
# name may be missing only if ABI_DOC (docs/abi.md) has a table row for it
# that says "absent" (a row starting with | `NAME`).
#
# Exit status: 0 every name is there or documented, 1 otherwise, 2 usage.
set -euo pipefail

if [[ $# -ne 4 ]]; then
    echo "usage: check-openpmix-names.sh CC OUR_INCLUDE_DIR NAMES_LIST ABI_DOC" >&2
    exit 2
fi
cc=$1 inc=$2 list=$3 doc=$4
work=$(mktemp -d "${TMPDIR:-/tmp}/pmixlab-names.XXXXXX")
trap 'rm -rf "$work"' EXIT

names=$(sed -e 's/#.*//' "$list" | awk 'NF == 3 { print $3 }')
total=$(grep -c . <<<"$names")
{
    echo '#include <pmix.h>'
    echo '#include <pmix_server.h>'
    echo '#include <pmix_tool.h>'
    echo '#include <pmix_deprecated.h>'
    echo 'void pmixlab_check_names(void);'
    echo 'void pmixlab_check_names(void)'
    echo '{'
    while IFS= read -r n; do
        printf '#ifndef %s\n    (void)%s;\n#endif\n' "$n" "$n"
    done <<<"$names"
    echo '}'
} >"$work/names.c"

# Each undeclared name is one error; -fmax-errors=0 lists them all.
"$cc" -std=gnu11 -fsyntax-only -fmax-errors=0 -I"$inc" "$work/names.c" >"$work/out" 2>&1 || true
missing=$(grep -oE "error: .([A-Za-z_0-9]+). undeclared" "$work/out" |
    sed -E 's/.*error: .([A-Za-z_0-9]+). undeclared/\1/' | sort -u || true)
other=$(grep 'error:' "$work/out" | grep -v 'undeclared' || true)
if [[ -n $other ]]; then
    echo "check-openpmix-names: our headers do not compile:"
    cat "$work/out"
    exit 1
fi
status=0
undocumented=
for n in $missing; do
    if ! grep -Eq "^\| \`$n\` .*absent" "$doc"; then
        undocumented="$undocumented $n"
        status=1
    fi
done
nmissing=$(grep -c . <<<"$missing" || true)
echo "check-openpmix-names: $((total - nmissing)) of $total OpenPMIx 4.2.2 names are in our headers"
if [[ -n $missing ]]; then
    echo "absent:" $missing
fi
if [[ $status -ne 0 ]]; then
    echo "check-openpmix-names: FAILED: absent and not documented as such in $doc:$undocumented"
fi
exit $status
