#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A program shorter than the recorder's 10 ms calibration of the TSC
# (src/recorder/rec_clock.c): the recorder takes its line at once when the
# whole tree has ended, instead of waiting out the 10 ms, and the times it
# converts with that short line are still right: `sleep 0.004` lives at
# least 4 ms in the trace, and not wildly more (a wrong rate would scale
# it), with the TSC forced and with the default clock.
source "$(dirname "$0")/record_lib.sh"

for clock in tsc default; do
    env=()
    [ "$clock" = default ] || env=("MEMSCRIBE_CLOCK=$clock")
    env "${env[@]}" "$MEMSCRIBE" record -q --time-unit ns -o "$WORK/$clock.mscr" -- sleep 0.004 ||
        fail "$clock: record exited with $?"
    ms_dump_ok "$WORK/$clock.mscr"
    awk -v c="$clock" '
        function ns(t,  p) { split(t, p, "."); return p[1] * 1000000000 + p[2] }
        $5 == "process_start" { s = ns($1) }
        $5 == "process_exit" { e = ns($1) }
        END {
            if (s == "" || e == "") { print c ": no process_start or process_exit"; exit 1 }
            if (e - s < 4000000 || e - s > 500000000) {
                print c ": sleep 0.004 lived " (e - s) " ns in the trace"; exit 1
            }
        }' "$WORK/dump.txt" || fail "$clock: the process's times are wrong"
done
echo "record_short: a program shorter than the calibration is timed right"
