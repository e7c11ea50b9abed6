#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# timeline's rows are per interval and process image. When the processes
# make too many rows, the error says so, names the file and exits 1,
# before keeping any row; it blames --interval only when one was given and
# is the cause; the last row is not repeated. Before: the rows grew towards the 10 million cap and the
# message blamed --interval, which with ~100,000 processes nobody had to
# give; on this 40 KB file at 300 ns (6.7 million rows,
# under the cap) main's release build took 566 s and 840 MB (load ~25).
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" --go-on ana-timeline-procs MEMSCRIBE MS_BUILD MS_SOURCE
f=$WORK/many.mscr
"$MS_BUILD/tests/unit/test_ana_window" --write-many-processes "$f" || { fail "writing $f"; exit 1; }

# 2,000 processes over 13,334 intervals of 150 ns, each from its start:
# 13.3 million rows.
"$MEMSCRIBE" timeline --interval 150ns "$f" >"$WORK/out" 2>"$WORK/err"
rc=$?
want="memscribe: timeline: $f: 2000 processes over 13334 intervals would make 13328667 rows, more than 10000000; choose processes with --pid or a longer --interval"
if [ "$rc" -ne 1 ] || ! grep -qxF "$want" "$WORK/err"; then
    fail "timeline --interval 150ns: exit $rc, want 1 and '$want':"
    cat "$WORK/err"
fi
# One process chosen: its rows, from its start on.
"$MEMSCRIBE" timeline --interval 300ns --pid 2000 --format=csv "$f" >"$WORK/out" 2>"$WORK/err" ||
    fail "timeline --pid 2000: $(cat "$WORK/err")"
rows=$(($(wc -l <"$WORK/out") - 1))
[ "$rows" -eq 3331 ] || fail "timeline --pid 2000: $rows rows, want 3331"
# The default interval: 101 rows for each of the 2,000 processes.
"$MEMSCRIBE" timeline --format=csv "$f" >"$WORK/out" 2>"$WORK/err" ||
    fail "timeline: $(cat "$WORK/err")"
# One row per process and time: a trace whose last event falls on an
# interval's boundary (every golden trace, with the default interval of a
# hundredth of the run) had its last row twice, which the plots summed
# into a last point twice its value.
for g in "$MS_SOURCE"/tests/golden/*.mscr; do
    dup=$("$MEMSCRIBE" timeline --format=csv "$g" 2>/dev/null | awk -F, 'NR > 1 { print $1, $3 }' | sort | uniq -d)
    [ -z "$dup" ] || fail "timeline of $g: rows twice (pid, time_ns): $dup"
done
finish "ana_timeline_procs: too many processes are named as such, the file too"
