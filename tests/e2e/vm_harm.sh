#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Programs --vm-precise once harmed run as untraced: 120
# threads (libunwind growing its memory inside a hook left the selector
# armed: SIGSYS), rt_sigprocmask/rt_sigaction given bad pointers (EFAULT,
# not a crash), a handler on a small alternate stack calling write() (no
# SIGSYS frame on it), malloc in a frequent SIGALRM handler (a signal inside
# our SIGSYS handler ran with SIGSYS blocked), and the signal mask read back
# with SIGSYS in it; a SA_ONSTACK handler leaving by siglongjmp (dispatch
# stayed off for the thread: the 8 MiB mapping malloc made after it was
# missing from the trace); a new thread's arena (set up before dispatch was
# armed, unrecorded, with signals open under the arena lock).
source "$(dirname "$0")/record_lib.sh"

# Argument "32": the -m32 build, traced by the i386 collector.
prog="$MS_PROGRAMS/vm_harm${1:-}"
[ -z "${1:-}" ] || need_m32
# The i386 collector unwinds with libgcc, far slower: fewer iterations
# under the 20 us timer there.
iterations=300000
[ -z "${1:-}" ] || iterations=3000
while read -r mode; do
    rc=0
    # shellcheck disable=SC2086 # the mode is words
    "$prog" $mode >"$WORK/plain" 2>&1 || rc=$?
    [ "$rc" = 0 ] || fail "$mode: exits with $rc untraced: $(cat "$WORK/plain")"
    rc=0
    # shellcheck disable=SC2086
    timeout 120 "$MEMSCRIBE" record -q --vm-precise -o "$WORK/t.mscr" -- "$prog" $mode \
        >"$WORK/traced" 2>"$WORK/err" || rc=$?
    [ "$rc" = 0 ] || fail "$mode: exits with $rc under --vm-precise (124: it hung): $(cat "$WORK/err")"
    diff -u "$WORK/plain" "$WORK/traced" || fail "$mode: output differs under --vm-precise"
    ms_dump_ok "$WORK/t.mscr"
    # Dispatch was on: pthread_create's own stack mappings are recorded.
    case $mode in
    threads*)
        grep -q "origin=thread" "$WORK/dump.txt" || fail "$mode: dispatch was not on (no thread stack)"
        # A new thread's arena (glibc reserves its heap PROT_NONE) is set
        # up in its first heap call, which the collector's thread wrapper
        # makes with dispatch armed and signals held: recorded.
        awk '$5 == "mmap" && $3 != $2 && /origin=libc/ && /prot=0x0/ { n++ } END { exit !n }' \
            "$WORK/dump.txt" || fail "$mode: no thread's arena mapping in the trace" ;;
    altjmp)
        grep -q " mmap .*size=8392704 .*origin=libc" "$WORK/dump.txt" ||
            fail "$mode: dispatch is off after the handler's siglongjmp (no libc mapping of malloc's 8 MiB)" ;;
    esac
done <<MODES
threads 120
efault
altstack
alarm $iterations
mask
altjmp
MODES
echo "ok: threads, bad pointers, a small alternate stack, SIGALRM, the mask and a siglongjmp off the alternate stack, as untraced"
