#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# record -p PID: attach to rec_attach_target mid-run, twice in a row, and
# to its 32-bit build. Each
# trace holds exactly the heap calls of the round made while attached
# (none of the rounds between or after), a thread's from before the
# attach and a plugin's dlopen'ed while attached included, the program's GOT points at the
# collector only while attached, the frees and the realloc of
# blocks from before the attach are counted as such, every report says
# the trace starts mid-run (and that what the program holds is live at the
# end, not leaked: it runs on), and the program's output and exit status are
# those of an untraced run. Then the refusals, each exit 1 with the reason,
# the program untouched: no such process, a static program, one traced by
# strace, one preloaded by record, one attached already, one
# in a PID namespace of its own, and (as root) a recorder running as
# another user.
source "$(dirname "$0")/record_lib.sh"

PROG=$MS_PROGRAMS/rec_attach_target

# Untraced, for comparison.
mkdir "$WORK/plain"
touch "$WORK/plain/go.1" "$WORK/plain/go.2" "$WORK/plain/go.3" "$WORK/plain/go.4"
"$PROG" "$WORK/plain" 4 >"$WORK/plain.out"

# Attached in round 1, not in round 2, again in round 3, not in round 4
# (each attach until Ctrl-C; --duration detaches the sampled attach below).
D=$WORK/run
ms_attach_target "$D" 4
ms_attach_round "$WORK/t1.mscr" 1 "$D"
touch "$D/go.2"
wait_file "$D/done.2"
ms_attach_round "$WORK/t3.mscr" 3 "$D"
touch "$D/go.4"
rc=0
wait "$target" || rc=$?
expect "exit status of the program attached to twice" "$rc" 0
cmp -s "$WORK/plain.out" "$D/out" || fail "output differs: $(cat "$D/out") vs $(cat "$WORK/plain.out")"

# The program's GOT pointed malloc at the collector while attached only.
expect "malloc's address seen by the program, rounds 1-4" "$(cat "$D"/got.1 "$D"/got.2 "$D"/got.3 "$D"/got.4 | tr '\n' ' ')" \
    "other same other same "

# Round 1: the two frees and the realloc of blocks from before the attach.
expect "round 1's heap calls" "$(ms_heap_calls "$WORK/t1.mscr" | tr '\n' ';')" \
    "calloc size=300 1;free known 3;free unknown 2;malloc size=5001 5;malloc size=7001 3;realloc size=6001 1;"
# Round 3: the 7 blocks of round 2 were allocated while detached; the
# plugin loaded while attached has its malloc seen.
expect "round 3's heap calls" "$(ms_heap_calls "$WORK/t3.mscr" | tr '\n' ';')" \
    "calloc size=300 1;free known 4;free unknown 7;malloc size=5003 5;malloc size=7003 3;malloc size=7703 1;realloc size=6003 1;"
# The thread started before the attach (dynamic TLS of a dlopen'ed
# collector) is traced: its mallocs come from another tid.
expect "threads with heap calls in round 3" "$("$MEMSCRIBE" dump "$WORK/t3.mscr" | awk '$5 == "malloc" { print $3 }' | sort -u | wc -l)" 2

# The reports say so.
"$MEMSCRIBE" report "$WORK/t1.mscr" >"$WORK/report.txt" 2>&1
grep -q "note: the trace starts mid-run (record -p $target)" "$WORK/report.txt" ||
    fail "no mid-run note in the report: $(cat "$WORK/report.txt")"
grep -q "unmatched frees:    3 (addresses never seen allocated: allocated before the attach (record -p))" "$WORK/report.txt" ||
    fail "the report does not count 3 frees of blocks from before: $(cat "$WORK/report.txt")"
"$MEMSCRIBE" report --format json "$WORK/t1.mscr" >"$WORK/report.json"
expect "JSON attached.pid" "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["attached"]["pid"])' "$WORK/report.json")" "$target"
"$MEMSCRIBE" leaks "$WORK/t1.mscr" >/dev/null 2>"$WORK/leaks.err"
grep -q "starts mid-run" "$WORK/leaks.err" || fail "leaks says nothing of the attach: $(cat "$WORK/leaks.err")"
# The program ran on after the detach: the trace does not see it end, and
# what it holds is live at the end, not leaked (report's summary and the
# HTML page's); the process table has no end for it.
grep -q " process_exit " <("$MEMSCRIBE" dump "$WORK/t1.mscr") && fail "the detach wrote an exit"
grep -q "^  live at the end: " "$WORK/report.txt" || fail "report: no 'live at the end': $(grep -i 'leaked\|live' "$WORK/report.txt")"
grep -q "^  leaked:" "$WORK/report.txt" && fail "report says 'leaked' for a program that runs on"
grep -q "top call sites by bytes live at the end" "$WORK/report.txt" || fail "report: the list of leaked bytes"
"$MEMSCRIBE" html "$WORK/t1.mscr" -o "$WORK/t1.html" 2>/dev/null || fail "html failed"
grep -q '"ended":false' "$WORK/t1.html" || fail "the HTML page's data says the program ended"

