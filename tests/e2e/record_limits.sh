#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The trace cannot be written in full (a file size limit stands in for a
# full disk): record says so and exits 1, the program runs to its end, the
# trace reads as incomplete. A program under a file size limit smaller than
# a ring segment runs untraced instead of dying of SIGXFSZ. A SIGTERM sent to record goes to the program,
# and record exits with its status after writing a complete trace.
source "$(dirname "$0")/record_lib.sh"

# The limit is put on the recorder once the program runs, so that only
# the recorder's writes hit it. It is small (4 KiB; 4 s of the program
# make ~100 KB in format 1.5, ~1.4 MB in 1.4) so that a program slowed
# down by a loaded machine still writes past it.
"$MEMSCRIBE" record -q -o "$WORK/full.mscr" -- "$MS_PROGRAMS/col_crash" slow 4 >"$WORK/full.out" 2>"$WORK/full.err" &
rec=$!
for _ in $(seq 1 100); do
    [ -e "$WORK/full.mscr" ] && break
    sleep 0.05
done
prlimit --pid $rec --fsize=4096
rc=0
wait $rec || rc=$?
[ "$rc" = 1 ] || fail "with the file size limit, record exited with $rc, expected 1"
grep -q "writing $WORK/full.mscr failed: File too large" "$WORK/full.err" ||
    fail "no clear message: $(cat "$WORK/full.err")"
[ -s "$WORK/full.out" ] || fail "the program did not run to its end"
"$MEMSCRIBE" dump "$WORK/full.mscr" >"$WORK/full.txt" 2>"$WORK/full.derr" ||
    fail "dump of the cut trace failed: $(cat "$WORK/full.derr")"
grep -q "incomplete" "$WORK/full.derr" || fail "dump does not call the cut trace incomplete"

"$MEMSCRIBE" record -q -o "$WORK/term.mscr" -- "$MS_PROGRAMS/col_crash" slow 30 >/dev/null &
rec=$!
for _ in $(seq 1 100); do
    [ "$(stat -c %s "$WORK/term.mscr" 2>/dev/null || echo 0)" -gt 65536 ] && break
    sleep 0.1
done
kill -TERM $rec
rc=0
wait $rec || rc=$?
[ "$rc" = 143 ] || fail "after SIGTERM, record exited with $rc, expected 143 (the program's death by SIGTERM)"
ms_dump_ok "$WORK/term.mscr"
grep -q "incomplete" "$WORK/dump.err" && fail "the trace after SIGTERM is incomplete"
grep -q " process_exit status=0xf " "$WORK/dump.txt" || fail "no process_exit with status SIGTERM (0xf)"
rc=0
(ulimit -f 1024 && exec "$MEMSCRIBE" record -q -o "$WORK/small.mscr" -- "$MS_PROGRAMS/col_procs" leaf 100) \
    2>"$WORK/small.err" || rc=$?
[ "$rc" = 0 ] || fail "a program under ulimit -f 1024 exited with $rc: $(cat "$WORK/small.err")"
grep -q "collector: cannot set up its rings or reach the recorder; not tracing: EFBIG" "$WORK/small.err" ||
    fail "the collector did not explain why it is off: $(cat "$WORK/small.err")"
echo "ok: file size limit and SIGTERM"
