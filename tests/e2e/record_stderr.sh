#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The collector's messages never land on the program's fd 2, which may be
# a data file: the recorder prints them instead.
source "$(dirname "$0")/record_lib.sh"

"$MEMSCRIBE" record -q -o "$WORK/t.mscr" -- "$MS_PROGRAMS/col_stderr" "$WORK/data" 40 \
    2>"$WORK/err" || fail "record exited with $?: $(cat "$WORK/err")"
[ "$(cat "$WORK/data")" = "data line" ] ||
    fail "the program's data file holds more than its own line: $(cat -A "$WORK/data")"
grep -q "^memscribe: collector: cannot add a ring segment; .*: EFBIG (pid [0-9]*)$" "$WORK/err" ||
    fail "record did not pass on the collector's message: $(cat "$WORK/err")"
ms_dump_ok "$WORK/t.mscr"
echo "ok: the collector's message went to the recorder, not into the program's data"
