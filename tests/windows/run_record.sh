#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `memscribe record -- prog.exe` on Linux: the PE program run under wine64
# by the Windows launcher, its records streamed to the Linux recorder while
# it runs (docs/windows.md, "memscribe record on Linux").
# Usage: run_record.sh WINE WINDIR WIN_DUMP PREFIX OUTDIR MODE MEMSCRIBE
#   MODE all:   win_prog_known.exe, every call; exact counts (check_events.py
#               on the launcher's records, kept with MEMSCRIBE_WINE_EVENTS,
#               Wine's +heap log as the oracle), and every one of them in the
#               trace (check_trace.py); the trace is format 1.3 with the PE
#               bit, zstd-coded, in units of 10 us (the default), times never going back; its
#               SQLite export has the Windows tables (check_sqlite.py)
#   MODE crash: one allocation, then an access violation: the trace reads
#               whole, with every record before the fault
#   MODE demo:  the Windows demo: WPA's numbers (check_demo.py); and with
#               --snapshot-every, profiles beside the trace
set -euo pipefail
wine=$1 windir=$2 dump=$3 prefix=$4 out=$5 mode=$6 memscribe=$7
here=$(cd "$(dirname "$0")" && pwd)
export WINEPREFIX=$prefix MEMSCRIBE_WINE=$wine MEMSCRIBE_WINDOWS_DIR=$windir
mkdir -p "$out"
prog=$windir/win_prog_known.exe
args=()
want=7
case $mode in
crash) args=(crash) want=c0000005 ;;
demo) prog=$windir/memtest_demo_win.exe want=0 ;;
esac
name=$mode
[ "$mode" = demo ] && name=demo
# The program is found by its PE header, not its name: a copy without .exe
cp "$prog" "$out/$mode.prog"
if [ "$mode" = crash ]; then
    # What cannot work says so: no Wine, no launcher (exit 1); a Linux-only
    # option (exit 2)
    for bad in "MEMSCRIBE_WINE=$out/no-wine|1|no-wine is missing" \
               "MEMSCRIBE_WINDOWS_DIR=$out/no-dir|1|no-dir/memscribe.exe is missing" \
               "MEMSCRIBE_SAMPLE_SEED=1 --sample=4K|2|--sample is for Linux programs"; do
        IFS='|' read -r setting code text <<<"$bad"
        envs=() opts=()
        for word in $setting; do
            case $word in --*) opts+=("$word") ;; *) envs+=("$word") ;; esac
        done
        set +e
        env "${envs[@]}" "$memscribe" record "${opts[@]}" -o "$out/bad.mscr" -- "$out/$mode.prog" \
            >/dev/null 2>"$out/bad.log"
        rc=$?
        set -e
        if [ $rc -ne "$code" ] || ! grep -qF -- "$text" "$out/bad.log"; then
            echo "run_record: $setting: exit $rc, want $code and '$text':"
            cat "$out/bad.log"
            exit 1
        fi
    done
fi
set +e
MEMSCRIBE_WINE_EVENTS=$out/$name.mswin WINEDEBUG=+pid,+heap \
    "$memscribe" record -o "$out/$name.mscr" -- "$out/$mode.prog" "${args[@]}" \
    >"$out/$name.expect" 2>"$out/$name.log"
rc=$?
set -e
if [ $rc -ne $((0x$want & 0xff)) ]; then
    echo "run_record: exit $rc, want $((0x$want & 0xff)) (status 0x$want); log: $out/$name.log"
    grep -v "trace:heap" "$out/$name.log" | tail -5
    exit 1
fi
grep -q "record: trace written to $out/$name.mscr" "$out/$name.log"
"$memscribe" dump --header "$out/$name.mscr" >"$out/$name.hdump"
grep -v '^#' "$out/$name.hdump" >"$out/$name.dump"
grep -qx '# memscribe trace version 1.3' "$out/$name.hdump" ||
    { echo "run_record: not a format 1.3 trace"; head -3 "$out/$name.hdump"; exit 1; }
grep -qx '# time_unit_ns=10000' "$out/$name.hdump" ||
    { echo "run_record: not in units of 10 us"; exit 1; }
awk 'NR > 1 && $1 < prev { print "run_record: time goes back at line " NR ": " $0; bad = 1 }
     { prev = $1 } END { exit bad }' "$out/$name.dump"
if ! od -An -tx1 -v "$out/$name.mscr" | tr -d ' \n' | grep -q '28b52ffd'; then
    echo "run_record: no zstd frame in the trace"
    exit 1
