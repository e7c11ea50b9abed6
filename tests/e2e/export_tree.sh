#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# memscribe export on a process tree (docs/export.md, "Process trees"): an
# output alone writes each process's part at its end and lets its stacks
# go; what it writes reads as the one written from the whole model
# (MEMSCRIBE_FOLD=0), which is the previous writer's, byte for byte.
# folded: each line's text once, its cost the sum of the whole model's
# lines of that text, in the order of their first. csv: the same bytes (each
# process's live blocks kept in a scratch file from its exit, merged last).
# sqlite: the same dump (each process's live blocks inserted after its exit).
# heaptrack: the same bytes (each process's stacks let go after its exit).
# dhat: the same bytes (its program points folded in one pass, those no
# running process uses in a scratch file). massif: the same bytes (what
# each process left written to a scratch file a second after its exit,
# the end's tree made only as deep as it is shown), with every snapshot
# detailed and every node shown too.
source "$(dirname "$0")/export_lib.sh"

tr=$T/tree.mscr
prog=$MS_PROGRAMS/export_prog
(cd "$T" && "$M" record -o "$tr" -- sh -c "'$prog'; '$prog' & '$prog'; wait; '$prog'" \
    >/dev/null 2>"$T/record.err") || fail "record failed: $(cat "$T/record.err")"

# A folded file's lines of the same text summed, in the order of the first.
sum_lines() {
    awk '/^#/ { print; next }
        { n = $NF; t = $0; sub(/ [0-9]+$/, "", t)
          if (!(t in c)) o[k++] = t
          c[t] += n }
        END { for (i = 0; i < k; i++) if (c[o[i]]) print o[i], c[o[i]] }' "$1"
}

for cost in allocations bytes leaked peak temporary; do
    "$M" export --to folded --cost "$cost" -o "$T/fold.folded" "$tr" || fail "folded $cost"
    MEMSCRIBE_FOLD=0 "$M" export --to folded --cost "$cost" -o "$T/whole.folded" "$tr" ||
        fail "folded $cost (whole)"
    cmp -s "$T/fold.folded" <(sum_lines "$T/whole.folded") ||
        fail "folded $cost: differs: $(diff <(sum_lines "$T/whole.folded") "$T/fold.folded" | head -5)"
    [ "$(wc -l <"$T/fold.folded")" -gt 1 ] || fail "folded $cost: few lines"
    [ "$cost" != bytes ] || [ "$(wc -l <"$T/fold.folded")" -lt "$(wc -l <"$T/whole.folded")" ] ||
        fail "folded: the processes' lines of the same text were not summed"
done

"$M" export --to csv -o "$T/fold.csv" "$tr" || fail "csv"
MEMSCRIBE_FOLD=0 "$M" export --to csv -o "$T/whole.csv" "$tr" || fail "csv (whole)"
cmp -s "$T/fold.csv" "$T/whole.csv" || fail "csv: differs: $(diff "$T/whole.csv" "$T/fold.csv" | head -5)"
[ "$(awk -F, '$8 == ""' "$T/fold.csv" | wc -l)" -gt 4 ] || fail "csv: few blocks live at the end"

"$M" export --to sqlite -o "$T/fold.db" "$tr" || fail "sqlite"
MEMSCRIBE_FOLD=0 "$M" export --to sqlite -o "$T/whole.db" "$tr" || fail "sqlite (whole)"
cmp -s <(sqlite3 "$T/fold.db" .dump) <(sqlite3 "$T/whole.db" .dump) ||
    fail "sqlite: differs: $(diff <(sqlite3 "$T/whole.db" .dump) <(sqlite3 "$T/fold.db" .dump) | head -5)"
[ "$(sqlite3 "$T/fold.db" 'SELECT count(*) FROM processes')" -gt 4 ] || fail "sqlite: few processes"

"$M" export --to heaptrack -o "$T/fold.ht" "$tr" || fail "heaptrack"
MEMSCRIBE_FOLD=0 "$M" export --to heaptrack -o "$T/whole.ht" "$tr" || fail "heaptrack (whole)"
cmp -s "$T/fold.ht" "$T/whole.ht" || fail "heaptrack: differs from the whole export"
"$M" export --to dhat -o "$T/fold.json" "$tr" || fail "dhat"
MEMSCRIBE_FOLD=0 "$M" export --to dhat -o "$T/whole.json" "$tr" || fail "dhat (whole)"
cmp -s "$T/fold.json" "$T/whole.json" ||
    fail "dhat: differs: $(diff "$T/whole.json" "$T/fold.json" | head -5)"
[ "$(grep -c '^{"tb"' "$T/fold.json")" -gt 4 ] || fail "dhat: few program points"
for opts in "" "--detailed-freq 1" "--threshold 0 --snapshots 20"; do
    # shellcheck disable=SC2086 # the options are words
    "$M" export --to massif $opts -o "$T/fold.massif" "$tr" || fail "massif $opts"
    # shellcheck disable=SC2086
    MEMSCRIBE_FOLD=0 "$M" export --to massif $opts -o "$T/whole.massif" "$tr" ||
        fail "massif $opts (whole)"
    cmp -s "$T/fold.massif" "$T/whole.massif" ||
        fail "massif $opts: differs: $(diff "$T/whole.massif" "$T/fold.massif" | head -5)"
done
[ "$(grep -c '^heap_tree=detailed' "$T/fold.massif")" -gt 1 ] || fail "massif: few detailed snapshots"
echo "export_tree: ok"
