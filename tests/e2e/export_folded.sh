#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Folded stacks, per cost type: exact lines on the synthetic trace; on a
# recording each cost adds up to memscribe's number.
source "$(dirname "$0")/export_lib.sh"

sum() { awk '{ s += $NF } END { print s + 0 }' "$1"; }

syn=$(synth)
"$M" export --to folded "$syn" -o "$T/bytes.folded"
printf '%s\n' "0x1300;0x1200;0x1100 300" "0x1300;0x1200;0x2100 664" \
    "libc#.so+0x200;libc#.so+0x100 1332" >"$T/want"
diff -u "$T/want" "$T/bytes.folded" || fail "bytes"
"$M" export --to folded --cost peak "$syn" >"$T/peak.folded" # standard output
expect_eq "peak" "$(sum "$T/peak.folded")" 1500
expect_eq "peak lines" "$(wc -l <"$T/peak.folded")" 3

recorded
for c in allocations:REPORT_ALLOCS bytes:REPORT_BYTES leaked:REPORT_LEAKED peak:REPORT_PEAK \
    temporary:REPORT_TEMPORARY; do
    cost=${c%%:*} var=${c#*:}
    "$M" export --to folded --cost "$cost" "$T/prog.mscr" -o "$T/$cost.folded"
    expect_eq "$cost" "$(sum "$T/$cost.folded")" "${!var}"
    # Every line: frames joined by ';', a space, a positive count.
    grep -vq '^[^ ].* [1-9][0-9]*$' "$T/$cost.folded" && fail "$cost: malformed line"
done
grep -q ";main;peak " "$T/peak.folded" || fail "no main;peak stack"
echo "export_folded: ok"
