#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# massif export read by ms_print and massif-visualizer: the peak snapshot is
# memscribe's peak, on the synthetic trace and on a recording; every 10th
# snapshot is detailed (--detailed-freq), and no detailed snapshot's call
# sites add up to more than its total (issue 46: massif-visualizer drew a
# site's band far above the total between the peak and the end).
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

# ms_print's detailed snapshots: the root of each tree, and its top-level
# sites added up, are at most the snapshot's useful heap.
check_sites() { # massif-file
    ms_print "$1" | awk '
        NF == 6 && $1 ~ /^[0-9]+$/ { n = $1; heap = $4; gsub(",", "", heap); next }
        /^[0-9.]+% \([0-9,]+B\) \(heap allocation functions\)/ {
            b = $2; gsub("[(),B]", "", b); det++; sum = 0
            if (b + 0 > heap + 0) { print "snapshot " n ": sites " b " > total " heap; bad++ }
            next }
        /^->[0-9.]+% \([0-9,]+B\)/ {
            b = $2; gsub("[(),B]", "", b); sum += b
            if (sum > heap + 0) { print "snapshot " n ": top sites " sum " > total " heap; bad++ } }
        END { if (!det) print "no detailed snapshot"; exit bad > 0 || !det }' >"$T/sites.out" ||
        fail "$1: $(head -3 "$T/sites.out")"
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
check_sites "$T/syn.massif"
grep -qx " Detailed snapshots: \[9, 19, 27, 28 (peak), 29, 30, 40, 50\]" "$T/ms.out" ||
    fail "detailed snapshots: $(grep "Detailed snapshots" "$T/ms.out")"
check_visualizer "$T/syn.massif" "1.5 KiB"
grep -q "snapshots: 51" "$T/mv.err" || fail "massif-visualizer snapshot count"
grep -q 'peak: snapshot # [0-9]* after 9 "ms"' "$T/mv.err" || fail "massif-visualizer peak time"
# --snapshots and a threshold of 50%: the 400- and 100-byte stacks fold.
"$M" export --to massif --snapshots 5 --threshold 50 "$syn" -o "$T/syn5.massif"
check_ms_print "$T/syn5.massif" 1500
grep -q "^ n0: 500 in 2 places, all below massif's threshold (50.00%)$" "$T/syn5.massif" ||
    fail "no folded node at 50%"
# --detailed-freq 1: every snapshot detailed, each adding up.
"$M" export --to massif --detailed-freq 1 "$syn" -o "$T/syn1.massif"
check_ms_print "$T/syn1.massif" 1500
check_sites "$T/syn1.massif"
expect_eq "detailed snapshots" "$(grep -c '^heap_tree=\(detailed\|peak\)' "$T/syn1.massif")" 51

recorded
"$M" export --to massif "$T/prog.mscr" -o "$T/prog.massif"
check_ms_print "$T/prog.massif" "$REPORT_PEAK"
check_sites "$T/prog.massif"
check_visualizer "$T/prog.massif"
grep -q "^  n[0-9]*: [0-9]* 0x[0-9A-F]*: main (.*export_prog.c:[0-9]*)$" "$T/prog.massif" ||
    fail "no main frame in the peak tree"
# A process tree (a parent and a forked child): the heap of running
# processes in the snapshots, each process's leaks in the last.
(cd "$T" && "$M" record -o "$T/procs.mscr" -- "$MS_PROGRAMS/ana_procs" >/dev/null 2>&1) ||
    fail "recording ana_procs failed"
"$M" export --to massif --detailed-freq 2 "$T/procs.mscr" -o "$T/procs.massif"
check_sites "$T/procs.massif"
echo "export_massif: ok"
