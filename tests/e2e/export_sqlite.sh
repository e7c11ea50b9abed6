#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# SQLite export read by the sqlite3 shell: the docs' leaks query gives
# `memscribe leaks`'s totals, the window queries give exact numbers.
source "$(dirname "$0")/export_lib.sh"
need sqlite3
: "${MS_SOURCE:?}"

# The "-- query: NAME" block of docs/export-tables.md.
query() {
    awk -v m="-- query: $1" '$0 == m { on = 1; next } on { print } on && /;$/ { exit }' \
        "$MS_SOURCE/docs/export-tables.md"
}

run() { # db sql [t0 t1]
    { [ -z "${3:-}" ] || printf '.parameter set :t0 %s\n.parameter set :t1 %s\n' "$3" "$4"
      printf '%s\n' "$2"; } | sqlite3 -bail -separator ' ' "$1" 2>"$T/sq.err" ||
        fail "sqlite3: $(cat "$T/sq.err")"
    [ ! -s "$T/sq.err" ] || fail "sqlite3: $(cat "$T/sq.err")"
}

syn=$(synth)
"$M" export --to sqlite "$syn" -o "$T/syn.db"
expect_eq "integrity" "$(run "$T/syn.db" "PRAGMA integrity_check;")" ok
expect_eq "leaks" "$(run "$T/syn.db" "$(query leaks)")" "$(printf '3 1 150 0x1100\n6 1 32 libc#.so+0x100')"
expect_eq "window [5,9] ms" "$(run "$T/syn.db" "$(query window)" 5000000 9000000)" \
    "$(printf '%s\n' "3 AIFI 1 50" "3 AOFO 1 100" "4 AIFO 1 400" "6 AIFO 1 1000" "6 AOFI 1 300")"
expect_eq "window totals [5,9] ms" "$(run "$T/syn.db" "$(query window-totals)" 5000000 9000000)" \
    "1450 1100"
# Exporting again replaces the database.
"$M" export --to sqlite "$syn" -o "$T/syn.db"
expect_eq "rows after a second export" "$(run "$T/syn.db" "SELECT COUNT(*) FROM allocations;")" 9

recorded
"$M" export --to sqlite "$T/prog.mscr" -o "$T/prog.db"
run "$T/prog.db" "$(query leaks)" >"$T/leaks.txt"
expect_eq "leaked bytes" "$(awk '{ s += $3 } END { print s }' "$T/leaks.txt")" "$REPORT_LEAKED"
expect_eq "leaked blocks" "$(awk '{ s += $2 } END { print s }' "$T/leaks.txt")" "$REPORT_LEAKED_BLOCKS"
grep -q " 333 make$" "$T/leaks.txt" || fail "no 333-byte leak from make: $(cat "$T/leaks.txt")"
# The same rows as `memscribe leaks` (bytes and blocks per stack).
"$M" leaks --format=csv --top 0 "$T/prog.mscr" | awk -F, 'NR > 1 { print $2, $3 }' | sort >"$T/want"
awk '{ print $3, $2 }' "$T/leaks.txt" | sort | diff -u "$T/want" - || fail "leaks differ from memscribe leaks"
# The window totals as `memscribe window`, for [start, peak] and [peak, end].
peak_ns=$(report_num peak_ns)
window_cli() { "$M" window --format=csv --top 0 "$@" "$T/prog.mscr" |
    awk -F, 'NR > 1 { s += $4; i += $5 } END { print s + 0, i + 0 }'; }
expect_eq "window to the peak" "$(run "$T/prog.db" "$(query window-totals)" 0 "$peak_ns")" \
    "$(window_cli --to peak)"
expect_eq "window from the peak" "$(run "$T/prog.db" "$(query window-totals)" "$peak_ns" 999999999999)" \
    "$(window_cli --from peak)"
