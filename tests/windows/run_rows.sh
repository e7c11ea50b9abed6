#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Rows that reach the user's code in a Windows program (issue 59, item 2;
# docs/symbols.md, "The frame of interest"): win_prog_snap.exe's
# commit_big() reserves and commits 16 MiB through kernelbase's
# VirtualAlloc; recorded under wine64 by `memscribe record`, vmem's
# lifetime row of that region (one frame in text) names commit_big, not
# Wine's VirtualAllocEx (before: "VirtualAllocEx (memory.c:353) < ... 7
# more"), and its JSON "interest" points at commit_big; no text row of
# vmem, report or tree holds the entry chain (mingw's __tmainCRTStartup,
# Wine's BaseThreadInitThunk, RtlUserThreadStart).
# Usage: run_rows.sh WINE WINDIR PREFIX OUTDIR MEMSCRIBE
set -euo pipefail
wine=$1 windir=$2 prefix=$3 out=$4 memscribe=$5
# shellcheck source=tests/windows/need_wine.sh
source "$(dirname "$0")/need_wine.sh"
need_wine run_rows "$wine"
export WINEPREFIX=$prefix MEMSCRIBE_WINE=$wine MEMSCRIBE_WINDOWS_DIR=$windir WINEDEBUG=-all
rm -rf "$out"
mkdir -p "$out"
"$memscribe" record -q -o "$out/rows.mscr" -- "$windir/win_prog_snap.exe" >"$out/rows.crlf" 2>"$out/record.err" ||
    { echo "run_rows: record exited with $?: $(tail -5 "$out/record.err")"; exit 1; }
# (The program's stdout is a Windows text stream: lines end in CR LF.)
read -r base size < <(tr -d '\r' <"$out/rows.crlf" | awk '$1 == "COMMIT_BIG" { print $2, $3 }')
[ -n "${size:-}" ] || { echo "run_rows: no COMMIT_BIG line: $(cat "$out/rows.crlf")"; exit 1; }
range=$(printf '0x%x-0x%x' "$((16#$base))" "$((16#$base + size))")
"$memscribe" vmem --top 0 --rows 0 "$out/rows.mscr" >"$out/vmem.txt" 2>"$out/vmem.err"
row=$(awk -v r="$range" '$2 == r' "$out/vmem.txt")
[ -n "$row" ] || { echo "run_rows: no lifetime row of $range in vmem:"; cat "$out/vmem.txt"; exit 1; }
case $row in
*"commit_big (win_prog_snap.c:"*) echo "ok: vmem's lifetime row of $range: ${row##*call    }" ;;
*) echo "run_rows: vmem's lifetime row of $range does not name commit_big: $row"; exit 1 ;;
esac
"$memscribe" vmem --top 0 --rows 0 --format=json "$out/rows.mscr" >"$out/vmem.json" 2>/dev/null
python3 - "$out/vmem.json" "$range" <<'PY'
import json, sys
lt = [l for l in json.load(open(sys.argv[1]))["lifetimes"] if l["range"] == sys.argv[2]]
assert len(lt) == 1, lt
l = lt[0]
assert l["stack"][l["interest"]].startswith("commit_big "), (l["interest"], l["stack"])
assert any("RtlUserThreadStart" in f for f in l["stack"]), "JSON keeps the whole stack: %s" % l["stack"]
print("ok: JSON keeps the whole stack (%d frames), interest %d is commit_big" % (len(l["stack"]), l["interest"]))
PY
for cmd in "vmem --top 0" "report --top 0" "tree --depth 0"; do
    # shellcheck disable=SC2086
    "$memscribe" $cmd "$out/rows.mscr" >"$out/cmd.txt" 2>/dev/null
    if grep -E '__tmainCRTStartup|mainCRTStartup|BaseThreadInitThunk|RtlUserThreadStart' "$out/cmd.txt"; then
        echo "run_rows: $cmd: rows hold the entry chain (above)"
        exit 1
    fi
done
echo "run_rows: ok"