# The attach build has no initial-exec TLS, which a dlopen'ed library
# gets only out of glibc's static TLS surplus (no STATIC_TLS flag, no
# TPOFF relocations); the preloaded build keeps it.
need readelf
LIBDIR=$(dirname "$MEMSCRIBE")/../lib/memscribe
for lib in "$LIBDIR/libmemscribe-attach.so" "$LIBDIR/i386/libmemscribe-attach.so"; do
    [ -e "$lib" ] || continue
    readelf -dW "$lib" >"$WORK/dyn.txt"
    readelf -rW "$lib" >"$WORK/rel.txt"
    ! grep -q STATIC_TLS "$WORK/dyn.txt" || fail "$lib wants static TLS"
    # x86's TPOFF, AArch64's TPREL: an offset from the thread pointer
    expect "TPOFF relocations of $lib" "$(grep -cE 'TPOFF|TPREL' "$WORK/rel.txt" || true)" 0
done
readelf -dW "$LIBDIR/libmemscribe.so" >"$WORK/dyn.txt"
readelf -rW "$LIBDIR/libmemscribe.so" >"$WORK/rel.txt"
# the flag (lld sets it on x86 only), or the thread pointer offsets
grep -q STATIC_TLS "$WORK/dyn.txt" || grep -qE 'TPOFF|TPREL' "$WORK/rel.txt" ||
    fail "libmemscribe.so lost its initial-exec TLS"

# Refusals: exit 1, one line naming the process and the reason.
refuse() {
    local what=$1 want=$2
    shift 2
    local rc=0
    "$@" >"$WORK/refuse.out" 2>"$WORK/refuse.err" || rc=$?
    [ "$rc" = 1 ] || fail "$what: exit $rc, not 1: $(cat "$WORK/refuse.err")"
    grep -q "$want" "$WORK/refuse.err" || fail "$what: '$want' not in: $(cat "$WORK/refuse.err")"
    [ ! -e "$WORK/refused.mscr" ] || fail "$what: a trace was left behind"
    echo "ok: $what refused"
}
refuse "no such process" "no process 999999999" \
    "$MEMSCRIBE" record -p 999999999 -o "$WORK/refused.mscr"

D=$WORK/static
ms_attach_target "$D" 1 "$MS_PROGRAMS/rec_attach_static"
refuse "a static program" "process $target is statically linked" \
    "$MEMSCRIBE" record -p "$target" -o "$WORK/refused.mscr"
touch "$D/go.1"
wait "$target" || fail "the static program failed after the refusal"

# A 32-bit program gets the i386 attach collector (where this machine runs
# 32-bit programs at all).
if [ -x "$MS_PROGRAMS/rec_attach_target32" ] && ! m32_runs; then
    echo "skipped: the 32-bit program (this machine does not run 32-bit x86 programs)"
elif [ -x "$MS_PROGRAMS/rec_attach_target32" ]; then
    D=$WORK/p32
    ms_attach_target "$D" 2 "$MS_PROGRAMS/rec_attach_target32"
    ms_attach_round "$WORK/t32.mscr" 1 "$D"
    touch "$D/go.2"
    wait "$target" || fail "the 32-bit program failed after the attach"
    expect "the 32-bit program's round 1" "$(ms_heap_calls "$WORK/t32.mscr" | tr '\n' ';')" \
        "calloc size=300 1;free known 3;free unknown 2;malloc size=5001 5;malloc size=7001 3;realloc size=6001 1;"
    expect "the 32-bit program's GOT, rounds 1-2" "$(cat "$D/got.1" "$D/got.2" | tr '\n' ' ')" "other same "
    expect "the 32-bit program's output" "$(sed -n 2,3p "$D/out")" "$(sed -n 2,3p "$WORK/plain.out")"
fi

D=$WORK/others
ms_attach_target "$D" 1
need strace
strace -p "$target" -o /dev/null 2>/dev/null &
tracer=$!
wait_line "/proc/$target/status" "^TracerPid:[[:space:]]*$tracer$"
refuse "a program strace traces" "process $target is traced already, by process $tracer (strace)" \
    "$MEMSCRIBE" record -p "$target" -o "$WORK/refused.mscr"
