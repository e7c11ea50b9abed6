#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Seccomp filters a traced program installs (tests/programs/col_seccomp.c,
# on every thread). Under a whitelist of its own calls and those
# docs/record.md's table names (and nothing else: anything else kills),
# everything is traced: a thread's first event with its ring segment, a
# forked child, the exit. A filter that kills on (or fails) memfd_create,
# which a new thread's segment needs, turns the collector off before it is
# installed, saying so, and the program runs on as untraced, its exec'd
# children untraced too (they inherit the filter); before, the next thread
# was killed with the program (SIGSYS). A filter that forbids a call the
# collector does not make changes nothing. The table names exactly the
# calls of src/format/fmt_shm_calls.h, which both checks run.
source "$(dirname "$0")/record_lib.sh"

PROG=$MS_PROGRAMS/col_seccomp

expect "calls named by the docs' table and by fmt_shm_calls.h" \
    "$(ms_doc_calls | tr '\n' ' ')" \
    "$(grep -oE '^ *\{"[a-z0-9_]+",|\? "[a-z0-9_]+" :' "$MS_SOURCE/src/format/fmt_shm_calls.h" |
        tr -d ' {,"?:' | sort -u | tr '\n' ' ')"

# Record one round of the program under filter $1 (names after it) into
# $WORK/$1.mscr; sets $rc, leaves $WORK/$1.out and .err.
run() {
    local name=$1 dir=$WORK/$1
    shift
    mkdir -p "$dir/go.1"
    rc=0
    "$MEMSCRIBE" record -o "$WORK/$name.mscr" -- "$PROG" "$dir" 1 "$@" \
        >"$WORK/$name.out" 2>"$WORK/$name.err" || rc=$?
    ms_dump_ok "$WORK/$name.mscr"
}
all="free size=2001 10;free size=2002 10;free size=2003 10;malloc size=2001 10;malloc size=2002 10;malloc size=2003 10;"

# shellcheck disable=SC2046 # one name a word
run allow tsync-allow $(ms_doc_calls)
expect "exit status under the whitelist of the documented calls" "$rc" 0
expect "its output" "$(cat "$WORK/allow.out")" "start
ok"
expect "its heap calls: main, a new thread, a forked child" "$(ms_heap_by_size "$WORK/allow.mscr" '200[1-3]')" "$all"
! grep -q "collector:" "$WORK/allow.err" || fail "the collector complains: $(cat "$WORK/allow.err")"

run other tsync-kill uname
expect "exit status under a filter of a call the collector does not make" "$rc" 0
expect "its heap calls" "$(ms_heap_by_size "$WORK/other.mscr" '200[1-3]')" "$all"

for how in kill errno; do
    run "$how" "tsync-$how" memfd_create
    expect "exit status under a filter that ${how}s memfd_create" "$rc" 0
    expect "its output" "$(cat "$WORK/$how.out")" "start
ok"
    grep -q "collector: the program installs a seccomp filter (the seccomp system call) under which memfd_create (a new ring segment) " "$WORK/$how.err" ||
        fail "$how: the collector does not say why it stops: $(cat "$WORK/$how.err")"
    expect "its heap calls (none after the filter)" "$(ms_heap_by_size "$WORK/$how.mscr" '200[1-3]')" ""
done

# The programs it execs inherit the filter: they must not load the collector.
rc=0
COL_SECCOMP_EXEC=$PROG run exec tsync-kill memfd_create
expect "exit status of a program that execs under the filter" "$rc" 0
expect "its output and its exec'd child's" "$(cat "$WORK/exec.out")" "start
start
ok
ok"
