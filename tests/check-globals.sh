#!/usr/bin/env bash
# check-globals.sh - fail if an object file defines writable data.
#
# usage: check-globals.sh [--allow SUBSTRING]... OBJECT...
#
# STYLE habit 1: the library keeps no mutable global state; only the api/
# shim may (it finds the implicit context). Objects whose path contains an
# --allow substring are skipped (the ctest passes pmix_obj.dir/src/api/).
#
# How: `nm --format=sysv` lists each defined symbol with its type and its
# section. A symbol of type OBJECT or TLS counts as writable data when its
# section is one of .data*, .bss*, .tdata*, .tbss*, .sdata*, .sbss*, .ldata*,
# .lbss* or *COM* (common). Sections .data.rel.ro* are accepted: that is where
# position-independent code puts const data holding pointers (a const ops
# table), which nm shows with the letter `d` although it is read-only after
# relocation -- that is why this looks at sections and not at nm's letters.
# .rodata (R/r) is accepted too. Symbols a sanitizer adds (__odr_asan.*,
# __asan_*, __ubsan_*, __sancov_*) are ignored.
#
# Objects compiled with -flto -ffat-lto-objects (libpmix in optimized
# builds) hold two symbol tables; nm shows the LTO one by default, without
# types or sections, so nm is told the object's own format (objdump -f) to
# read the ordinary one. A table whose symbols all lack a type is an error,
# never a pass.
#
# Exit status: 0 no writable data, 1 some found (listed with their objects),
# 2 usage error or a tool failed.
set -euo pipefail

NM=${NM:-nm}
OBJDUMP=${OBJDUMP:-objdump}
allow=()
while [[ $# -gt 0 ]]; do
    case $1 in
    --allow)
        [[ $# -ge 2 ]] || { echo "check-globals: --allow needs an argument" >&2; exit 2; }
        allow+=("$2")
        shift 2
        ;;
    --) shift; break ;;
    -*) echo "check-globals: unknown option $1" >&2; exit 2 ;;
    *) break ;;
    esac
done
if [[ $# -eq 0 ]]; then
    echo "usage: check-globals.sh [--allow SUBSTRING]... OBJECT..." >&2
    exit 2
fi

checked=0
allowed=0
offenders=0
for obj in "$@"; do
    if [[ ! -f $obj ]]; then
        echo "check-globals: no such object file: $obj" >&2
        exit 2
    fi
    skip=false
    for a in "${allow[@]+"${allow[@]}"}"; do
        [[ $obj == *"$a"* ]] && skip=true
    done
    if $skip; then
        allowed=$((allowed + 1))
        continue
    fi
    checked=$((checked + 1))
    if ! format=$("$OBJDUMP" -f "$obj" 2>&1 | sed -n 's/.*file format //p' | head -n 1) ||
        [[ -z $format ]]; then
        echo "check-globals: $OBJDUMP -f found no file format in $obj" >&2
        exit 2
    fi
    if ! table=$("$NM" --format=sysv --defined-only --target="$format" "$obj" 2>&1); then
        echo "check-globals: $NM failed on $obj: $table" >&2
        exit 2
    fi
    # Fields: name | value | class | type | size | line | section
    hits=$(awk -F'|' '
        NF < 7 { next }
        {
            for (i = 1; i <= NF; i++) gsub(/^[ \t]+|[ \t]+$/, "", $i)
            name = $1; type = $4; size = $5; sect = $7
            if (type != "OBJECT" && type != "TLS") next
            if (sect ~ /^\.data\.rel\.ro/) next
            if (sect !~ /^(\.data|\.bss|\.tdata|\.tbss|\.sdata|\.sbss|\.ldata|\.lbss)/ && sect != "*COM*") next
            if (name ~ /^(__odr_asan|__asan_|___asan_|__ubsan_|__sancov_)/) next
            sub(/^0+/, "", size); if (size == "") size = "0"
            printf "    %-32s class %s, section %s, size 0x%s\n", name, $3, sect, size
        }' <<<"$table")
    # every defined symbol without a type: a table nm could not read
    # properly (an LTO-only view), which would pass anything
    if awk -F'|' 'NF >= 7 { n++; gsub(/[ \t]/, "", $4); if ($4 != "") typed++ }
                  END { exit !(n > 0 && typed == 0) }' <<<"$table"; then
        echo "check-globals: $NM shows no symbol types for $obj (an LTO symbol table?)" >&2
        exit 2
    fi
    if [[ -n $hits ]]; then
        src=${obj#*.dir/}
        echo "writable data in $obj (from ${src%.o}):"
        echo "$hits"
        offenders=$((offenders + $(wc -l <<<"$hits")))
    fi
done

if [[ $offenders -gt 0 ]]; then
    echo "check-globals: FAILED: $offenders writable data symbol(s) outside the allowed objects" \
        "($checked object(s) checked, $allowed allowed)."
    echo "check-globals: keep state in the context structs (px_client, px_server, ...);" \
        "make tables const; only src/api/ may hold the implicit default context."
    exit 1
fi
echo "check-globals: ok: $checked object(s) checked, $allowed allowed (api/), no writable data."
