#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# record refuses what LD_PRELOAD cannot trace, naming the file: a static
# program, a setuid one, a script whose interpreter is static.
source "$(dirname "$0")/record_lib.sh"

expect_refusal() { # WHAT PATTERN CMD...
    local what=$1 pattern=$2 rc=0
    shift 2
    "$MEMSCRIBE" record -q -o "$WORK/r.mscr" -- "$@" >"$WORK/r.out" 2>"$WORK/r.err" || rc=$?
    [ "$rc" = 1 ] || fail "$what: record exited with $rc, expected 1"
    grep -q -- "$pattern" "$WORK/r.err" || fail "$what: message '$(cat "$WORK/r.err")' lacks '$pattern'"
}

expect_refusal static "$MS_PROGRAMS/col_static is statically linked" "$MS_PROGRAMS/col_static"
cp "$MS_PROGRAMS/col_procs" "$WORK/suid_prog"
chmod u+s "$WORK/suid_prog"
expect_refusal setuid "$WORK/suid_prog is set-user-ID" "$WORK/suid_prog" leaf 1
printf '#!%s\n' "$MS_PROGRAMS/col_static" >"$WORK/script"
chmod +x "$WORK/script"
expect_refusal "static interpreter" "$MS_PROGRAMS/col_static is statically linked" "$WORK/script"
expect_refusal "missing program" "no-such-program-here: not found" no-such-program-here
echo "ok: static, setuid, static interpreter and missing programs refused"
