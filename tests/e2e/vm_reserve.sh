#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# 1 GiB reserved PROT_NONE, two parts committed with mprotect, one
# decommitted with mprotect, all released by munmap: the commit-lifetimes
# table of the program's own calls shows exactly those two lifetimes, both
# decommitted, committed by commit().
source "$(dirname "$0")/record_lib.sh"
command -v jq > /dev/null || fail "jq is needed (scripts/setup.sh --test)"

"$MEMSCRIBE" record -q -o "$WORK/t.mscr" -- "$MS_PROGRAMS/vm_reserve" > "$WORK/expect" ||
    fail "record exited with $?"
"$MEMSCRIBE" vmem --origin call --rows 0 --top 0 --format json "$WORK/t.mscr" > "$WORK/v.json" ||
    fail "vmem failed"
jq -r '.lifetimes[] | .range' "$WORK/v.json" | sort > "$WORK/got"
sort "$WORK/expect" | sed 's/0x0*/0x/g' > "$WORK/want"
diff -u "$WORK/want" "$WORK/got" || fail "commit lifetimes differ"
[ "$(jq '[.lifetimes[] | select(.decommit_ns == "-")] | length' "$WORK/v.json")" -eq 0 ] ||
    fail "a lifetime is still open"
[ "$(jq '[.lifetimes[] | select(.stack[0] | startswith("commit "))] | length' "$WORK/v.json")" -eq 2 ] ||
    fail "stacks do not start in commit()"
echo "vm_reserve: exactly the two commit lifetimes"
