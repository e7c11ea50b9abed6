#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# heaptrack export read by heaptrack_print: nothing on stderr (it exits 0
# on malformed lines), and the same allocation calls, peak, leaked bytes and
# temporary allocations as memscribe, for zstd, gzip and plain files.
source "$(dirname "$0")/export_lib.sh"
need heaptrack_print

# heaptrack_print's summary line VALUE.
summary() { # file key
    sed -n "s/^$2: \([^ ]*\).*/\1/p" "$1"
}

check() { # data-file allocs peak-text leaked-text temporary
    heaptrack_print "$1" >"$T/ht.out" 2>"$T/ht.err" || fail "heaptrack_print failed on $1"
    [ ! -s "$T/ht.err" ] || fail "heaptrack_print complained about $1: $(head -5 "$T/ht.err")"
    expect_eq "$1: calls" "$(summary "$T/ht.out" "calls to allocation functions")" "$2"
    expect_eq "$1: peak" "$(summary "$T/ht.out" "peak heap memory consumption")" "$3"
    expect_eq "$1: leaked" "$(summary "$T/ht.out" "total memory leaked")" "$4"
    expect_eq "$1: temporary" "$(summary "$T/ht.out" "temporary memory allocations")" "$5"
}

# heaptrack_print's formatBytes: B up to 1000, then K, M, G with 2 decimals.
fmt_bytes() {
    awk -v b="$1" 'BEGIN {
        if (b <= 1000) { printf "%dB", b; exit }
        split("K M G T", u, " "); v = b; i = 0
        while (v > 1000 && i < 4) { v /= 1000; i++ }
        printf "%.2f%s", v, u[i] }'
}

syn=$(synth)
for suffix in zst gz txt; do
    "$M" export --to heaptrack "$syn" -o "$T/heaptrack.syn.$suffix"
    check "$T/heaptrack.syn.$suffix" 9 1.50K 182B 5
done
# The suffix chooses the compression.
[ "$(head -c 4 "$T/heaptrack.syn.zst" | od -An -tx1 | tr -d ' ')" = 28b52ffd ] || fail "not zstd"
[ "$(head -c 2 "$T/heaptrack.syn.gz" | od -An -tx1 | tr -d ' ')" = 1f8b ] || fail "not gzip"
head -n 1 "$T/heaptrack.syn.txt" | grep -qx "v 10400 3" || fail "plain file does not start with v"

recorded
"$M" export --to heaptrack "$T/prog.mscr" -o "$T/heaptrack.prog.zst"
check "$T/heaptrack.prog.zst" "$REPORT_ALLOCS" "$(fmt_bytes "$REPORT_PEAK")" \
    "$(fmt_bytes "$REPORT_LEAKED")" "$REPORT_TEMPORARY"
# Frames are symbolized: heaptrack_print names the program's functions.
grep -q "^churn$" "$T/ht.out" || fail "no churn frame in heaptrack_print's output"
# Ten 8 MiB temporary buffers, each live across ticks (tests/programs/
# export_spikes): each "+" goes out at its allocation's time, and its "-"
# is still the next +/- line, so heaptrack_print counts all ten temporary.
(cd "$T" && "$M" record -o "$T/spikes.mscr" -- "$MS_PROGRAMS/export_spikes" >/dev/null 2>&1) ||
    fail "recording export_spikes failed"
"$M" report --format=json "$T/spikes.mscr" >"$T/report.json"
"$M" export --to heaptrack "$T/spikes.mscr" -o "$T/heaptrack.spikes.zst" 2>/dev/null
expect_eq "export_spikes: temporary" "$(report_num temporary)" 10
check "$T/heaptrack.spikes.zst" "$(report_num allocations)" "$(fmt_bytes "$(report_num peak_bytes)")" \
    "$(fmt_bytes "$(report_num leaked_bytes)")" "$(report_num temporary)"
# Two threads churning 4096 slots (200000 events): heaptrack_print agrees
# with memscribe report on a trace with many temporaries and a busy peak.
"$MS_BUILD/tests/unit/test_ana_export" --write-trace "$T/churn.mscr" 200000
"$M" report --format=json "$T/churn.mscr" >"$T/report.json"
"$M" export --to heaptrack "$T/churn.mscr" -o "$T/heaptrack.churn.zst" 2>/dev/null
check "$T/heaptrack.churn.zst" "$(report_num allocations)" "$(fmt_bytes "$(report_num peak_bytes)")" \
    "$(fmt_bytes "$(report_num leaked_bytes)")" "$(report_num temporary)"

# Two processes (tests/programs/ana_procs: a parent and a forked child):
# --pid exports one, with that process's numbers from memscribe report.
(cd "$T" && "$M" record -o "$T/procs.mscr" -- "$MS_PROGRAMS/ana_procs" >/dev/null 2>&1) ||
    fail "recording ana_procs failed"
"$M" report --format=json "$T/procs.mscr" >"$T/procs.json"
pids=$(jq '.processes[].pid' "$T/procs.json")
expect_eq "processes" "$(echo "$pids" | wc -l)" 2
i=0
for pid in $pids; do
    i=$((i + 1))
    # The i-th process's own numbers.
    num() { jq ".processes[$((i - 1))].$1" "$T/procs.json"; }
    "$M" export --to heaptrack --pid "$pid" "$T/procs.mscr" -o "$T/heaptrack.$pid.gz"
    check "$T/heaptrack.$pid.gz" "$(num allocations)" "$(fmt_bytes "$(num peak_bytes)")" \
        "$(fmt_bytes "$(num leaked_bytes)")" "$(num temporary)"
done
echo "export_heaptrack: ok ($REPORT_ALLOCS calls, peak $REPORT_PEAK, leaked $REPORT_LEAKED, $REPORT_TEMPORARY temporary)"
