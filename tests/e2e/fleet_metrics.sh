#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# memscribe metrics (docs/fleet.md): the trace's numbers in Prometheus's
# text format, valid by Debian's promtool, each process's and the tree's
# equal to `report --format=json`'s (heap in use = leaked at the last
# event, peak, live blocks, RSS, allocations, frees, bytes, temporary),
# the top sites' bytes in use equal to leaks' rows (every block live at the
# end) summed by their frame of interest, at most --top of them a process; --label on every
# series; label values escaped as the format wants. On the demo and on
# tests/programs/rec_agg (two processes, threads).
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" --go-on fleet-metrics MEMSCRIBE MS_BUILD MS_PROGRAMS
need jq
need promtool

"$MEMSCRIBE" record -q -o "$WORK/demo.mscr" -- "$MS_BUILD/examples/memtest_demo" >/dev/null 2>"$WORK/err" ||
    fail "record the demo: $(cat "$WORK/err")"
"$MEMSCRIBE" record -q -o "$WORK/agg.mscr" -- "$MS_PROGRAMS/rec_agg" 5 >/dev/null 2>"$WORK/err" ||
    fail "record rec_agg: $(cat "$WORK/err")"

# usage: value FILE NAME [LABELS]: the value of the series NAME{LABELS}
# (LABELS as written, without braces; all of them).
value() {
    local want=$2
    [ -z "${3:-}" ] || want="$2{$3}"
    awk -v want="$want" '$1 == want { print $2; found = 1 } END { if (!found) print "none" }' "$1"
}

for t in demo agg; do
    f=$WORK/$t.mscr
    "$MEMSCRIBE" metrics --top 5 --label service=test "$f" >"$WORK/$t.prom" 2>"$WORK/err" ||
        fail "$t: metrics: $(cat "$WORK/err")"
    promtool check metrics <"$WORK/$t.prom" >"$WORK/promtool.out" 2>&1 ||
        fail "$t: promtool check metrics: $(cat "$WORK/promtool.out")"
    echo "ok: $t: promtool check metrics passes ($(grep -vc '^#' "$WORK/$t.prom") series)"
    "$MEMSCRIBE" report --format=json --top 0 "$f" >"$WORK/$t.json" 2>/dev/null || fail "$t: report"
    # Each process, each number, and the tree's.
    while read -r pid exe leaked peak blocks allocs frees bytes temp rss; do
        l="service=\"test\",pid=\"$pid\",exe=\"$exe\""
        got="$(for m in heap_in_use_bytes heap_peak_bytes live_blocks allocations_total frees_total \
            allocated_bytes_total temporary_allocations_total rss_peak_bytes; do
            value "$WORK/$t.prom" "memscribe_$m" "$l"; done | tr '\n' ' ')"
        expect "$t: pid $pid's numbers" "$got" "$leaked $peak $blocks $allocs $frees $bytes $temp $rss "
    done < <(jq -r '.processes[] | [.pid, (.exe | split("/") | last), .leaked_bytes, .peak_bytes,
        .leaked_blocks, .allocations, .frees, .allocated_bytes, .temporary, (.peak_rss_bytes // "none")] | @tsv' "$WORK/$t.json")
    got="$(for m in heap_in_use_bytes heap_peak_bytes allocations_total allocated_bytes_total; do
        value "$WORK/$t.prom" "memscribe_tree_$m" 'service="test"'; done | tr '\n' ' ')"
    want=$(jq -r '(.total // .processes[0]) | [.leaked_bytes, .peak_bytes, .allocations, .allocated_bytes] | join(" ")' "$WORK/$t.json")
    expect "$t: the tree's numbers" "$got" "$want "
    # The top sites: every block live at the end (leaks' rows, none
    # listed apart: heap in use, not a verdict) summed by frame of
    # interest, the 5 largest of each process.
    "$MEMSCRIBE" leaks --format=json --top 0 --no-default-suppressions --by-process "$f" >"$WORK/$t.leaks" 2>/dev/null ||
        fail "$t: leaks"
    want=$(jq -r '.stacks | group_by(.pid)[] | .[0].pid as $p | map({w: .stack[.interest], b: .leaked_bytes})
        | group_by(.w) | map({w: .[0].w, b: (map(.b) | add)}) | sort_by(-.b, .w) | .[:5][]
        | "\($p) \(.b) \(.w)"' "$WORK/$t.leaks" | sort)
    got=$(grep '^memscribe_site_heap_in_use_bytes' "$WORK/$t.prom" |
        sed -E 's/^[^{]*\{service="test",pid="([0-9]+)",site="(.*)"\} ([0-9]+)$/\1 \3 \2/; s/\\"/"/g; s/\\\\/\\/g' | sort)
    expect "$t: the top sites by frame of interest" "$got" "$want"
done

# A label's value holds what the format escapes.
"$MEMSCRIBE" metrics --top 0 --label 'note=a "quoted" \ value' "$WORK/demo.mscr" >"$WORK/esc.prom" 2>&1 ||
    fail "metrics --label with quotes: $(cat "$WORK/esc.prom")"
grep -qF 'note="a \"quoted\" \\ value"' "$WORK/esc.prom" || fail "the label is not escaped: $(head -3 "$WORK/esc.prom")"
promtool check metrics <"$WORK/esc.prom" >"$WORK/promtool.out" 2>&1 || fail "promtool: $(cat "$WORK/promtool.out")"
for bad in '__x=1' 'pid=1' '1a=b' 'novalue'; do
    "$MEMSCRIBE" metrics --label "$bad" "$WORK/demo.mscr" >/dev/null 2>&1
    expect "--label '$bad': exit status" "$?" 2
done
finish "memscribe metrics: valid Prometheus text, report's numbers, the top sites by frame of interest"