expect_eq "temporary" "$(run "$T/prog.db" "SELECT SUM(temporary) FROM allocations;")" "$REPORT_TEMPORARY"
# The whole trace as one window: AIFI + AIFO = every allocation.
expect_eq "whole window" "$(run "$T/prog.db" "$(query window-totals)" 0 999999999999 | cut -d' ' -f1)" \
    "$REPORT_BYTES"
# Mappings: one row per mmap or mremap that started one (dump's SERIAL
# column), and a reserve/commit state row for each piece of them.
"$M" dump "$T/prog.mscr" >"$T/dump.txt"
nr_maps=$(awk '($5 == "mmap" || $5 == "mremap") && $4 != "-"' "$T/dump.txt" | wc -l)
expect_eq "mappings" "$(run "$T/prog.db" "SELECT COUNT(*) FROM mappings;")" "$nr_maps"
if [ "$nr_maps" -gt 0 ]; then
    [ "$(run "$T/prog.db" "SELECT COUNT(DISTINCT serial) FROM mapping_states;")" -eq "$nr_maps" ] ||
        fail "a mapping without a state row"
fi
# export_prog's reserve(): 3 pages PROT_NONE, the first made read-write,
# all unmapped: page 0 reserved then committed, pages 1-2 reserved.
res=$(run "$T/prog.db" "SELECT m.serial FROM mappings m WHERE m.size = 12288 AND m.prot = 0 AND
  m.unmap_ns IS NOT NULL AND m.stack IN (SELECT s.id FROM stacks s JOIN frames f ON f.id = s.frame
  WHERE f.function = 'reserve');")
[ -n "$res" ] || fail "no mapping from reserve()"
# Page 0's reserved state ends where its committed one starts, the others at
# the unmap. (Not "page 0 ends before the unmap": at the default 10 us unit
# the mprotect and the munmap of so short a program may share a time.)
expect_eq "reserve() states" "$(run "$T/prog.db" "SELECT state, size FROM mapping_states
  WHERE serial = $res ORDER BY start_ns, state DESC, size;")" \
    "$(printf '%s\n' "reserved 4096" "reserved 8192" "committed 4096")"
state_end() { # STATE SIZE: the end of that state row of the reserve() mapping
    echo "(SELECT end_ns FROM mapping_states WHERE serial = $res AND state = '$1' AND size = $2)"
}
expect_eq "reserve() state ends" "$(run "$T/prog.db" "SELECT
  $(state_end reserved 4096) = (SELECT start_ns FROM mapping_states WHERE serial = $res AND state = 'committed'),
  $(state_end reserved 8192) = (SELECT unmap_ns FROM mappings WHERE serial = $res),
  $(state_end committed 4096) = (SELECT unmap_ns FROM mappings WHERE serial = $res);")" "1 1 1"
# Two process images (ana_procs forks; the child's thread indexes start at
# 0 again): every thread is exported, and each allocation finds its thread
# by (image, thread). The parent leaks 1000 bytes, the child 2000 and 30
# temporary.
"$M" record -q -o "$T/procs.mscr" -- "$MS_PROGRAMS/ana_procs" || fail "record ana_procs"
"$M" export --to sqlite "$T/procs.mscr" -o "$T/procs.db" 2>"$T/procs.err" ||
    fail "export of two process images: $(cat "$T/procs.err")"
expect_eq "threads of two images" "$(run "$T/procs.db" "SELECT COUNT(*) FROM threads;")" \
    "$("$M" dump --header "$T/procs.mscr" | grep -c '^# thread ')"
expect_eq "allocations by pid" "$(run "$T/procs.db" "SELECT p.pid = t.pid, a.size, a.free_ns IS NULL
  FROM allocations a JOIN threads t ON t.image = a.image AND t.thread = a.alloc_thread
  JOIN processes p ON p.image = a.image ORDER BY a.serial;")" "$(printf '%s\n' "1 1000 1" "1 2000 1" "1 30 0")"
echo "export_sqlite: ok"
