#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The analysis commands on a Windows program's trace (format 1.2, the
# golden file tests/golden/v1_2_windows.mscr; docs/windows.md): heap
# handles as WPA's Handle column (window --by heap), the blocks of a
# destroyed heap ended with it, Windows reserve/commit/decommit/release in
# vmem's commit lifetimes, their classes in a window (AIFI ... AOFO) and
# reserved-vs-committed totals, a view not aligned to 64 KiB in frag; --by
# heap refused on a Linux trace.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" windows-golden MEMSCRIBE MS_SOURCE
g=$MS_SOURCE/tests/golden/v1_2_windows.mscr
tmp=$WORK
trap 'echo "windows_golden: FAIL at line $LINENO" >&2' ERR

# Heap 0x5a0000: a 40-byte block reallocated in place to 60 and freed (two
# transient blocks, 100 bytes); heap 0x17c0000: one block of 100 bytes
# ended by HeapDestroy.
"$MEMSCRIBE" window --by heap --format json "$g" >"$tmp/w.json"
python3 - "$tmp/w.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rows = {(r["heap"], r["impacting_type"]): (r["count"], r["size"], r["impacting_size"])
        for r in d["rows"]}
want = {("0x5a0000", "Transient"): (2, 100, 0), ("0x17c0000", "Transient"): (1, 100, 0)}
assert rows == want, rows
p = d["processes"][0]
assert (p["aifi"], p["aifo"], p["aofi"]) == (3, 0, 0), p
PY
grep -q '^100  Transient      2   100               0  0x5a0000$' <("$MEMSCRIBE" window --by heap "$g")

# Nothing leaks: the destroyed heap's block is freed with it.
grep -q '0 bytes in 0 blocks' <("$MEMSCRIBE" leaks "$g")
"$MEMSCRIBE" report "$g" >"$tmp/report"
# The free HeapDestroy makes is no call: the program called free once.
grep -q 'calls: *malloc 2, realloc 1, free 1, heap_create 1, heap_destroy 1, vm_reserve 1, vm_commit 2, vm_decommit 1, vm_release 1, vm_protect 1, section_map 1, section_unmap 1' "$tmp/report" ||
    { grep calls "$tmp/report"; false; }
# The executable's image mapped when the stream began is a snapshot, not a call.
grep -q '^  mapped at start:    1 ranges (a snapshot, not calls)$' "$tmp/report"

# vmem: the 8 KiB commit at 2200 ns, decommitted at 2500 (the protect of
# its first page splits it in two); 1 MiB reserved of which 8 KiB
# committed at 2320 ns.
"$MEMSCRIBE" vmem --format json "$g" >"$tmp/v.json" 2>/dev/null
python3 - "$tmp/v.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
lives = sorted((l["range"], l["commit_ns"], l["decommit_ns"], l["charge"])
               for l in d["lifetimes"] if l["range"].startswith("0x1cd"))
assert lives == [("0x1cd0000-0x1cd1000", 2200, "2500", "no"),
                 ("0x1cd1000-0x1cd2000", 2200, "2500", "yes")], lives
t = [s for s in d["totals"] if s["time_ns"] == 2320]
assert t and t[0]["reserved_bytes"] == 0x100000 - 0x2000 and t[0]["committed_bytes"] == 0x2000 + 0x2d000, t
PY
# WPA's Impacting Type of commit lifetimes, as window's of heap blocks: over
# the trace every lifetime is AIFI (Transient); in [2300, 2600] ns the 8 KiB
# commit (made at 2200, decommitted at 2500) is AOFI: one Impacting group,
# Count 2 (its two parts), Size 0 (nothing committed inside), Impacting
# Size -8192.
"$MEMSCRIBE" vmem --format json --from 2300ns --to 2600ns "$g" >"$tmp/vw.json" 2>/dev/null
python3 - "$tmp/v.json" "$tmp/vw.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert [(l["impacting_type"], l["class"]) for l in d["lifetimes"]] == [("Transient", "AIFI")] * 3, d["lifetimes"]
p = d["processes"]
assert [(x["pid"], x["aifi"], x["aifi_bytes"], x["aifo"], x["aofi"], x["aofo"], x["impacting_size"])
        for x in p] == [(100, 3, 77824, 0, 0, 0, 0)], p
w = json.load(open(sys.argv[2]))
g = [(x["impacting_type"], x["count"], x["size"], x["impacting_size"]) for x in w["groups"]]
assert g == [("Impacting", 2, 0, -8192)], g
assert sorted((l["range"], l["class"], l["impacting_size"]) for l in w["lifetimes"]) == [
    ("0x1cd0000-0x1cd1000", "AOFI", -4096), ("0x1cd1000-0x1cd2000", "AOFI", -4096)], w["lifetimes"]
p = w["processes"][0]
assert (p["aifi"], p["aifo"], p["aofi"], p["aofi_bytes"], p["aofo"], p["impacting_size"]) == \
    (0, 0, 2, 8192, 0, -8192), p
PY

# frag while the view of 0x11000 bytes is mapped: not a multiple of 64 KiB,
# 0xf000 bytes stranded beside it, made by stack 3.
"$MEMSCRIBE" frag --at 2750ns "$g" 2>/dev/null >"$tmp/frag"
grep -Eq '^ +1 +69632 +61440 +call ' "$tmp/frag" || { cat "$tmp/frag"; false; }

# --by heap needs heap handles
if "$MEMSCRIBE" window --by heap "$MS_SOURCE/tests/golden/v1_1.mscr" >"$tmp/out" 2>"$tmp/err"; then
    echo "window --by heap on a Linux trace succeeded"; exit 1
fi
grep -q 'needs a trace of a Windows program' "$tmp/err"
echo "windows_golden: ok"
