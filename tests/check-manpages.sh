#!/usr/bin/env bash
# check-manpages.sh - does a command's man page list every option its
# --help lists?
#
# usage: check-manpages.sh PAGE COMMAND [SUBCOMMAND...]
#
# The pages are written from --help at build time (man/help2roff.sh), so
# they should never miss one; this catches a page that was not remade, or
# a help text the converter mangles. The options are the words starting
# with - or -- in the output of `COMMAND --help` and of `COMMAND
# SUBCOMMAND --help`; the page is read as text, with roff's \- and font
# changes undone.
set -euo pipefail

if [[ $# -lt 2 ]]; then
    echo "usage: check-manpages.sh PAGE COMMAND [SUBCOMMAND...]" >&2
    exit 2
fi
page=$1 cmd=$2
shift 2
[[ -s $page ]] || {
    echo "check-manpages: no man page $page for $cmd"
    exit 1
}
# What --help leaves allocated at exit is not this check's business.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0

help=$("$cmd" --help 2>&1)
for sub in "$@"; do
    help+=$'\n'$("$cmd" "$sub" --help 2>&1)
done
text=$(sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\e/\\/g' "$page")

mapfile -t options < <(grep -oE '(^|[^A-Za-z0-9_-])--?[A-Za-z][A-Za-z0-9-]*' <<<"$help" |
    sed -E 's/^[^-]*//' | LC_ALL=C sort -u)
[[ ${#options[@]} -gt 0 ]] || {
    echo "check-manpages: $cmd --help lists no option at all"
    exit 1
}
missing=()
for opt in "${options[@]}"; do
    grep -qE -- "(^|[^A-Za-z0-9_-])${opt}([^A-Za-z0-9_-]|\$)" <<<"$text" || missing+=("$opt")
done
if [[ ${#missing[@]} -gt 0 ]]; then
    echo "check-manpages: $page lacks options that $(basename "$cmd") --help lists: ${missing[*]}"
    echo "check-manpages: rebuild (the man pages are made from --help by man/help2roff.sh)"
    exit 1
fi
echo "check-manpages: $page has all ${#options[@]} options of $(basename "$cmd") --help: ${options[*]}"