fi
if [ "$mode" = demo ]; then
    grep -q 'memtest_demo_win: 10 spikes of 10 MB, 20 MB steady, 320 leaked 40-byte nodes' \
        "$out/demo.expect"
    "$memscribe" vmem --format json "$out/demo.mscr" >"$out/vmem.json" 2>/dev/null
    "$memscribe" window --format json --top 0 "$out/demo.mscr" >"$out/window.json" 2>/dev/null
    python3 "$here/check_demo.py" "$out" "$memscribe"
    # --snapshot-every works for a Windows program as for a Linux one (the
    # recording session's tap): profiles while it runs, the trace beside them
    rm -rf "$out/snap"
    "$memscribe" record -q --snapshot-every 20ms -o "$out/snap" -- "$out/$mode.prog" \
        >/dev/null 2>"$out/snap.log" || { echo "run_record: --snapshot-every: exit $?"; exit 1; }
    "$memscribe" dump "$out/snap/trace.mscr" >/dev/null 2>>"$out/snap.log"
    if ! compgen -G "$out/snap/heap.*.pb.gz" >/dev/null || [ -s "$out/snap.log" ]; then
        echo "run_record: --snapshot-every wrote no profile or said something:"
        ls "$out/snap"
        cat "$out/snap.log"
        exit 1
    fi
    # --aggregate works for a Windows program as for a Linux one (the
    # merge's one path): report's totals are the exact recording's (its
    # output to a file too: the C runtime buffers a file, not /dev/null)
    "$memscribe" record -q --aggregate=10ms -o "$out/agg.mscr" -- "$out/$mode.prog" \
        >"$out/agg.expect" 2>"$out/agg.log" || { echo "run_record: --aggregate: exit $?"; exit 1; }
    for t in demo agg; do
        "$memscribe" report --format=json "$out/$t.mscr" 2>/dev/null |
            python3 -c 'import json, sys; t = json.load(sys.stdin)["total"]
print(" ".join(str(t[k]) for k in ("allocations", "allocated_bytes", "frees", "peak_bytes",
      "leaked_bytes", "leaked_blocks", "temporary", "temporary_bytes")))' >"$out/$t.totals"
    done
    if ! cmp -s "$out/demo.totals" "$out/agg.totals"; then
        echo "run_record: --aggregate's totals differ from the exact recording's:"
        cat "$out/demo.totals" "$out/agg.totals"
        exit 1
    fi
    # --keep-last too: the whole run's totals are the exact recording's, and the
    # latest segment (a trace of its own, what was live carried in) ends with the
    # whole run's leaks (docs/aggregate.md, "Flight recorder")
    rm -rf "$out/keep.mscr" "$out/keep.mscr.last"
    "$memscribe" record -q --keep-last 200ms --aggregate=10ms -o "$out/keep.mscr" -- \
        "$out/$mode.prog" >"$out/keep.expect" 2>"$out/keep.log" ||
        { echo "run_record: --keep-last: exit $?"; exit 1; }
    last=$(find "$out/keep.mscr.last" -name 'seg-*.mscr' | sort | tail -1)
    for t in keep "keep.mscr.last/$(basename "$last" .mscr)"; do
        "$memscribe" report --format=json "$out/$t.mscr" 2>/dev/null |
            python3 -c 'import json, sys; t = json.load(sys.stdin)["total"]
print(" ".join(str(t[k]) for k in ("allocations", "allocated_bytes", "frees", "peak_bytes",
      "leaked_bytes", "leaked_blocks", "temporary", "temporary_bytes")))' >"$out/$t.totals"
    done
    leaks() { cut -d' ' -f5,6 "$1"; }
    if ! cmp -s "$out/demo.totals" "$out/keep.totals" ||
        [ "$(leaks "$out/keep.totals")" != "$(leaks "${last%.mscr}.totals")" ]; then
        echo "run_record: --keep-last's totals or its latest segment's leaks differ:"
        cat "$out/demo.totals" "$out/keep.totals" "${last%.mscr}.totals"
        exit 1
    fi
    exit 0
fi
"$dump" "$out/$name.mswin" >"$out/$name.wdump"
oracle=()
[ "$mode" = crash ] || oracle=(--heap-log "$out/$name.log")
arch=$(basename "$windir")
cv=$("$arch-w64-mingw32-objdump" -p "$prog" |
     sed -n 's/.*RSDS signature \([0-9a-f]*\) age \([0-9]*\).*/\1 \2/p')
read -r cv_sig cv_age <<<"$cv"
python3 "$here/check_events.py" "$out/$name.expect" "$out/$name.wdump" --exit "$want" \
    --codeview "$cv_sig" "$cv_age" "${oracle[@]}"
python3 "$here/check_trace.py" "$out/$name.wdump" "$out/$name.dump"
# The child's parent comes with its own records (streamed, not looked up
# after the run)
if [ "$mode" = all ] && ! grep -q '^# image 1 pid=[0-9]* ppid=[1-9][0-9]* how=createprocess' \
    "$out/$name.hdump"; then
    echo "run_record: the child's image names no parent"
    grep '^# image' "$out/$name.hdump"
    exit 1
fi
# The SQLite export: the Windows VM calls with MEM_*/PAGE_*, the heaps by
# handle, each block's heap (check_sqlite.py)
if [ "$mode" = all ]; then
    rm -f "$out/$name.db"
    "$memscribe" export --to sqlite -o "$out/$name.db" "$out/$name.mscr" 2>/dev/null
    python3 "$here/check_sqlite.py" "$out/$name.expect" "$out/$name.dump" "$out/$name.db"
fi
