#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Threads without the time-stamp counter (tests/programs/col_notsc.c):
# prctl(PR_SET_TSC, PR_TSC_SIGSEGV) by prctl() and by syscall(SYS_prctl),
# inherited by a new thread, turned back on; and seccomp's strict mode.
# The program runs as it does untraced (the collector's rdtsc, or the
# vDSO's clock_gettime, used to kill it with SIGSEGV), under each clock
# the collector may stamp with and with --sample. Every heap call is in
# the trace, and the stamps of threads with and without the TSC merge in
# order: a 1 MiB block freed by one and mapped again at the same address
# by the other is never malloc'ed before it was freed. Strict mode turns
# the collector off first, saying so: the calls before it are traced.
# Argument "32": the -m32 build, traced by the i386 collector.
source "$(dirname "$0")/record_lib.sh"

bits=${1:-}
[ -z "$bits" ] || need_m32
PROG=$MS_PROGRAMS/col_notsc$bits

# Check the order of the heap calls: no malloc of an address that is live
# (its free not yet seen); prints how many 1 MiB mallocs came at the
# address the other thread had just freed.
order() {
    "$MEMSCRIBE" dump "$1" | awk '
        $5 == "malloc" {
            if ($6 in live) { print "malloc of a live block: " $0; bad = 1 }
            live[$6] = $3
            if ($7 == "size=1048576" && $6 == freed && $3 != freer) reused++
        }
        $5 == "free" && $6 in live {
            if ($7 == "size=1048576") { freed = $6; freer = $3 }
            delete live[$6]
        }
        END { print "reused " reused + 0; exit bad }'
}

want="free size=1001 100;free size=1002 100;free size=1003 100;free size=1004 100;free size=1048576 400;"
want="${want}malloc size=1001 100;malloc size=1002 100;malloc size=1003 100;malloc size=1004 100;"
want="${want}malloc size=1048576 400;"
for how in tsc monotonic sample; do
    opts=()
    clock=tsc
    case $how in
    monotonic) clock=monotonic ;;
    sample) opts=(--sample 1) ;;
    esac
    rc=0
    MEMSCRIBE_CLOCK=$clock "$MEMSCRIBE" record -q -o "$WORK/$how.mscr" "${opts[@]}" -- \
        "$PROG" clock >"$WORK/$how.out" 2>"$WORK/$how.err" || rc=$?
    expect "exit status ($how)" "$rc" 0
    expect "output ($how)" "$(cat "$WORK/$how.out" "$WORK/$how.err")" ok
    ms_dump_ok "$WORK/$how.mscr"
    expect "heap calls ($how)" "$(ms_heap_by_size "$WORK/$how.mscr" '100[1-7]|1048576')" "$want"
    order "$WORK/$how.mscr" >"$WORK/order" || fail "$how: out of order: $(cat "$WORK/order")"
    reused=$(sed -n 's/^reused //p' "$WORK/order")
    [ "$reused" -ge 50 ] || fail "$how: only $reused of 400 handed-off blocks came back at the same address"
    echo "ok: $how: in order, $reused blocks handed off at the same address"
done

# Strict mode: nothing but read, write and exit from then on.
for how in prctl syscall; do
    rc=0
    "$MEMSCRIBE" record -o "$WORK/strict.mscr" -- "$PROG" "strict-$how" \
        >"$WORK/strict.out" 2>"$WORK/strict.err" || rc=$?
    expect "exit status (strict mode by $how)" "$rc" 0
    expect "output (strict mode by $how)" "$(cat "$WORK/strict.out")" "strict: still running
ok"
    grep -q "collector: thread [0-9]* enters seccomp strict mode" "$WORK/strict.err" ||
        fail "strict mode by $how: record does not say so: $(cat "$WORK/strict.err")"
    ms_dump_ok "$WORK/strict.mscr"
    expect "heap calls before strict mode (by $how)" "$(ms_heap_by_size "$WORK/strict.mscr" '100[1-7]|1048576')" \
        "free size=1005 10;malloc size=1005 10;"
done
