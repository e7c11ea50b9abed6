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
# "#!/usr/bin/env -S prog": env's options before the program.
printf '#!/usr/bin/env -S %s --flag\n' "$MS_PROGRAMS/col_static" >"$WORK/envs"
chmod +x "$WORK/envs"
expect_refusal "env -S static" "$MS_PROGRAMS/col_static is statically linked" "$WORK/envs"
printf '#!/usr/bin/env -i A=1 %s\n' "$MS_PROGRAMS/col_static" >"$WORK/envi"
chmod +x "$WORK/envi"
expect_refusal "env -i static" "$MS_PROGRAMS/col_static is statically linked" "$WORK/envi"
# -o naming the program itself: refused before anything is truncated.
cp "$MS_PROGRAMS/col_procs" "$WORK/self_prog"
rc=0
"$MEMSCRIBE" record -q -o "$WORK/self_prog" -- "$WORK/self_prog" leaf 1 2>"$WORK/r.err" || rc=$?
[ "$rc" = 1 ] || fail "-o the program: record exited with $rc, expected 1"
grep -q "is the program itself" "$WORK/r.err" || fail "-o the program: message '$(cat "$WORK/r.err")'"
cmp -s "$WORK/self_prog" "$MS_PROGRAMS/col_procs" || fail "-o the program: the program was overwritten"
# A trace that cannot even start (a full disk; a file size limit of 0
# here) leaves no empty file behind.
rc=0
(ulimit -f 0 && exec "$MEMSCRIBE" record -q -o "$WORK/zero.mscr" -- "$MS_PROGRAMS/col_procs" leaf 1) \
    2>"$WORK/r.err" || rc=$?
[ "$rc" = 1 ] || fail "no room for the trace: record exited with $rc, expected 1: $(cat "$WORK/r.err")"
[ ! -e "$WORK/zero.mscr" ] || fail "no room for the trace: an empty trace file was left behind"
# A collector ld.so will not load (here not an ELF file; on an Intel CPU
# before the haswell link, a $PLATFORM path naming nothing): the program runs
# as it would, and record says that nothing was traced, even with -q.
printf 'not a library\n' >"$WORK/libbad.so"
rc=0
MEMSCRIBE_COLLECTOR="$WORK/libbad.so" "$MEMSCRIBE" record -q -o "$WORK/bad.mscr" -- \
    "$MS_PROGRAMS/col_procs" leaf 1 2>"$WORK/r.err" || rc=$?
[ "$rc" = 0 ] || fail "unloadable collector: record exited with $rc, expected the program's 0"
grep -q "no process of $MS_PROGRAMS/col_procs loaded the collector $WORK/libbad.so; the trace is empty" \
    "$WORK/r.err" || fail "unloadable collector: message '$(cat "$WORK/r.err")'"
echo "ok: static, setuid, static interpreter (also after env -S/-i), missing programs, -o the program and no room refused; an unloadable collector reported"
