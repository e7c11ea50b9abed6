#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# massif export read by ms_print and massif-visualizer: the peak snapshot is
# memscribe's peak, on the synthetic trace and on a recording.
source "$(dirname "$0")/export_lib.sh"
need ms_print
need massif-visualizer

# ms_print: exit 0, nothing on stderr, the peak snapshot detailed.
check_ms_print() { # massif-file peak-bytes
    ms_print "$1" >"$T/ms.out" 2>"$T/ms.err" || fail "ms_print failed: $(cat "$T/ms.err")"
    [ ! -s "$T/ms.err" ] || fail "ms_print wrote to stderr: $(cat "$T/ms.err")"
    grep -q "Detailed snapshots: \[.*(peak)" "$T/ms.out" || fail "ms_print shows no peak snapshot"
    # The row of the peak snapshot: its useful-heap column is the peak.
    local n heap
    n=$(grep -o '[0-9]* (peak)' "$T/ms.out" | cut -d' ' -f1)
    heap=$(awk -v n="$n" '$1 == n && NF == 6 { gsub(",", "", $4); print $4; exit }' "$T/ms.out")
    expect_eq "ms_print peak snapshot $n heap" "$heap" "$2"
}

# massif-visualizer headless: it logs what it loaded, or "invalid line".
check_visualizer() { # massif-file [peak-text]
    QT_QPA_PLATFORM=offscreen XDG_RUNTIME_DIR=$T timeout 10 massif-visualizer "$1" \
        >"$T/mv.out" 2>"$T/mv.err" || true
    ! grep -q "invalid line" "$T/mv.err" || fail "massif-visualizer: $(grep "invalid line" "$T/mv.err")"
    grep -q "loaded massif file" "$T/mv.err" || fail "massif-visualizer did not load $1: $(cat "$T/mv.err")"
    [ -z "${2:-}" ] || grep -q "peak cost: \"$2\" heap" "$T/mv.err" ||
        fail "massif-visualizer peak: $(grep peak "$T/mv.err")"
}

syn=$(synth)
"$M" export --to massif "$syn" -o "$T/syn.massif"
check_ms_print "$T/syn.massif" 1500
check_visualizer "$T/syn.massif" "1.5 KiB"
grep -q "snapshots: 51" "$T/mv.err" || fail "massif-visualizer snapshot count"
grep -q 'peak: snapshot # [0-9]* after 9 "ms"' "$T/mv.err" || fail "massif-visualizer peak time"
# --snapshots and a threshold of 50%: the 400- and 100-byte stacks fold.
"$M" export --to massif --snapshots 5 --threshold 50 "$syn" -o "$T/syn5.massif"
check_ms_print "$T/syn5.massif" 1500
grep -q "^ n0: 500 in 2 places, all below massif's threshold (50.00%)$" "$T/syn5.massif" ||
    fail "no folded node at 50%"

recorded
"$M" export --to massif "$T/prog.mscr" -o "$T/prog.massif"
check_ms_print "$T/prog.massif" "$REPORT_PEAK"
check_visualizer "$T/prog.massif"
grep -q "^  n[0-9]*: [0-9]* 0x[0-9A-F]*: main (.*export_prog.c:[0-9]*)$" "$T/prog.massif" ||
    fail "no main frame in the peak tree"
echo "export_massif: ok"
