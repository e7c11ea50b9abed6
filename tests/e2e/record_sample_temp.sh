#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A sampled trace's temporary allocations are left out of every output
# (src/analysis/core/ana_sample.h; docs/record-sampling.md): they are not
# estimates (a sampled trace misses most calls between a block's malloc
# and free, so blocks look temporary 2.3-2.7 times too often), so no
# output shows one: report (text, JSON, CSV: summary, rows, the list by
# temporary), tree, diff, the HTML page's data, SQLite's column, the
# heaptrack file; and what would draw or rank by them is refused (exit 1):
# flamegraph and export --to folded --cost temporary, --sort temporary,
# --temporary-threshold. The exact trace of the same program keeps them.
# tests/programs/col_phases: 16 blocks freed right away, temporary.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" --go-on record-sample-temp MEMSCRIBE MS_PROGRAMS
need jq
need sqlite3
need heaptrack_print
P=$MS_PROGRAMS/col_phases
E=$WORK/exact.mscr
S=$WORK/s.mscr
"$MEMSCRIBE" record -q -o "$E" -- "$P" || fail "exact record exited with $?"
MEMSCRIBE_SAMPLE_SEED=1 "$MEMSCRIBE" record -q --sample 1K -o "$S" -- "$P" || fail "--sample 1K exited with $?"

# usage: refused WHAT ARGS...: memscribe ARGS exits 1 saying why.
refused() {
    local what=$1 st=0
    shift
    "$MEMSCRIBE" "$@" >/dev/null 2>"$WORK/err" || st=$?
    [ "$st" = 1 ] && grep -q "temporary allocations are not estimated" "$WORK/err" ||
        fail "$what: exit $st, want 1 and the reason: $(tail -1 "$WORK/err")"
}
# usage: jqs WHAT FILE FILTER WANT: FILTER on the JSON FILE gives WANT.
jqs() {
    expect "$1" "$(jq -c "$3" "$2" 2>&1)" "$4"
}

# report: text, JSON, CSV.
"$MEMSCRIBE" report "$S" >"$WORK/s.report" 2>/dev/null || fail "report exited with $?"
# (report's total line gives the counted ones: record_sample_exact.sh)
grep -q "^  temporary:          4 allocations (524288 bytes, 512.00 KiB)$" "$WORK/s.report" ||
    fail "report: $(grep temporary: "$WORK/s.report")"
grep -q "top call sites by temporary" "$WORK/s.report" && fail "report lists sites by temporary allocations"
# A row: five marked figures (peak, leaked, blocks, allocs, bytes), an empty temp.
expect "report: a row's figures" "$(awk '/ temp  call site$/ { getline; print; exit }' "$WORK/s.report" |
    grep -Eo '~[0-9]+' | wc -l)" 5
"$MEMSCRIBE" report --format=json "$S" >"$WORK/s.json" 2>/dev/null || fail "report JSON exited with $?"
jqs "report JSON: the process's temporary, temporary_bytes" "$WORK/s.json" \
    '[.processes[0].temporary, .processes[0].temporary_bytes]' '[null,null]'
jqs "report JSON: the list by temporary" "$WORK/s.json" '.processes[0].top.temporary' null
jqs "report JSON: rows' temporary" "$WORK/s.json" '[.processes[0].top.peak[].temporary] | unique' '[null]'
jqs "report JSON: sampled.temporary" "$WORK/s.json" '.sampled.temporary' '"not estimated"'
"$MEMSCRIBE" report --format=csv "$S" 2>/dev/null >"$WORK/s.csv" || fail "report CSV exited with $?"
col=$(head -1 "$WORK/s.csv" | tr ',' '\n' | grep -nx temporary | cut -d: -f1)
expect "report CSV: temporary cells" "$(tail -n +2 "$WORK/s.csv" | cut -d, -f"$col" | sort -u | tr '\n' ' ')" " "
refused "report --temporary-threshold" report --temporary-threshold 1 "$S"
# The exact trace keeps them.
"$MEMSCRIBE" report --format=json "$E" >"$WORK/e.json" 2>/dev/null
jqs "exact report JSON: temporary" "$WORK/e.json" '.processes[0].temporary > 0' true

