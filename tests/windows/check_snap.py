#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The address space at start (run_snap.sh). win_prog_snap.exe printed what
its TLS callback made before the collector was loaded, and its stack:
- the interim file has REGION records for them and no VM_ALLOC (the hooks
  did not see the calls);
- the trace has them as snapshot events: the TLS reservation (3 MiB + 64
  KiB) and its 12 KiB commit, the page, the stack's reservation holding the
  local; the collector's shared memory (4 KiB + 64 x 64 KiB) flagged
  collector; the traced release of the TLS region;
- vmem: the TLS commit's snapshot lifetime ends at that release; the stack's
  lasts; across the release, reserved drops by 3 MiB + 52 KiB and committed
  by 12 KiB, exactly;
- a PAGE_NOACCESS commit by main is committed (not reserved) and has a
  commit lifetime;
- frag at the end: the snapshot mappings not aligned to 64 KiB are exactly
  those the REGION and MODULE records give (count and stranded bytes), the
  TLS page among them.
Usage: check_snap.py OUTDIR MEMSCRIBE"""
import json
import re
import subprocess
import sys

errors = []
GRAN = 0x10000
SHM = 4096 + 64 * 65536  # win_rec.h: WIN_SHM_HEAD_SIZE + WIN_SHM_NR_SEGS x WIN_SHM_SEG_SIZE


def expect(what, got, want):
    if got != want:
        errors.append(f"{what}: {got!r}, want {want!r}")


def fields(line):
    return {k: v for k, v in re.findall(r"(\w+)=(\S+)", line)}


def run(memscribe, *args):
    return subprocess.run([memscribe, *args], check=True, capture_output=True, text=True).stdout


def main():
    out, memscribe = sys.argv[1:]
    made = {}
    for line in open(f"{out}/snap.out"):
        w = line.split()
        made[w[0]] = (int(w[1], 16), int(w[2], 16))
    tls, tls_size = made["TLS_RESERVE"]
    commit, commit_size = made["TLS_COMMIT"]
    small, small_size = made["TLS_SMALL"]
    stack, local = made["STACK"]

    # interim records
    recs = [l for l in open(f"{out}/snap.records")]
    regions = [fields(l) for l in recs if " REGION " in l]
    first = [r for r in regions if int(r["alloc_size"], 16)]
    expect("REGION of the TLS reservation",
           [(int(r["alloc_size"], 16), r["type"]) for r in first if int(r["base"], 16) == tls],
           [(tls_size, "0x20000")])
    expect("REGION of the TLS commit",
           [(int(r["size"], 16), r["state"], r["protect"]) for r in regions
            if int(r["base"], 16) == commit], [(commit_size, "0x1000", "0x4")])
    expect("REGION of the TLS page",
           [(int(r["alloc_size"], 16), r["state"]) for r in first if int(r["base"], 16) == small],
           [(small_size, "0x1000")])
    expect("REGION of the stack holding the local",
           [int(r["base"], 16) <= local < int(r["base"], 16) + int(r["alloc_size"], 16)
            for r in first if int(r["base"], 16) == stack], [True])
    seen = [l for l in recs if " VM_ALLOC " in l and int(fields(l)["got"], 16) in (tls, small)]
    expect("VM_ALLOC records of the TLS callback's calls (made before the hooks)", seen, [])

    # the trace
    dump = [l for l in open(f"{out}/snap.dump")]
    snap = [l for l in dump if "origin=snapshot" in l]

    def at(lines, kind, addr):
        return [fields(l) for l in lines if f" {kind} " in l and f"addr={addr:#x} " in l]

    expect("snapshot vm_reserve of the TLS region", [f["size"] for f in at(snap, "vm_reserve", tls)],
           [str(tls_size)])
    expect("snapshot vm_commit in it", [(f["size"], f["page"]) for f in at(snap, "vm_commit", commit)],
           [(str(commit_size), "0x4")])
    expect("snapshot vm_reserve of the page", [f["size"] for f in at(snap, "vm_reserve", small)],
           [str(small_size)])
    expect("snapshot vm_reserve of the stack",
           [stack <= local < stack + int(f["size"]) for f in at(snap, "vm_reserve", stack)], [True])
    own = [fields(l)["size"] for l in snap if " collector " in l and " section_map " in l]
    expect("the collector's shared memory, flagged", own, [str(SHM)])
    rel = [l for l in dump if " vm_release " in l and f"addr={tls:#x} " in l]
    expect("the traced release of the TLS region", len(rel), 1)
    t_rel = int(round(float(rel[0].split()[0]) * 1e9)) if rel else 0

    # vmem: snapshot lifetimes, totals across the release
    j = json.loads(run(memscribe, "vmem", "--format", "json", "--origin", "snapshot", "--top", "0",
                       "--rows", "0", f"{out}/snap.mscr"))
    lt = [l for l in j["lifetimes"] if l["range"] == f"{commit:#x}-{commit + commit_size:#x}"]
    expect("snapshot lifetime of the TLS commit", [(l["size"], l["decommit_ns"]) for l in lt],
           [(commit_size, str(t_rel))])
    lt = [l for l in j["lifetimes"]
          if int(l["range"].split("-")[0], 16) <= local < int(l["range"].split("-")[1], 16)]
    expect("snapshot lifetime holding the stack's local", [l["decommit_ns"] for l in lt], ["-"])

    def totals(t):
        j = json.loads(run(memscribe, "vmem", "--format", "json", "--to", f"{t}ns", "--intervals",
                           "1", f"{out}/snap.mscr"))
        return j["totals"][-1]

    before, after = totals(t_rel - 1), totals(t_rel)
    expect("reserved freed by the release", before["reserved_bytes"] - after["reserved_bytes"],
           tls_size - commit_size)
    expect("committed freed by the release", before["committed_bytes"] - after["committed_bytes"], commit_size)

    # a PAGE_NOACCESS commit counts as committed, not reserved, with a lifetime
    na, na_size = made["CALL_NOACCESS"]
    com = [l for l in dump if " vm_commit " in l and f"addr={na:#x} " in l]
    expect("the traced PAGE_NOACCESS commit", [fields(l)["page"] for l in com], ["0x1"])
    t_c = int(round(float(com[0].split()[0]) * 1e9)) if com else 0
    before, after = totals(t_c - 1), totals(t_c)
    expect("PAGE_NOACCESS commit: committed", after["committed_bytes"] - before["committed_bytes"], na_size)
    expect("PAGE_NOACCESS commit: reserved", after["reserved_bytes"] - before["reserved_bytes"], -na_size)
    expect("PAGE_NOACCESS commit: commit charge", after["commit_charge_bytes"] - before["commit_charge_bytes"],
           0)
    j = json.loads(run(memscribe, "vmem", "--format", "json", "--top", "0", "--rows", "0",
                       f"{out}/snap.mscr"))
    expect("PAGE_NOACCESS commit lifetime",
           [(l["commit_ns"], l["size"]) for l in j["lifetimes"]
            if l["range"] == f"{na:#x}-{na + na_size:#x}"], [(t_c, na_size)])

    # frag at the end: snapshot mappings not aligned to 64 KiB, from the
    # records: the free bytes beside each, up to the granule boundaries or
    # the next mapping (every mapping live at the end counts as a neighbour)
    live, snapshot = {}, set()
    for r in first:
        base = int(r["base"], 16)
        live[base] = int(r["alloc_size"], 16)
        if not int(r["type"], 16) & 1:  # not the collector's
            snapshot.add(base)
    for l in recs:
        f = fields(l)
        if " MODULE " in l:
            live[int(f["base"], 16)] = int(f["size"], 16)
            snapshot.add(int(f["base"], 16))
        elif (" VM_ALLOC " in l and int(f["type"], 16) & 0x2000 or " MAP_VIEW " in l) \
                and f["status"] == "0x0":
            live[int(f["got"], 16)] = int(f["got_size"], 16)
        elif " VM_FREE " in l and f["type"] == "0x8000" and f["status"] == "0x0":
            live.pop(int(f["got"], 16), None)
        elif " UNMAP_VIEW " in l and f["status"] == "0x0":
            live.pop(int(f["base"], 16), None)
    maps = sorted(live.items())
    count = stranded = 0
    for i, (lo, size) in enumerate(maps):
        hi = lo + size
        if lo not in snapshot or (lo % GRAN == 0 and size % GRAN == 0):
            continue
        prev_hi = maps[i - 1][0] + maps[i - 1][1] if i else lo
        next_lo = maps[i + 1][0] if i + 1 < len(maps) else hi
        count += 1
        stranded += min(lo % GRAN, lo - prev_hi) + min(-hi % GRAN, next_lo - hi)
    want = (count, stranded)
    expect("the TLS page is a snapshot mapping not aligned",
           small in snapshot and live.get(small) == small_size, True)
    j = json.loads(run(memscribe, "frag", "--format", "json", "--top", "0", f"{out}/snap.mscr"))
    rows = [m for p in j["processes"] for m in p["misaligned"] if m["origin"] == "snapshot"]
    expect("frag: snapshot mappings not aligned, stranded bytes",
           [(m["count"], m["stranded_bytes"]) for m in rows], [want])

    for e in errors:
        print("check_snap:", e)
    sys.exit(1 if errors else 0)


main()