kill "$tracer"
wait "$tracer" || true
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
    refuse "a recorder of another user" "process $target: not permitted: it belongs to uid 0" \
        setpriv --reuid=65534 --regid=65534 --clear-groups "$MEMSCRIBE" record -p "$target" \
        -o /dev/null
fi
# A process in a PID namespace of its own (its pids are not ours).
if unshare --pid --fork true 2>/dev/null; then
    ND=$WORK/ns
    mkdir -p "$ND"
    unshare --pid --fork "$PROG" "$ND" 1 >"$ND/out" 2>&1 &
    outer=$!
    wait_file "$ND/ready.0"
    inner=$(pgrep -P "$outer")
    refuse "a process in another PID namespace" "process $inner: in another pid namespace" \
        "$MEMSCRIBE" record -p "$inner" -o "$WORK/refused.mscr"
    touch "$ND/go.1"
    wait "$outer" || fail "the program in its namespace failed after the refusal"
fi
# One attached already: a second recorder is turned away, the first goes on.
"$MEMSCRIBE" record -p "$target" -o "$WORK/first.mscr" 2>"$WORK/first.err" &
first=$!
wait_line "$WORK/first.err" "attached to process $target"
refuse "a second attach at once" "process $target is being recorded already by another 'record -p'" \
    "$MEMSCRIBE" record -p "$target" -o "$WORK/refused.mscr"
touch "$D/go.1"
wait_file "$D/done.1"
kill -INT "$first" 2>/dev/null || true # or it ended with the program, its one round done
wait "$first" || fail "the first recorder failed: $(cat "$WORK/first.err")"
expect "the first recorder's round" "$(ms_heap_calls "$WORK/first.mscr" | tr '\n' ';')" \
    "calloc size=300 1;free known 3;free null 2;free unknown 2;malloc size=5001 5;malloc size=7001 3;realloc size=6001 1;"
wait "$target" || fail "the program failed after the refusals"
expect "round 1's output after the refusals" "$(sed -n 2p "$D/out")" "$(sed -n 2p "$WORK/plain.out")"

# A stopped process (job control): resuming it for our calls would undo that.
D=$WORK/stopped
ms_attach_target "$D" 1
kill -STOP "$target"
wait_line "/proc/$target/status" "^State:[[:space:]]*T"
refuse "a stopped process" "process $target is stopped" \
    "$MEMSCRIBE" record -p "$target" -o "$WORK/refused.mscr"
kill -CONT "$target"
touch "$D/go.1"
wait "$target" || fail "the stopped program failed after the refusal"

# A thread holds the loader's lock (a constructor that waits): the
# injected dlopen cannot get it, is given up after 10 s, and the program,
# put back, finishes as it would have.
D=$WORK/locked
mkdir -p "$D"
"$MS_PROGRAMS/rec_attach_locked" "$D" >"$D/out" 2>&1 &
target=$!
wait_file "$D/inctor.0"
refuse "a process whose loader lock is held" "process $target: the call at .* did not return within 10 s" \
    "$MEMSCRIBE" record -p "$target" -o "$WORK/refused.mscr"
touch "$D/unblock.0" "$D/go.1"
rc=0
wait "$target" || rc=$?
expect "exit status of the program whose dlopen was given up" "$rc" 0
expect "its output" "$(cat "$D/out")" "done"

# --sample through the settings; a later attach must ask for the same rate.
D=$WORK/sampled
ms_attach_target "$D" 1
"$MEMSCRIBE" record -p "$target" -o "$WORK/s1.mscr" --sample 1K --duration 0.5 2>"$WORK/s1.err" ||
    fail "sampled attach failed: $(cat "$WORK/s1.err")"
"$MEMSCRIBE" dump --header "$WORK/s1.mscr" >"$WORK/s1.dump"
grep -q "^# .* sample_bytes=1024" "$WORK/s1.dump" ||
    fail "the sampled attach's trace does not say sample_bytes=1024"
refuse "another --sample rate than the first attach" "process $target was attached to before with another --sample rate" \
    "$MEMSCRIBE" record -p "$target" -o "$WORK/refused.mscr"
touch "$D/go.1"
wait "$target" || fail "the program failed after the sampled attach"

# A program that record started with the collector preloaded.
D=$WORK/pre
mkdir -p "$D"
"$MEMSCRIBE" record -q -o "$WORK/pre.mscr" -- "$PROG" "$D" 1 >"$D/out" 2>&1 &
rec=$!
wait_file "$D/ready.0"
target=$(pgrep -P "$rec" -x rec_attach_targ)
refuse "a program record preloads" "process $target runs with memscribe's collector preloaded" \
    "$MEMSCRIBE" record -p "$target" -o "$WORK/refused.mscr"
touch "$D/go.1"
wait "$rec" || fail "record of the preloaded program failed"
