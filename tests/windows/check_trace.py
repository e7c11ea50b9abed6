#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Check a memscribe trace made by win_trace against the interim records it
came from (docs/windows.md, "The trace"): `memscribe dump` of the trace
must hold, per process, exactly the events the win_dump lines ask for
(heap calls of depth 0 with heap handle and flags, reserve/commit/decommit/
release, protect, views, modules, processes), and a free for each block
still live in a destroyed heap. win_dump's lines are themselves checked
against the program and Wine's heap log by check_events.py.
Usage: check_trace.py WIN_DUMP TRACE_DUMP"""
import collections
import sys

MEM_COMMIT, MEM_RESERVE, MEM_DECOMMIT, MEM_RELEASE = 0x1000, 0x2000, 0x4000, 0x8000
MEM_MAPPED = 0x40000


def fields(words):
    return dict(w.split("=", 1) for w in words if "=" in w)


def h(v):
    return int(v, 16)


def expected(win_dump):
    """The trace events, as (pid, kind, key) tuples, in a Counter."""
    want = collections.Counter()
    live = {}  # (pid, addr) -> heap
    views = {}
    for line in open(win_dump):
        head = line.split(" | ")[0].split()
        pid, kind, f = int(head[0]), head[3], fields(head[4:])
        if kind.startswith("HEAP_") and kind != "HEAP_CREATE" and kind != "HEAP_DESTROY":
            if h(f["depth"]):
                continue
        if kind == "HEAP_ALLOC":
            want[(pid, "malloc", h(f["result"]), h(f["size"]), h(f["heap"]), h(f["flags"]))] += 1
            if h(f["result"]):
                live[(pid, h(f["result"]))] = h(f["heap"])
        elif kind == "HEAP_REALLOC":
            want[(pid, "realloc", h(f["result"]), h(f["size"]), h(f["heap"]), h(f["flags"]))] += 1
            if h(f["result"]):
                live.pop((pid, h(f["ptr"])), None)
                live[(pid, h(f["result"]))] = h(f["heap"])
        elif kind == "HEAP_FREE":
            want[(pid, "free", h(f["ptr"]), h(f["heap"]), h(f["flags"]))] += 1
            live.pop((pid, h(f["ptr"])), None)
        elif kind == "HEAP_CREATE":
            want[(pid, "heap_create", h(f["result"]), h(f["reserve"]))] += 1
        elif kind == "HEAP_DESTROY":
            want[(pid, "heap_destroy", h(f["heap"]))] += 1
            if not h(f["result"]):
                for key in [k for k, v in live.items() if k[0] == pid and v == h(f["heap"])]:
                    want[(pid, "free-destroyed", key[1], h(f["heap"]))] += 1
                    del live[key]
        elif kind in ("VM_ALLOC", "VM_FREE", "VM_PROTECT", "MAP_VIEW"):
            if h(f["status"]) & 0x80000000:
                continue  # failed calls: checked by kind counts below
            rng = (h(f["got"]), h(f["got_size"]))
            t = h(f.get("type", "0"))
            if kind == "VM_ALLOC" and t & MEM_RESERVE:
                want[(pid, "vm_reserve") + rng] += 1
            if kind == "VM_ALLOC" and t & (MEM_COMMIT | MEM_RESERVE) == MEM_COMMIT | MEM_RESERVE:
                want[(pid, "vm_commit") + rng] += 1
            elif kind == "VM_ALLOC" and t & MEM_COMMIT:
                want[(pid, "vm_commit") + rng] += 1
            if kind == "VM_FREE":
                want[(pid, "vm_release" if t & MEM_RELEASE else "vm_decommit") + rng] += 1
            if kind == "VM_PROTECT":
                want[(pid, "vm_protect") + rng] += 1
            if kind == "MAP_VIEW":
                want[(pid, "section_map") + rng] += 1
                views[(pid, rng[0])] = rng[1]
        elif kind == "UNMAP_VIEW" and not h(f["status"]) & 0x80000000:
            want[(pid, "section_unmap", h(f["base"]), views.pop((pid, h(f["base"])), 0))] += 1
        elif kind == "MODULE":
            want[(pid, "module_load", h(f["base"]))] += 1
            if (pid, h(f["base"])) not in views:  # loaded before the hooks
                want[(pid, "section_map", h(f["base"]), h(f["size"]))] += 1
                views[(pid, h(f["base"]))] = h(f["size"])
        elif kind == "REGION":  # in use before the hooks: origin snapshot
            if h(f["type"]) & ~1 == MEM_MAPPED:
                if h(f["alloc_size"]):
                    want[(pid, "section_map", h(f["base"]), h(f["alloc_size"]))] += 1
                    views[(pid, h(f["base"]))] = h(f["alloc_size"])
                continue
            if h(f["alloc_size"]):
                want[(pid, "vm_reserve", h(f["base"]), h(f["alloc_size"]))] += 1
            if h(f["state"]) == MEM_COMMIT:
                want[(pid, "vm_commit", h(f["base"]), h(f["size"]))] += 1
        elif kind == "PROCESS":
            want[(pid, "process_start")] += 1
        elif kind == "EXIT":
            want[(pid, "process_exit", h(f["status"]))] += 1
    return want


def got(trace_dump):
    have = collections.Counter()
    heaps = collections.Counter()
    for line in open(trace_dump):
        if line.startswith("#"):
            continue
        w = line.split()
        pid, kind, f = int(w[1]), w[4], fields(w[5:])
        if "heap" in f and kind in ("malloc", "realloc", "free") and "heap-destroyed" not in w:
            heaps[h(f["heap"])] += 1
        if kind in ("malloc", "realloc"):
            have[(pid, kind, h(f["addr"]), int(f["size"]), h(f["heap"]), h(f["hflags"]))] += 1
        elif kind == "free" and "heap-destroyed" in w:
            have[(pid, "free-destroyed", h(f["addr"]), h(f["heap"]))] += 1
        elif kind == "free":
            have[(pid, "free", h(f["addr"]), h(f.get("heap", "0")), h(f.get("hflags", "0")))] += 1
        elif kind == "heap_create":
            have[(pid, kind, h(f["heap"]), int(f["reserve"]))] += 1
        elif kind == "heap_destroy":
            have[(pid, kind, h(f["heap"]))] += 1
        elif kind.startswith("vm_") or kind.startswith("section_"):
            if "failed" not in w:
                have[(pid, kind, h(f["addr"]), int(f["size"]))] += 1
        elif kind == "module_load":
            have[(pid, kind, h(f["base"]))] += 1
        elif kind == "process_start":
            have[(pid, kind)] += 1
        elif kind == "process_exit":
            have[(pid, kind, h(f["status"]))] += 1
    return have, heaps


def main():
    win_dump, trace_dump = sys.argv[1:]
    want = expected(win_dump)
    have, heaps = got(trace_dump)
    errors = []
    for key in sorted(set(want) | set(have), key=str):
        if want[key] != have[key]:
            errors.append(f"{key}: {have[key]} in the trace, want {want[key]}")
    for e in errors[:40]:
        print("check_trace:", e)
    if errors:
        print(f"check_trace: {len(errors)} differences")
        return 1
    print(f"check_trace: {sum(want.values())} events match, {len(heaps)} heaps")
    return 0


if __name__ == "__main__":
    sys.exit(main())
