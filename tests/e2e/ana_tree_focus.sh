#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tree --focus F (docs/tree.md, "Callers and callees"): on tests/programs/rec_agg (its
# threads' worker() calls temporaries(), pairs(), chain() ...; a forked child too), each
# focused tree's root is F with the sums of every call site whose stack holds F, and its
# children are F's direct callees (top-down) or callers (--bottom-up), each with the sums of
# the sites through it: computed here independently from report's every call site (--top 0,
# each site's stack and numbers), across processes. F as report writes a frame
# ('worker (rec_agg.c:114)') focuses as F's name does; a name no stack holds gives an empty
# tree and a warning. tree --flat's every function, inclusive and self, from the same sites.
# Needs MEMSCRIBE, MS_PROGRAMS.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" ana_tree_focus MEMSCRIBE MS_PROGRAMS
need jq
T=$WORK/t.mscr
"$MEMSCRIBE" record -q -o "$T" -- "$MS_PROGRAMS/rec_agg" 3 || fail "record failed"
# --all-frames for both: tree leaves the threads' start out otherwise
# (docs/symbols.md, "The frame of interest"), report's JSON never does.
"$MEMSCRIBE" report --all-frames --format=json --top 0 "$T" >"$WORK/report.json" 2>/dev/null ||
    fail "report"

# usage: want F DIR: from report's sites (the "allocations" list holds every site), the
# root's and each child's [allocations, allocated_bytes, leaked_bytes] for F, DIR down
# (callees: the frame before F's first from the root) or up (callers: after F's first
# from the leaf), children by name.
want() {
    jq -c --arg f "$1" --arg dir "$2" '
        def name: sub(" \\([^()]*\\)$"; "");
        [.processes[].top.allocations[] | . as $s | ($s.stack | map(name)) as $st
         | ($st | if $dir == "down" then reverse else . end) as $p
         | ($p | index([$f])) as $i | select($i != null)
         | {child: ($p[$i + 1] // null), a: $s.allocations, b: $s.allocated_bytes,
            l: $s.leaked_bytes}]
        | {root: [(map(.a) | add), (map(.b) | add), (map(.l) | add)],
           children: (map(select(.child != null)) | group_by(.child)
                      | map({(.[0].child): [(map(.a) | add), (map(.b) | add), (map(.l) | add)]})
                      | add // {})}' "$WORK/report.json"
}
# usage: got F [--bottom-up]: tree --focus F --depth 2 as the same shape.
got() {
    "$MEMSCRIBE" tree --all-frames --format=json --top 0 --depth 2 --focus "$@" "$T" 2>"$WORK/err" |
        jq -c '.children[0] | {root: [.inclusive.allocations, .inclusive.allocated_bytes,
                                      .inclusive.leaked_bytes],
                               children: ((.children // []) | map({(.function): [.inclusive.allocations,
                                      .inclusive.allocated_bytes, .inclusive.leaked_bytes]}) | add // {})}'
}
for f in worker main chain child; do
    w=$(want "$f" down) g=$(got "$f")
    [ "$(jq '.root[0]' <<<"$w")" -gt 0 ] || fail "no site holds $f"
    expect "callees of $f" "$(jq -S -c . <<<"$g")" "$(jq -S -c . <<<"$w")"
    w=$(want "$f" up) g=$(got "$f" --bottom-up)
    expect "callers of $f" "$(jq -S -c . <<<"$g")" "$(jq -S -c . <<<"$w")"
done
# A frame as report writes it focuses on its function.
frame=$(jq -r '[.processes[].top.allocations[].stack[] | select(startswith("worker "))][0]' \
    "$WORK/report.json")
expect "callees of '$frame'" "$(got "$frame" | jq -S -c .)" "$(got worker | jq -S -c .)"
# tree --flat: every function once, its inclusive sums those of the sites
# whose stack holds it (once, a recursion too) and its self those whose
# leaf it is, as report's sites give them.
flat_want=$(jq -S -c '
    def name: sub(" \\([^()]*\\)$"; "");
    [.processes[].top.allocations[] | . as $s | ($s.stack | map(name)) as $st
     | ($st | unique)[] | {f: ., a: $s.allocations, b: $s.allocated_bytes, l: $s.leaked_bytes,
                           self: (. == $st[0])}]
    | group_by(.f) | map({(.[0].f): [(map(.a) | add), (map(.b) | add), (map(.l) | add),
                                     (map(select(.self) | .a) | add // 0)]}) | add' "$WORK/report.json")
flat_got=$("$MEMSCRIBE" tree --all-frames --flat --format=json --top 0 "$T" 2>"$WORK/err" |
    jq -S -c '.children | map({(.function): [.inclusive.allocations, .inclusive.allocated_bytes,
                                             .inclusive.leaked_bytes, .self.allocations]}) | add')
expect "tree --flat: each function's inclusive and self sums" "$flat_got" "$flat_want"
# A name no stack holds.
"$MEMSCRIBE" tree --format=json --focus no_such_function "$T" >"$WORK/none" 2>"$WORK/err" ||
    fail "tree --focus no_such_function failed"
expect "an unknown function's tree" "$(jq '.children | length' "$WORK/none")" 0
grep -q "no allocation's stack holds 'no_such_function'" "$WORK/err" || fail "no warning: $(cat "$WORK/err")"
echo "ok: tree --focus"
