#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# record -p of processes with seccomp filters (tests/programs/col_seccomp.c).
# A filter that lets through the calls docs/record.md's table names (and
# the program's own: anything else kills) is attached to, and the round
# while attached is traced: main, a thread's first event, a forked child;
# before, the injected dlopen's mprotect killed the process (SIGSYS).
# Refused, exit 1 with the reason and the process untouched (no collector
# loaded, its round and its exit as untraced): a filter that kills on
# mprotect (named), one that kills on restart_syscall (which a thread
# stopped in a sleep resumes it with: it restarts the sleep instead), one
# that kills on memfd_create in one thread only (the thread named), a
# thread in strict mode, and (as root, through setpriv) a
# recorder that may trace the process but cannot read its filter.
source "$(dirname "$0")/record_lib.sh"

PROG=$MS_PROGRAMS/col_seccomp
target=0 # the program's pid, set by start
# A failed check leaves no program waiting for its next round.
trap '[ "$target" = 0 ] || kill "$target" 2>/dev/null || true; rm -rf "$WORK"' EXIT

# Start the program in $WORK/$1 for 2 rounds under filter $2 (names
# after it); sets $target and $dir.
start() {
    dir=$WORK/$1
    shift
    mkdir -p "$dir"
    "$PROG" "$dir" 2 "$@" >"$dir/out" 2>&1 &
    target=$!
    wait_file "$dir/ready.0"
}
# Let the program run its two rounds and end; its exit status and output
# must be an untraced run's.
finish_target() {
    mkdir -p "$dir/go.1" "$dir/go.2"
    local rc=0
    wait "$target" || rc=$?
    expect "exit status ($1)" "$rc" 0
    expect "output ($1)" "$(cat "$dir/out")" "start
ok"
}
# record -p $target must refuse with a message matching $2.
refuse() {
    local rc=0
    "$MEMSCRIBE" record -p "$target" -o "$WORK/refused.mscr" >"$WORK/refuse.out" 2>"$WORK/refuse.err" ||
        rc=$?
    expect "exit status of record -p ($1)" "$rc" 1
    grep -Eq "$2" "$WORK/refuse.err" || fail "$1: '$2' not in: $(cat "$WORK/refuse.err")"
    [ ! -e "$WORK/refused.mscr" ] || fail "$1: a trace was left behind"
    ! grep -q libmemscribe "/proc/$target/maps" || fail "$1: the collector was loaded all the same"
    echo "ok: $1: refused: $(cat "$WORK/refuse.err")"
}

# shellcheck disable=SC2046 # one name a word
start allow tsync-allow $(ms_doc_calls)
"$MEMSCRIBE" record -p "$target" -o "$WORK/allow.mscr" 2>"$WORK/allow.err" &
rec=$!
wait_line "$WORK/allow.err" "attached to process $target"
mkdir "$dir/go.1"
wait_file "$dir/done.1"
kill -INT "$rec" # once the round is done, not after a time it may outlast
rc=0
wait "$rec" || rc=$?
expect "exit status of record -p under the whitelist of the documented calls" "$rc" 0
finish_target "whitelist of the documented calls"
expect "the heap calls of the round attached: main, a new thread, a forked child" \
    "$(ms_heap_by_size "$WORK/allow.mscr" '200[1-3]')" \
    "free size=2001 10;free size=2002 10;free size=2003 10;malloc size=2001 10;malloc size=2002 10;malloc size=2003 10;"

start mprotect tsync-kill mprotect
refuse "a filter that kills on mprotect" \
    "process $target: thread $target's seccomp filter forbids a call the collector needs: mprotect \(loading the attach collector \(dlopen\).*\) kills the process \(SECCOMP_RET_KILL_PROCESS\); not attached, the process is untouched"
finish_target "a filter that kills on mprotect"

# Its main thread sleeps in nanosleep: stopped to read the filter, it
# would resume with restart_syscall, which kills; it restarts the sleep
# instead (x86: the registers rewound; AArch64: the call's number given
# back at its entry).
start restart tsync-kill restart_syscall
refuse "a filter that kills on restart_syscall" \
    "process $target: thread [0-9]+'s seccomp filter forbids a call the collector needs: restart_syscall"
finish_target "a filter that kills on restart_syscall"

start thread thread-kill memfd_create
refuse "a thread whose filter kills on memfd_create" \
    "process $target: thread [0-9]+'s seccomp filter forbids a call the collector needs: memfd_create \(a new ring segment\) kills"
grep -q "thread $target's" "$WORK/refuse.err" && fail "the main thread was named, not the worker"
finish_target "a thread whose filter kills on memfd_create"

start strict strict
refuse "a thread in strict mode" "process $target: thread [0-9]+ is in seccomp strict mode"
finish_target "a thread in strict mode"

if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
    # Both as nobody: allowed to trace it, not to read its filter.
    nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups)
    dir=$WORK/nobody
    mkdir -p "$dir"
    chmod 777 "$WORK" "$dir"
    "${nobody[@]}" "$PROG" "$dir" 2 tsync-kill uname >"$dir/out" 2>&1 &
    target=$!
    wait_file "$dir/ready.0"
    rc=0
    "${nobody[@]}" "$MEMSCRIBE" record -p "$target" -o "$dir/refused.mscr" >"$WORK/refuse.out" \
        2>"$WORK/refuse.err" || rc=$?
    expect "exit status of record -p without CAP_SYS_ADMIN" "$rc" 1
    grep -q "process $target: thread $target has a seccomp filter we cannot read (.*CAP_SYS_ADMIN" \
        "$WORK/refuse.err" || fail "no reason given: $(cat "$WORK/refuse.err")"
    ! grep -q libmemscribe "/proc/$target/maps" || fail "the collector was loaded all the same"
    finish_target "a filter we cannot read"
fi
