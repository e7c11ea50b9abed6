#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The collector holds no descriptor the program can see (libunwind's
# old memory-validation pipe sat on 3 and 4): a program that closes
# every descriptor from 3 up (close_range, and a close() loop) and reopens
# its input on 3 and its output on 4 copies its input intact while new
# call sites are unwound, and open() gives it the same numbers traced as
# untraced.
source "$(dirname "$0")/record_lib.sh"

seq 1 20000 >"$WORK/in"
for how in range loop; do
    "$MS_PROGRAMS/col_fds" "$WORK/in" "$WORK/plain.out" $how >"$WORK/plain.txt" ||
        fail "col_fds $how untraced exited with $?"
    cmp -s "$WORK/in" "$WORK/plain.out" || fail "col_fds $how: untraced copy differs"
    grep -q "^in=3 out=4 next=5 " "$WORK/plain.txt" || fail "col_fds $how untraced: $(cat "$WORK/plain.txt")"
    "$MEMSCRIBE" record -q -o "$WORK/t.mscr" -- "$MS_PROGRAMS/col_fds" "$WORK/in" "$WORK/traced.out" $how \
        >"$WORK/traced.txt" || fail "record col_fds $how exited with $?"
    cmp "$WORK/in" "$WORK/traced.out" || fail "col_fds $how: the traced copy differs from the input"
    ms_compare "$WORK/plain.txt" "$WORK/traced.txt"
done
# Without closing anything, the first open() of a traced program gets the
# number it gets untraced.
first() { "$@" python3 -c 'import os; print(os.open("/dev/null", os.O_RDONLY))'; }
plain=$(first env)
traced=$(first "$MEMSCRIBE" record -q -o "$WORK/p.mscr" --)
[ "$plain" = "$traced" ] || fail "open() gave $traced traced, $plain untraced"
echo "ok: input intact on fds 3/4 after close_range and a close loop; open() numbers unchanged ($plain)"
