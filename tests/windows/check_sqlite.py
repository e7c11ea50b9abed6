#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Check the SQLite export of a Windows trace (docs/export-tables.md, "Windows
traces") against `memscribe dump` of the same trace and against what
win_prog_known.exe printed (its EXPECT lines):
- vm_calls: one row per Windows VM event of the dump, kind by kind, with its
  PAGE_*/MEM_* values; the program's reserve, commit, protect, decommit and
  release with exactly the values it passed;
- mappings/mapping_states: the program's 1 MiB reservation as one mapping
  with exactly the eight reserved/committed periods its calls make;
- heaps: a row per handle (created in the trace or first seen in a block),
  the program's two HeapCreate handles with their times, the destroyed one
  with its destroy time; heap_blocks: each block's heap, as many per heap as
  the dump has blocks started on it.
Usage: check_sqlite.py EXPECT TRACE_DUMP DB"""
import collections
import sqlite3
import sys

VM_KINDS = ("vm_reserve", "vm_commit", "vm_decommit", "vm_release", "vm_protect",
            "section_map", "section_unmap")


def fields(words):
    return dict(w.split("=", 1) for w in words if "=" in w)


def main():
    expect_path, dump_path, db_path = sys.argv[1:]
    errors = []

    def want(what, got, exp):
        if got != exp:
            errors.append("%s: %r, want %r" % (what, got, exp))

    db = sqlite3.connect(db_path)
    q = db.execute

    # vm_calls: the dump's Windows VM events, kind by kind, and their values
    dump_vm = collections.Counter()
    dump_rows = collections.Counter()
    blocks = collections.Counter()
    heap_creates = set()
    images = {}
    for line in open(dump_path):
        w = line.split()
        if len(w) < 5:
            continue
        pid, kind, f = int(w[1]), w[4], fields(w[5:])
        images.setdefault(pid, len(images))
        if kind in VM_KINDS:
            dump_vm[kind] += 1
            dump_rows[(kind, int(f["addr"], 16), int(f["size"]), int(f.get("page", "0"), 16),
                       int(f.get("mem", "0"), 16))] += 1
        elif kind in ("malloc", "realloc") and "failed" not in w:
            blocks[(images[pid], int(f["heap"], 16))] += 1
        elif kind == "heap_create":
            heap_creates.add((images[pid], int(f["heap"], 16)))
    for kind in VM_KINDS:
        want("vm_calls rows of kind " + kind,
             q("SELECT COUNT(*) FROM vm_calls WHERE kind=?", (kind,)).fetchone()[0],
             dump_vm[kind])
    rows = collections.Counter(q("SELECT kind, address, size, COALESCE(page, 0), COALESCE(mem, 0) "
                                 "FROM vm_calls").fetchall())
    want("vm_calls rows as (kind, address, size, page, mem)", rows, dump_rows)

    # The program's calls, with the values it passed
    exp = []
    for line in open(expect_path):
        w = line.split()
        if w and w[0] == "EXPECT":
            exp.append((w[3], {k: int(v, 16) if k != "pid" else int(v)
                               for k, v in fields(w[4:]).items()}))
    vm = [f for k, f in exp if k in ("VM_ALLOC", "VM_FREE", "VM_PROTECT")]
    res, com, prot, dec, rel = vm[0], vm[1], vm[2], vm[3], vm[4]

    def one(sql, args):
        r = q(sql, args).fetchall()
        want("rows for " + sql + " " + repr(args), len(r), 1)
        return r[0] if r else None

    one("SELECT id FROM vm_calls WHERE kind='vm_reserve' AND address=? AND size=? AND page=? "
        "AND mem=? AND size_asked=? AND failed=0 AND origin='call'",
        (res["got"], res["got_size"], res["protect"], res["type"], res["size"]))
    one("SELECT id FROM vm_calls WHERE kind='vm_commit' AND address=? AND size=? AND page=? "
        "AND mem=? AND size_asked=?",
        (com["got"], com["got_size"], com["protect"], com["type"], com["size"]))
    one("SELECT id FROM vm_calls WHERE kind='vm_protect' AND address=? AND size=? AND page=? "
        "AND old_page=?", (prot["got"], prot["got_size"], prot["protect"], prot["old_protect"]))
    one("SELECT id FROM vm_calls WHERE kind='vm_decommit' AND address=? AND size=? AND mem=?",
        (dec["got"], dec["got_size"], dec["type"]))
    one("SELECT id FROM vm_calls WHERE kind='vm_release' AND address=? AND size=? AND mem=?",
        (rel["got"], rel["got_size"], rel["type"]))

    # The reservation as a mapping, and its eight periods
    m = one("SELECT serial, kind, unmap_ns FROM mappings WHERE address=? AND size=? "
            "AND origin='call'", (res["got"], res["got_size"]))
    if m:
        want("the reservation's mapping kind", m[1], "vm_reserve")
        want("the reservation released", m[2] is not None, True)
        lo, hi = res["got"], res["got"] + res["got_size"]
        c0, c1 = com["got"], com["got"] + com["got_size"]
        p1 = prot["got"] + prot["got_size"]
        states = sorted(q("SELECT address, size, state, prot, end_ns IS NOT NULL "
                          "FROM mapping_states WHERE serial=?", (m[0],)).fetchall())
        rw, ro = 3, 1  # PROT_READ|PROT_WRITE, PROT_READ
        want("the reservation's mapping_states", states, sorted([
            (lo, c0 - lo, "reserved", 0, 1),        # before the commit, until the release
            (c0, c1 - c0, "reserved", 0, 1),        # until the commit
            (c0, p1 - c0, "committed", rw, 1),      # until the protect
            (c0, p1 - c0, "committed", ro, 1),      # until the decommit
            (p1, c1 - p1, "committed", rw, 1),      # until the decommit
            (c0, p1 - c0, "reserved", 0, 1),        # decommitted, until the release
            (p1, c1 - p1, "reserved", 0, 1),
            (c1, hi - c1, "reserved", 0, 1),        # after the commit, until the release
        ]))

    # Heaps and the heap of each block
    created = [f["result"] for k, f in exp if k == "HEAP_CREATE"]
    destroyed = [f["heap"] for k, f in exp if k == "HEAP_DESTROY"]
    for h in created:
        r = one("SELECT create_ns IS NOT NULL, destroy_ns IS NOT NULL, stack > 0 FROM heaps "
                "WHERE image=0 AND handle=?", (h,))
        if r:
            want("heap 0x%x: created, destroyed, with a stack" % h, r,
                 (1, int(h in destroyed), 1))
    heaps = set(heap_creates) | set(blocks)
    want("heaps rows", q("SELECT COUNT(*) FROM heaps").fetchone()[0], len(heaps))
    got_blocks = collections.Counter({(i, h): n for i, h, n in q(
        "SELECT a.image, b.heap, COUNT(*) FROM heap_blocks b JOIN allocations a "
        "ON a.serial = b.serial GROUP BY 1, 2").fetchall()})
    want("heap_blocks by (image, heap)", got_blocks, blocks)
    want("allocations without a heap_blocks row",
         q("SELECT COUNT(*) FROM allocations WHERE serial NOT IN "
           "(SELECT serial FROM heap_blocks)").fetchone()[0], 0)

    for e in errors:
        print("check_sqlite:", e)
    print("check_sqlite: %d VM calls, %d heaps, %d blocks: %s" %
          (sum(dump_vm.values()), len(heaps), sum(blocks.values()), "FAIL" if errors else "ok"))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
