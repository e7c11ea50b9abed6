#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A program killed by SIGKILL, SIGSEGV or abort() mid-run: every allocation
# it announced before dying is in the trace, and the exit status says how
# it died. A killed recorder: the program carries on untraced, and the
# trace reads as incomplete.
source "$(dirname "$0")/record_lib.sh"

for how in kill:137 segv:139 abort:134; do
    mode=${how%:*} want=${how#*:}
    rc=0
    "$MEMSCRIBE" record -q -o "$WORK/$mode.mscr" -- "$MS_PROGRAMS/col_crash" "$mode" 5000 \
        >"$WORK/$mode.announced" || rc=$?
    [ "$rc" = "$want" ] || fail "$mode: record exited with $rc, expected $want"
    [ "$(wc -l <"$WORK/$mode.announced")" = 5000 ] || fail "$mode: the program announced $(wc -l <"$WORK/$mode.announced") blocks"
    ms_dump_ok "$WORK/$mode.mscr"
    awk '$5 == "malloc" { for (i = 6; i <= NF; i++) if ($i ~ /^addr=/) print substr($i, 6) "/" $0 }' "$WORK/dump.txt" |
        awk -F/ 'NR == FNR { seen[$1] = 1; next } !($1 in seen) { missing++ } END { exit missing > 0 }' - "$WORK/$mode.announced" ||
        fail "$mode: announced blocks are missing from the trace"
    grep -q " process_exit status=" "$WORK/dump.txt" || fail "$mode: no process_exit"
done

# Kill the recorder: the program must neither hang nor die.
"$MEMSCRIBE" record -q -o "$WORK/cut.mscr" -- "$MS_PROGRAMS/col_crash" slow 12 >"$WORK/slow.out" 2>"$WORK/slow.err" &
rec=$!
# Kill it once chunks of calls are on disk (the recorder flushes each
# second), or after 5 s of wall time: the program runs 12, so the recorder
# is still there however loaded the machine (a count of short sleeps took
# longer than the program on a loaded machine, and the recorder had ended).
deadline=$((SECONDS + 5))
while [ "$SECONDS" -lt "$deadline" ]; do
    [ "$(stat -c %s "$WORK/cut.mscr" 2>/dev/null || echo 0)" -gt 65536 ] && break
    sleep 0.1
done
kill -KILL $rec || fail "the recorder ended before it could be killed"
wait $rec 2>/dev/null || true
for _ in $(seq 1 150); do
    [ -s "$WORK/slow.out" ] && break
    sleep 0.2
done
[ -s "$WORK/slow.out" ] || fail "the program did not finish after its recorder was killed"
# The collector writes nothing on the program's stderr:
# with the recorder gone, nobody is left to print its message.
! grep -q "memscribe: collector" "$WORK/slow.err" ||
    fail "the collector wrote on the program's stderr: $(cat "$WORK/slow.err")"
"$MEMSCRIBE" dump "$WORK/cut.mscr" >"$WORK/cut.txt" 2>"$WORK/cut.err" || fail "dump of the cut trace failed: $(cat "$WORK/cut.err")"
grep -q "incomplete" "$WORK/cut.err" || fail "dump does not call the cut trace incomplete"
grep -q " malloc " "$WORK/cut.txt" || fail "the cut trace holds no mallocs"
echo "ok: SIGKILL, SIGSEGV, abort and a killed recorder"
