#!/usr/bin/env bash
# help2roff.sh - write a command's man page from its --help text.
#
# usage: help2roff.sh OUT NAME SECTION VERSION SUMMARY [--also "SUBCOMMAND"...] -- COMMAND...
#
# The man pages of pmixlab's commands are made at build time from what the
# built commands print for --help, so the page and the help can never say
# different things (tests/check-manpages.sh checks that every option the
# help lists is in the page). COMMAND --help gives the page; each --also
# SUBCOMMAND adds what `COMMAND SUBCOMMAND --help` prints as a section of
# its own (pmixsim's `run` and `suite`). SUMMARY is the one line of the NAME
# section. A SEE ALSO section names the other commands' pages and the
# documentation (share/doc/pmixlab).
#
# How the help text becomes roff:
#   - lines starting with "usage:" (any case), and the lines after them that
#     start with the command's name, make the SYNOPSIS;
#   - an indented line whose text begins with "-" (an option), or with a
#     word followed by a gap of two or more spaces (an environment
#     variable, a value), is a tagged paragraph (.TP): the tag is what comes
#     before the gap, or before the column where the item above started its
#     description; more deeply indented lines continue it;
#   - other lines are running text, a blank line starts a new paragraph,
#     and a line ending with ":" that starts a paragraph is a subsection
#     title.
# Exit status: the command's, if its --help fails; 0 otherwise.
set -euo pipefail

if [[ $# -lt 7 ]]; then
    echo "usage: help2roff.sh OUT NAME SECTION VERSION SUMMARY [--also SUB...] -- COMMAND..." >&2
    exit 2
fi
out=$1 name=$2 section=$3 version=$4 summary=$5
shift 5
also=()
while [[ $# -gt 0 && $1 != -- ]]; do
    case $1 in
    --also)
        also+=("$2")
        shift 2
        ;;
    *)
        echo "help2roff.sh: unknown option $1" >&2
        exit 2
        ;;
    esac
done
[[ ${1-} == -- ]] || {
    echo "help2roff.sh: no -- COMMAND" >&2
    exit 2
}
shift
cmd=("$@")

# A sanitizer build must not fail the build over what --help leaves behind.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0

help_text() { # [SUBCOMMAND]
    local text rc=0
    text=$("${cmd[@]}" "$@" --help 2>&1) || rc=$?
    if [[ $rc -ne 0 ]]; then
        printf 'help2roff.sh: %s %s --help failed (exit %d):\n%s\n' "${cmd[*]}" "$*" "$rc" "$text" >&2
        exit "$rc"
    fi
    printf '%s\n' "$text"
}

# roff: the help text is plain text; escape what roff would read as requests
# or escapes, and write hyphens as \- so that options can be searched for
# and copied.
to_roff() {
    awk -v name="$name" -v title="$1" '
    function esc(s) {
        gsub(/\\/, "\\e", s)
        gsub(/-/, "\\-", s)
        if (s ~ /^[.\x27]/) s = "\\&" s
        return s
    }
    function flush_item() {
        if (tag != "") {
            print ".TP"
            print "\\fB" esc(tag) "\\fR"
            if (body != "") print esc(body)
        }
        tag = ""; body = ""
    }
    BEGIN { insyn = 0; descol = 0; itemind = -1; started = 0; para = 1 }
    {
        line = $0
        sub(/[ \t]+$/, "", line)
        if (line ~ /^[Uu][Ss][Aa][Gg][Ee]:/) {
            flush_item()
            sub(/^[Uu][Ss][Aa][Gg][Ee]:[ ]*/, "", line)
            if (title != "" && !started) { print ".SS \"" esc(title) "\"" }
            if (title == "" && !insyn) { print ".SH SYNOPSIS" }
            print ".nf"
            print esc(line)
            insyn = 1; started = 1
            next
        }
        if (insyn) {
            t = line; sub(/^[ ]+/, "", t)
            if (t != "" && (index(t, name " ") == 1 || t == name || line ~ /^        +\[/)) {
                print esc(line ~ /^        +\[/ ? "    " t : t)
                next
            }
            print ".fi"
            insyn = 0
            if (title == "") print ".SH DESCRIPTION"
        }
        if (!started) {
            if (title != "") print ".SS \"" esc(title) "\""
            else print ".SH DESCRIPTION"
            started = 1
        }
        if (line == "") { flush_item(); print ".PP"; itemind = -1; para = 1; next }
        first = para; para = 0
        match(line, /^[ ]*/); ind = RLENGTH
        t = substr(line, ind + 1)
        # continuation of the item above: deeper than its tag
        if (tag != "" && ind > itemind) {
            body = (body == "" ? t : body " " t)
            next
        }
        if (ind >= 1) {
            # an item: text, then a gap of two spaces or more, then its description
            if (match(t, /[ ][ ]+/)) {
                flush_item()
                tag = substr(t, 1, RSTART - 1)
                body = substr(t, RSTART + RLENGTH)
                descol = ind + RSTART + RLENGTH - 1
                itemind = ind
                next
            }
            if (substr(t, 1, 1) == "-") {
                flush_item()
                itemind = ind
                # no gap: split where the items above start their descriptions
                if (descol > ind + 1 && length(line) > descol && substr(line, descol, 1) == " ") {
                    tag = substr(line, ind + 1, descol - ind - 1)
                    sub(/[ ]+$/, "", tag)
                    body = substr(line, descol + 1)
                } else {
                    tag = t; body = ""
                }
                next
            }
        }
        flush_item()
        itemind = -1
        if (first && ind == 0 && t ~ /:$/ && t !~ /^[^ ]+: /) {
            print ".SS \"" esc(substr(t, 1, length(t) - 1)) "\""
            next
        }
        print esc(t)
    }
    END {
        flush_item()
        if (insyn) { print ".fi"; if (title == "") print ".SH DESCRIPTION" }
    }'
}

NAME_UPPER=$(tr '[:lower:]' '[:upper:]' <<<"$name")
tmp=$out.tmp.$$
trap 'rm -f "$tmp"' EXIT
{
    printf '.\\" Generated by man/help2roff.sh from "%s --help". DO NOT EDIT.\n' "$name"
    printf '.TH %s %s "" "pmixlab %s" "pmixlab"\n' "$NAME_UPPER" "$section" "$version"
    printf '.SH NAME\n%s \\- %s\n' "$name" "$summary"
    help_text | to_roff ""
    for sub in "${also[@]}"; do
        printf '.SH "%s %s"\n' "$(tr '[:lower:]' '[:upper:]' <<<"$name")" "$(tr '[:lower:]' '[:upper:]' <<<"$sub")"
        help_text "$sub" | to_roff "$name $sub --help"
    done
    printf '.SH "SEE ALSO"\n'
    see=()
    for other in pmixrun pmixd pmixsim; do
        [[ $other == "$name" ]] || see+=("\\fB$other\\fR(1)")
    done
    (IFS=,; printf '%s\n' "${see[*]}" | sed 's/,/, /g')
    printf '.PP\nThe documentation of pmixlab: README.md and the files of docs/, installed\n'
    printf 'in share/doc/pmixlab under the installation prefix.\n'
} >"$tmp"
mv "$tmp" "$out"
