#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The first seed's case, for real: a 32-bit Windows program (win_prog_frag.c)
# fills its address space with reservations that are not multiples of the
# 64 KiB allocation granularity, from two sites, releases every other small
# one and then fails a 64 MiB reservation. `memscribe record` traces it
# under wine32; `frag` must name both sites among the misaligned mappings
# with exactly the program's own ledger (blocks live and bytes stranded),
# and the largest free gap must be too small for the 64 MiB.
# Usage: run_frag.sh WINE32 WINDIR PREFIX OUTDIR MEMSCRIBE
set -euo pipefail
wine=$1 windir=$2 prefix=$3 out=$4 memscribe=$5
# shellcheck source=tests/windows/need_wine.sh
source "$(dirname "$0")/need_wine.sh"
need_wine run_frag "$wine"
export WINEPREFIX=$prefix WINEDEBUG=-all
mkdir -p "$out"
# (The program's stdout is a Windows text stream: lines end in CR LF.)
MEMSCRIBE_WINE=$wine "$memscribe" record -q -o "$out/frag.mscr" -- "$windir/win_prog_frag.exe" \
    >"$out/ledger.crlf" 2>"$out/record.err" || {
    echo "run_frag: record exited with $?: $(cat "$out/record.err")"
    exit 1
}
tr -d '\r' <"$out/ledger.crlf" >"$out/ledger"
grep -q '^large 67108864 failed$' "$out/ledger" || {
    echo "run_frag: the address space did not fill: $(cat "$out/ledger")"
    exit 1
}
"$memscribe" frag --top 0 --format json "$out/frag.mscr" >"$out/frag.json" 2>"$out/frag.err"
python3 - "$out/ledger" "$out/frag.json" <<'PY'
import json, sys
ledger = {}
for line in open(sys.argv[1]):
    w = line.split()
    if w[0] == "site":
        ledger[w[1]] = {"live": int(w[3]), "size": int(w[5]), "stranded": int(w[7])}
p = json.load(open(sys.argv[2]))["processes"][0]
assert p["is_32bit"], "frag does not see a 32-bit space"
bad = []
for site, want in ledger.items():
    rows = [m for m in p["misaligned"] if any(f.startswith(site + " ") or f == site for f in m["stack"])]
    if len(rows) != 1:
        bad.append("%s: %d misaligned rows name it (%s)" % (site, len(rows), [m["stack"][:3] for m in rows]))
        continue
    m = rows[0]
    got = (m["count"], m["size"], m["stranded_bytes"])
    exp = (want["live"], want["live"] * want["size"], want["stranded"])
    if got != exp:
        bad.append("%s: frag has count, size, stranded %s; the program's ledger %s" % (site, got, exp))
if p["largest_gap_bytes"] >= 64 << 20:
    bad.append("largest free gap %d would hold the 64 MiB that failed" % p["largest_gap_bytes"])
if bad:
    sys.exit("run_frag: " + "; ".join(bad))
print("run_frag: %s; largest gap %d bytes" % (
    ", ".join("%s %d blocks, %d stranded" % (s, w["live"], w["stranded"]) for s, w in ledger.items()),
    p["largest_gap_bytes"]))
PY
