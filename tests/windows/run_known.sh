#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Record tests/windows/win_prog_known.exe under Wine with memscribe.exe and
# check the trace against what the program printed (check_events.py).
# Then turn it into a memscribe trace (win_trace) and check the trace
# against the interim records (check_trace.py); the trace the launcher
# wrote itself (-t, zlib-coded chunks) must read as the same events.
# Usage: run_known.sh WINE WINDIR WIN_DUMP PREFIX OUTDIR MODE [WIN_TRACE MEMSCRIBE]
#   MODE all:   every call, exit status 7, WINEDEBUG=+heap as an oracle
#   MODE crash: one allocation, then a fault (status c0000005)
set -euo pipefail
wine=$1 windir=$2 dump=$3 prefix=$4 out=$5 mode=$6 win_trace=${7:-} memscribe=${8:-}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/windows/need_wine.sh
source "$(dirname "$0")/need_wine.sh"
need_wine run_known "$wine"
export WINEPREFIX=$prefix
mkdir -p "$out"
trace=$out/$mode.mswin
args=()
want=7
debug=-all
if [ "$mode" = crash ]; then
    args=(crash)
    want=c0000005
else
    debug=+pid,+heap
fi
set +e
WINEDEBUG=$debug "$wine" "$windir/memscribe.exe" record -o "$trace" -t "$out/$mode.launcher.mscr" -- \
    "$windir/win_prog_known.exe" "${args[@]}" >"$out/$mode.expect" 2>"$out/$mode.log"
rc=$?
set -e
# Wine exits with the low 8 bits of the Windows status
if [ $rc -ne $((0x$want & 0xff)) ]; then
    echo "run_known: exit $rc, want $((0x$want & 0xff)) (status 0x$want); log: $out/$mode.log"
    grep -v "trace:heap" "$out/$mode.log" | tail -5
    exit 1
fi
"$dump" "$trace" >"$out/$mode.dump"
oracle=()
[ "$mode" = crash ] || oracle=(--heap-log "$out/$mode.log")
# The program is linked with --build-id: its CodeView record, as objdump reads it
arch=$(basename "$windir")
cv=$("$arch-w64-mingw32-objdump" -p "$windir/win_prog_known.exe" |
     sed -n 's/.*RSDS signature \([0-9a-f]*\) age \([0-9]*\).*/\1 \2/p')
if [ -z "$cv" ]; then
    echo "run_known: $windir/win_prog_known.exe: objdump finds no CodeView record"
    exit 1
fi
read -r cv_sig cv_age <<<"$cv"
python3 "$here/check_events.py" "$out/$mode.expect" "$out/$mode.dump" --exit "$want" \
    --codeview "$cv_sig" "$cv_age" "${oracle[@]}"
[ -n "$win_trace" ] || exit 0
"$win_trace" "$trace" "$out/$mode.mscr"
"$memscribe" dump "$out/$mode.mscr" >"$out/$mode.trace.dump"
python3 "$here/check_trace.py" "$out/$mode.dump" "$out/$mode.trace.dump"
"$memscribe" dump "$out/$mode.launcher.mscr" >"$out/$mode.launcher.dump"
if ! cmp -s "$out/$mode.trace.dump" "$out/$mode.launcher.dump"; then
    echo "run_known: the launcher's trace differs from win_trace's:"
    diff "$out/$mode.trace.dump" "$out/$mode.launcher.dump" | head -5
    exit 1
fi
if ! od -An -tx1 -v "$out/$mode.launcher.mscr" | tr -d ' \n' | grep -q '789c'; then
    echo "run_known: no zlib stream in the launcher's trace"
    exit 1
fi
