#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The recording channel takes in only the traced tree: a
# process outside it, which can read the socket's name in /proc/net/unix
# but not the secret in the tree's environment, cannot add a process,
# cannot take over a traced pid's stream, and cannot stall the recording
# with connections that send nothing. A descendant that changes its uid
# is still traced.
source "$(dirname "$0")/record_lib.sh"
P=$MS_PROGRAMS

"$MEMSCRIBE" record -o "$WORK/t.mscr" -- "$P/rec_intruder" wait "$WORK/go" 515151 2>"$WORK/err" &
rpid=$!
spid=''
# A failure below must not leave the recording waiting for "go" (ctest then
# waited its 300 s for the pipe): release and stop everything started here.
trap 'touch "$WORK/go"; kill $spid "$rpid" 2>/dev/null || true; wait "$rpid" 2>/dev/null || true; rm -rf "$WORK"' EXIT
sock='' tpid=''
for _ in $(seq 200); do
    sock=$(grep -o "@memscribe-$(printf %010d "$rpid")-[0-9a-f]*" /proc/net/unix | head -1 || true)
    tpid=$(pgrep -P "$rpid" || true)
    [ -n "$sock" ] && [ -n "$tpid" ] && grep -q "$P/rec_intruder" "/proc/$tpid/cmdline" 2>/dev/null && break
    sleep 0.05
done
[ -n "$sock" ] && [ -n "$tpid" ] || fail "no socket or traced process for recorder $rpid"
sock=${sock#@}
secret=$(tr '\0' '\n' <"/proc/$tpid/environ" | sed -n 's/^MEMSCRIBE_SECRET=//p')
# Segments of one process whose hellos arrive out of order (the second
# connected first, sent last) are all taken in: the third was refused and
# its threads lost (col_unwind under load lost 1 of 9). Before the silent
# connections below: the second segment's connection waits 200 ms without a
# hello, and among a hundred silent ones the recorder may drop it as the
# oldest (a real collector sends again; this one would fail on EPIPE).
if [ -n "$secret" ]; then
    MEMSCRIBE_SECRET=$secret "$P/rec_intruder" segments "$sock" 484848 || fail "segments failed locally"
fi
# Outside the tree: a made-up process, a spoof of the traced pid, and 100
# connections that never send (the recorder once waited 2 s on each).
env -u MEMSCRIBE_SECRET "$P/rec_intruder" inject "$sock" 999999 424242 || fail "inject failed locally"
env -u MEMSCRIBE_SECRET "$P/rec_intruder" inject "$sock" "$tpid" 434343 || fail "spoof failed locally"
MEMSCRIBE_SECRET=0123456789abcdef0123456789abcdef "$P/rec_intruder" inject "$sock" 999997 444444 ||
    fail "inject with a guessed secret failed locally"
env -u MEMSCRIBE_SECRET "$P/rec_intruder" silent "$sock" 100 &
spid=$!
# The same message with the tree's secret is taken in: the attacks above
# were refused for want of it, not for being malformed. A segment the
# sender could still shrink (a SIGBUS for the recorder) is refused. Each is
# sent again if the recorder dropped it as the oldest of the silent ones
# before it was sent (EPIPE, on a loaded machine), as the collector does.
inject_secret() {
    for _ in 1 2 3; do
        MEMSCRIBE_SECRET=$secret "$P/rec_intruder" inject "$sock" "$@" && return 0
    done
    return 1
}
if [ -n "$secret" ]; then
    inject_secret 999996 464646 unsealed || fail "unsealed inject failed locally"
    inject_secret 999998 454545 || fail "control inject failed"
fi
touch "$WORK/go"
for _ in $(seq 600); do
    kill -0 "$rpid" 2>/dev/null || break
    sleep 0.1
done
if kill -0 "$rpid" 2>/dev/null; then
    kill "$spid" 2>/dev/null || true
    kill -9 "$rpid" 2>/dev/null || true
    fail "the recording stalled for 60 s behind silent connections"
fi
kill "$spid" 2>/dev/null || true
wait "$rpid" || fail "record exited with $?: $(cat "$WORK/err")"
ms_dump_ok "$WORK/t.mscr"
grep -q " malloc .*size=515151" "$WORK/dump.txt" || fail "the traced program's malloc is missing"
awk -v tpid="$tpid" '$5 == "malloc" && / size=515151/ && $2 != tpid { bad = 1 } END { exit bad }' \
    "$WORK/dump.txt" || fail "the traced malloc is not the traced pid's"
for size in 424242 434343 444444 464646; do
    ! grep -q "size=$size" "$WORK/dump.txt" || fail "an intruder's event (size $size) is in the trace"
done
! awk '$5 == "process_start" && ($2 == 999999 || $2 == 999997 || $2 == 999996) { f = 1 } END { exit !f }' "$WORK/dump.txt" ||
    fail "an intruder's process is in the trace"
[ "$(awk '$5 == "process_start"' "$WORK/dump.txt" | wc -l)" = 3 ] ||
    fail "expected the traced process, the control and the segments: $(awk '$5 == "process_start"' "$WORK/dump.txt")"
grep -q "size=454545" "$WORK/dump.txt" || fail "the control message with the secret was not taken in"
for size in 484848 484849 484850; do
    grep -q " malloc .*size=$size" "$WORK/dump.txt" || fail "segments: the malloc of $size is missing (segment $((size - 484848)))"
done
grep -q "connection(s) to the recording.s socket ignored" "$WORK/err" || fail "record did not count the refused connections: $(cat "$WORK/err")"

# A descendant that changes uid keeps the secret it inherited: still traced.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
    "$MEMSCRIBE" record -q -o "$WORK/u.mscr" -- setpriv --reuid=nobody --regid=nogroup --clear-groups \
        "$P/rec_intruder" wait / 525252 || fail "record of a uid change exited with $?"
    ms_dump_ok "$WORK/u.mscr"
    grep -q " malloc .*size=525252" "$WORK/dump.txt" || fail "the program run as nobody was not traced"
    echo "ok: a descendant that changed uid is traced"
fi
echo "ok: outsiders cannot add, spoof or stall; the tree's own messages get in"