# tree
"$MEMSCRIBE" tree "$S" >"$WORK/s.tree" 2>/dev/null || fail "tree exited with $?"
grep -q "temporary not estimated in a sampled trace$" "$WORK/s.tree" || fail "tree: $(grep total: "$WORK/s.tree")"
"$MEMSCRIBE" tree --format=json "$S" >"$WORK/s.tree.json" 2>/dev/null || fail "tree JSON exited with $?"
jqs "tree JSON: the root's temporary" "$WORK/s.tree.json" '[.inclusive.temporary, .children[0].inclusive.temporary]' '[null,null]'
refused "tree --sort temporary" tree --sort temporary "$S"

# flamegraph and folded stacks
refused "flamegraph --cost temporary" flamegraph --cost temporary "$S" -o "$WORK/f.svg"
refused "flamegraph --folded --cost temporary" flamegraph --folded --cost temporary "$S"
refused "flamegraph --diff --cost temporary" flamegraph --diff --cost temporary "$E" "$S" -o "$WORK/d.svg"
refused "export --to folded --cost temporary" export --to folded --cost temporary "$S" -o "$WORK/f.folded"
"$MEMSCRIBE" flamegraph --cost temporary "$E" -o "$WORK/e.svg" 2>/dev/null || fail "flamegraph of the exact trace"

# diff: a sampled side has no temporary figures, nor their change.
"$MEMSCRIBE" diff --format=json "$E" "$S" >"$WORK/diff.json" 2>/dev/null || fail "diff exited with $?"
jqs "diff JSON: total temporary base, new, change" "$WORK/diff.json" \
    '[.total.temporary_base > 0, .total.temporary_new, .total.temporary_change]' '[true,null,null]'
refused "diff --sort temporary" diff --sort temporary "$E" "$S"

# The HTML page's data: nothing of it (the page shows none: html_screen.sh).
"$MEMSCRIBE" html "$S" -o "$WORK/s.html" 2>/dev/null || fail "html exited with $?"
python3 - "$WORK/s.html" >"$WORK/html.facts" <<'PY' || fail "html: not read"
import json, re, sys
page = open(sys.argv[1], encoding="utf-8").read()
d = json.loads(re.search(r'id="ms-data">(.*?)</script>', page, re.S).group(1))
print(json.dumps([d["summary"]["temporary"], d["summary"]["temporary_bytes"],
                  "temporary" in d["sites"], d["flame"]["cost"][4], d["flameInv"]["cost"][4]]))
PY
expect "html data: summary temporary, bytes; sites column; flame costs" "$(cat "$WORK/html.facts")" \
    "[null, null, false, null, null]"

# SQLite: the column is NULL; heaptrack: no block is shown temporary.
"$MEMSCRIBE" export --to sqlite -o "$WORK/s.db" "$S" 2>/dev/null || fail "export sqlite"
expect "SQLite: allocations with a temporary value" \
    "$(sqlite3 "$WORK/s.db" 'SELECT COUNT(*) FROM allocations WHERE temporary IS NOT NULL')" 0
"$MEMSCRIBE" export --to heaptrack -o "$WORK/s.heaptrack.gz" "$S" 2>/dev/null || fail "export heaptrack"
heaptrack_print -f "$WORK/s.heaptrack.gz" >"$WORK/s.htp" 2>&1 || fail "heaptrack_print: $(head -3 "$WORK/s.htp")"
grep -q "^temporary memory allocations: 0 " "$WORK/s.htp" || fail "heaptrack_print: $(grep 'temporary memory' "$WORK/s.htp")"
grep -q "temporary allocations are not estimated" "$WORK/s.htp" || fail "heaptrack_print: no label saying so"
"$MEMSCRIBE" export --to heaptrack -o "$WORK/e.heaptrack.gz" "$E" 2>/dev/null || fail "export heaptrack exact"
grep -q "^temporary memory allocations: [1-9]" <(heaptrack_print -f "$WORK/e.heaptrack.gz" 2>&1) ||
    fail "heaptrack_print of the exact trace: no temporary allocations"
finish "ok: a sampled trace's temporary allocations are in no output"
