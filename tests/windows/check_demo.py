#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""WPA's MemoryTestApp numbers from the Windows demo's trace (run_demo.sh):
VirtualAlloc commit lifetimes (memscribe vmem, WPA's "VirtualAlloc Commit
LifeTimes"): over the run 12 buffers of 10 MB, all AIFI, Impacting Size 0;
a window around the second steady-state buffer: Impacting, Count 1, 10 MB
from AllocateSteadyState, that buffer AIFO (the first one AOFO); a window
over the last four spikes: Transient Count 4, Size 40 MB, Impacting 0 under
Operation1 -> ManipulateTemporaryBuffer, each AIFI; in every window each
lifetime's class is its commit and decommit against the window, and the
process's class counts are its lifetimes'.
Heap (memscribe window, WPA's heap table): 320 x 40 bytes Impacting from
InnerLoopOperation, named with file and line from the PE's DWARF; as many
40-byte HeapAllocs in the trace as in Wine's +heap log. No thread of tid 0
(the launcher's exit record) in the trace or the HTML page. Wine's own
DLLs are found without options (the prefix the trace recorded, or Wine's
DLL folder on this host for the launcher's trace, which records none):
every frame of the VirtualAlloc stacks is named, VirtualAlloc among them,
and no note says a system DLL was not read.
Usage: check_demo.py OUTDIR MEMSCRIBE"""
import json
import re
import subprocess
import sys

BUF = 10002432  # 10 * 1000 * 1000 rounded up to 4 KiB pages
errors = []


def expect(what, got, want):
    if got != want:
        errors.append(f"{what}: {got!r}, want {want!r}")


def frames_have(frames, *names):
    text = " < ".join(frames)
    return all(n in text for n in names)


def vmem(out, memscribe, t0, t1):
    j = subprocess.run([memscribe, "vmem", "--format", "json", "--from", f"{t0}ns", "--to",
                        f"{t1}ns", "--top", "0", "--rows", "0", f"{out}/demo.mscr"],
                       check=True, capture_output=True, text=True).stdout
    return json.loads(j)


# A frame no file named: "kernelbase.dll+0x3ef8a" (docs/symbols.md)
UNNAMED = re.compile(r"^[^ ]+\+0x[0-9a-f]+$")


def system_frames_named(out, memscribe, big):
    """Wine's DLLs, found with no option: the frames above the demo's
    VirtualAlloc calls all named, and no note about a system DLL."""
    for l in big:
        expect("unnamed frames of a 10 MB commit's stack",
               [f for f in l["stack"] if UNNAMED.match(f)], [])
    expect("a VirtualAlloc frame in every 10 MB commit's stack",
           all(any(f.startswith("VirtualAlloc") for f in l["stack"]) for l in big), True)
    text = subprocess.run([memscribe, "vmem", f"{out}/demo.mscr"], check=True,
                          capture_output=True, text=True)
    expect("notes about Wine's DLLs",
           [n for n in text.stderr.splitlines() if "C:\\windows" in n], [])


def classes(w, what):
    """Each lifetime's class is its commit and decommit against the window
    (as window classifies heap blocks), its type and impacting size follow
    from it, and the process's counts are the lifetimes' (all listed:
    --top 0 --rows 0; AOFO ones are in no group and counted alone)."""
    t0, t1 = w["from_ns"], w["to_ns"]
    count = {}
    for l in w["lifetimes"]:
        end = None if l["decommit_ns"] == "-" else int(l["decommit_ns"])
        inside, ended = l["commit_ns"] >= t0, end is not None and end <= t1
        cls = ("AI" if inside else "AO") + ("FI" if ended else "FO")
        expect("%s: class of %s" % (what, l["range"]), l["class"], cls)
        expect("%s: type of %s" % (what, l["range"]), l["impacting_type"],
               "Transient" if cls == "AIFI" else "Impacting")
        expect("%s: impacting size of %s" % (what, l["range"]), l["impacting_size"],
               {"AIFO": l["size"], "AOFI": -l["size"]}.get(cls, 0))
        count[cls] = count.get(cls, 0) + 1
        count[cls + "_bytes"] = count.get(cls + "_bytes", 0) + l["size"]
    p = w["processes"][0] if w["processes"] else {}
    for cls in ("AIFI", "AIFO", "AOFI"):
        expect("%s: %s lifetimes" % (what, cls), p.get(cls.lower(), 0), count.get(cls, 0))
        expect("%s: %s bytes" % (what, cls), p.get(cls.lower() + "_bytes", 0),
               count.get(cls + "_bytes", 0))
    expect("%s: groups add up to the lifetimes" % what,
           sum(g["count"] for g in w["groups"]), len(w["lifetimes"]))


def main():
    out, memscribe = sys.argv[1:]
    run = json.load(open(f"{out}/vmem.json"))
    big = [l for l in run["lifetimes"] if l["size"] == BUF]
    # lifetimes listed per group: ask for all of them
    run = vmem(out, memscribe, 0, run["to_ns"])
    big = [l for l in run["lifetimes"] if l["size"] == BUF]
    expect("10 MB commit lifetimes over the run", len(big), 12)
    expect("Impacting Size of the 10 MB buffers over the run",
           sum(l["impacting_size"] for l in big), 0)
    steady = sorted(l["commit_ns"] for l in big if frames_have(l["stack"], "AllocateSteadyState"))
    expect("steady-state buffers", len(steady), 2)
    expect("a stack line names the source file",
           all(frames_have(l["stack"], "Buffer() (memtest_demo_win.cc:") for l in big), True)
    system_frames_named(out, memscribe, big)

    # Over the run every buffer is committed and released inside: AIFI,
    # Transient, as the process's classes say
    expect("classes of the 10 MB buffers over the run",
           {(l["impacting_type"], l["class"]) for l in big}, {("Transient", "AIFI")})
    classes(run, "the run")

    # The step: a window of +-50 ms around the second steady buffer
    if len(steady) == 2:
        w = vmem(out, memscribe, steady[1] - 50000000, steady[1] + 50000000)
        rows = [g for g in w["groups"] if frames_have(g["group"], "AllocateSteadyState")
                and g["impacting_size"] != 0]
        expect("Impacting steady rows in the step window",
               [(g["impacting_type"], g["count"], g["size"], g["impacting_size"]) for g in rows],
               [("Impacting", 1, BUF, BUF)])
        # the second one committed inside, still committed at the end: AIFO;
        # the first one committed before and still committed: AOFO, no row
        expect("the second steady buffer in the step window",
               [(l["commit_ns"], l["class"]) for l in w["lifetimes"] if l["size"] == BUF and
                frames_have(l["stack"], "AllocateSteadyState")], [(steady[1], "AIFO")])
        expect("the first steady buffer in the step window (AOFO)", w["processes"][0]["aofo"] >= 1,
               True)
        classes(w, "the step window")

    # The last four spikes: ManipulateTemporaryBuffer's lifetimes
    mtb = sorted((l["commit_ns"], int(l["decommit_ns"])) for l in big
                 if frames_have(l["stack"], "ManipulateTemporaryBuffer", "Operation1"))
    expect("ManipulateTemporaryBuffer buffers", len(mtb), 4)
    if len(mtb) == 4:
        w = vmem(out, memscribe, mtb[0][0] - 1000000, mtb[-1][1] + 1000000)
        rows = [g for g in w["groups"] if frames_have(g["group"], "ManipulateTemporaryBuffer")]
        expect("ManipulateTemporaryBuffer in the last four spikes",
               [(g["count"], g["size"], g["impacting_size"]) for g in rows], [(4, 4 * BUF, 0)])
        lives = [l for l in w["lifetimes"] if l["size"] == BUF and
                 mtb[0][0] - 1000000 <= l["commit_ns"]]
        expect("10 MB buffers committed in that window", len(lives), 4)
        expect("their classes", {(l["impacting_type"], l["class"]) for l in lives},
               {("Transient", "AIFI")})
        classes(w, "the last four spikes")

    # The heap: the leak
    win = json.load(open(f"{out}/window.json"))
    rows = [r for r in win["rows"]
            if frames_have(r["stack"], "InnerLoopOperation() (memtest_demo_win.cc:")]
    expect("InnerLoopOperation rows", [(r["impacting_type"], r["count"], r["size"],
                                        r["impacting_size"]) for r in rows],
           [("Impacting", 320, 320 * 40, 320 * 40)])

    # The oracle: 40-byte allocations of the demo in Wine's heap log, from
    # the first call the hooks saw on (the loader allocates before the
    # collector is in: those calls are in the log only)
    pid = first = None
    trace40 = 0
    for line in open(f"{out}/demo.dump"):
        w = line.split()
        if len(w) > 6 and w[4] == "process_start":
            pid = int(w[1])
        if len(w) > 6 and w[4] == "malloc" and "failed" not in w:
            first = first or int(w[5].split("=")[1], 16)
            trace40 += "size=40" in w
    log40 = 0
    seen_first = False
    for line in open(f"{out}/demo.log", errors="replace"):
        m = re.match(r"([0-9a-f]+):[0-9a-f]+:trace:heap:RtlAllocateHeap .* size (0x[0-9a-f]+), "
                     r"return ([0-9A-F]+)", line)
        if not m or int(m.group(1), 16) != pid:
            continue
        seen_first = seen_first or int(m.group(3), 16) == first
        log40 += seen_first and m.group(2) == "0x28"
    expect("the trace's first allocation in Wine's +heap log", seen_first, True)
    expect("40-byte heap allocations, trace vs Wine's +heap log", trace40, log40)
    expect("at least the 320 leaks", trace40 >= 320, True)

    # The launcher's records (the exit) belong to the process's thread
    # that started it: no event, thread row or HTML thread has tid 0.
    expect("events of tid 0", [l for l in open(f"{out}/demo.dump") if l.split()[2:3] == ["0"]], [])
    head = subprocess.run([memscribe, "dump", "--header", f"{out}/demo.mscr"], check=True,
                          capture_output=True, text=True).stdout
    expect("threads of tid 0", [l for l in head.splitlines() if " tid=0 " in l], [])
    page = subprocess.run([memscribe, "html", f"{out}/demo.mscr", "-o", "-"], check=True,
                          capture_output=True, text=True).stdout
    data = json.loads(re.search(r'<script type="application/json" id="ms-data">(.*?)</script>',
                                page, re.S).group(1))
    expect("HTML threads of tid 0", [t for t in data["threads"] if t["tid"] == 0], [])

    for e in errors:
        print("check_demo:", e)
    if errors:
        return 1
    print(f"check_demo: ok (12 buffers, step {BUF}, 4 transient, 320 x 40 leaked; "
          f"{log40} 40-byte HeapAllocs in log and trace)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
