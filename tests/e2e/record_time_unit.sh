#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# record --time-unit (docs/record.md, docs/format.md "Time unit"): the
# default keeps units of 10 us, the trace's header saying so; us keeps whole
# microseconds, ns nanoseconds, 250ns rounds to 250 ns; every unit records
# the same calls in the same order. A bad unit is a usage error.
source "$(dirname "$0")/record_lib.sh"

# $1: trace, $2: the unit's ns. Every event time (seconds.9 digits) is a
# multiple of the unit.
times_in_unit() {
    "$MEMSCRIBE" dump "$1" | awk -v u="$2" '{
        split($1, t, "."); ns = t[1] * 1000000000 + t[2]
        if (ns % u) { print "time " $1 " is not a multiple of " u " ns"; bad = 1; exit }
    } END { exit bad }' || fail "$1: times not in units of $2 ns"
}

for unit in default ns us 250ns; do
    opt=()
    [ "$unit" = default ] || opt=(--time-unit "$unit")
    "$MEMSCRIBE" record -q "${opt[@]}" -o "$WORK/$unit.mscr" -- "$MS_PROGRAMS/col_calls" \
        >"$WORK/expected" || fail "record ${opt[*]} exited with $?"
    ms_dump_ok "$WORK/$unit.mscr"
    pid=$(awk '$5 == "process_start" { print $2; exit }' "$WORK/dump.txt")
    ms_calls "$WORK/$unit.mscr" "$pid" | ms_between_marks >"$WORK/actual"
    ms_compare "$WORK/expected" "$WORK/actual"
    "$MEMSCRIBE" dump --header "$WORK/$unit.mscr" | grep '^#' >"$WORK/$unit.hdr"
    grep -qx '# memscribe trace version 1.7' "$WORK/$unit.hdr" ||
        fail "$unit: not a format 1.7 trace: $(head -1 "$WORK/$unit.hdr")"
done
grep -qx '# time_unit_ns=10000' "$WORK/default.hdr" || fail "default: no time_unit_ns=10000 line"
grep -qx '# time_unit_ns=1000' "$WORK/us.hdr" || fail "us: no time_unit_ns=1000 line"
grep -qx '# time_unit_ns=250' "$WORK/250ns.hdr" || fail "250ns: no time_unit_ns=250 line"
! grep -q 'time_unit_ns' "$WORK/ns.hdr" || fail "ns: a time unit line in the header"
times_in_unit "$WORK/default.mscr" 10000
times_in_unit "$WORK/us.mscr" 1000
times_in_unit "$WORK/250ns.mscr" 250
# In ns, times are not all whole microseconds (col_calls makes dozens of calls).
if "$MEMSCRIBE" dump "$WORK/ns.mscr" | awk '{ split($1, t, "."); if (t[2] % 1000) n++ } END { exit !(n > 0) }'; then
    :
else
    fail "ns: every time is a whole microsecond"
fi

for bad in 0us 2s 1001ms fast us10 ""; do
    rc=0
    "$MEMSCRIBE" record -q --time-unit "$bad" -o "$WORK/bad.mscr" -- true 2>"$WORK/err" || rc=$?
    [ "$rc" = 2 ] || fail "--time-unit '$bad' exited with $rc, not 2"
    grep -q -- "--time-unit wants" "$WORK/err" || fail "--time-unit '$bad': $(cat "$WORK/err")"
done
echo "ok: default 10 us, ns, us and 250ns record the same calls, times in their units; bad units refused"
