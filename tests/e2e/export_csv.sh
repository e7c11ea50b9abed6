#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# CSV of heap blocks: the header, one row per block, sums that match
# memscribe's numbers.
source "$(dirname "$0")/export_lib.sh"

syn=$(synth)
"$M" export --to csv "$syn" -o "$T/syn.csv"
expect_eq header "$(head -n 1 "$T/syn.csv")" "serial,pid,tid,kind,address,size,alloc_ns,free_ns,stack,function"
expect_eq rows "$(($(wc -l <"$T/syn.csv") - 1))" 9
expect_eq leaked "$(awk -F, 'NR > 1 && $8 == "" { s += $6 } END { print s }' "$T/syn.csv")" 182
expect_eq realloc "$(grep -c ',realloc,0x60000,150,11000000,,3,0x1100$' "$T/syn.csv")" 1

recorded
"$M" export --to csv "$T/prog.mscr" -o "$T/prog.csv"
expect_eq rows "$(($(wc -l <"$T/prog.csv") - 1))" "$REPORT_ALLOCS"
expect_eq bytes "$(awk -F, 'NR > 1 { s += $6 } END { print s }' "$T/prog.csv")" "$REPORT_BYTES"
expect_eq leaked "$(awk -F, 'NR > 1 && $8 == "" { s += $6 } END { print s }' "$T/prog.csv")" \
    "$REPORT_LEAKED"
expect_eq "churn rows" "$(grep -c ',churn$' "$T/prog.csv")" 15
echo "export_csv: ok"
