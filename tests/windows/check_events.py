#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Compare a win_dump of a trace with what the traced program said it did
(tests/windows/win_prog_known.c): every EXPECT line matched by as many
events as there are identical lines, with a stack frame inside the named
function; every COUNT exact; the exit status. With --heap-log, Wine's
WINEDEBUG=+pid,+heap log of the same run is an independent oracle: each
recorded RtlAllocateHeap/RtlReAllocateHeap/RtlFreeHeap call must be in it,
and for each COUNTed heap it must hold exactly as many calls as the trace.
With --codeview SIG AGE (objdump -p's "RSDS signature" and age of the
program), the program's MODULE record must hold that GUID and age.
Usage: check_events.py EXPECTS DUMP [--exit HEX] [--heap-log LOG] [--codeview SIG AGE]"""
import collections
import re
import sys


def parse_fields(words):
    return dict(w.split("=", 1) for w in words if "=" in w)


def load_dump(path):
    events = []
    for line in open(path):
        head, _, frames = line.rstrip("\n").partition(" | ")
        words = head.split()
        ev = {"pid": int(words[0]), "kind": words[3], "fields": parse_fields(words[4:]),
              "frames": [int(f, 16) for f in frames.split()]}
        events.append(ev)
    return events


def main():
    args = sys.argv[1:]
    want_exit = heap_log = None
    if "--exit" in args:
        i = args.index("--exit")
        want_exit = int(args[i + 1], 16)
        del args[i:i + 2]
    if "--heap-log" in args:
        i = args.index("--heap-log")
        heap_log = args[i + 1]
        del args[i:i + 2]
    codeview = None
    if "--codeview" in args:
        i = args.index("--codeview")
        codeview = (args[i + 1], int(args[i + 2]))
        del args[i:i + 3]
    expects_path, dump_path = args
    events = load_dump(dump_path)
    errors = []
    expects = collections.Counter()
    counts = {}
    nr_procs = 1
    for line in open(expects_path):
        w = line.split()
        if w and w[0] == "EXPECT":
            expects[(int(w[1], 16), int(w[2], 16), w[3], tuple(w[4:]))] += 1
        elif w and w[0] == "COUNT":
            counts[w[1].split("=", 1)[1]] = int(w[2])
        elif w and w[0] == "PROCESSES":
            nr_procs = int(w[1])
    if not expects:
        errors.append("the program printed no EXPECT lines")
    procs = [e for e in events if e["kind"] == "PROCESS"]
    if len(procs) != nr_procs:
        errors.append("%d PROCESS records, want %d" % (len(procs), nr_procs))
    children = [e for e in events if e["kind"] == "CHILD" and e["fields"]["traced"] == "0x1"]
    if len(children) != nr_procs - 1:
        errors.append("%d traced CHILD records, want %d" % (len(children), nr_procs - 1))
    for (lo, hi, kind, words), n in sorted(expects.items()):
        want = parse_fields(words)
        pid = want.pop("pid", None)  # decimal: the process the call was made in
        got = [e for e in events if e["kind"] == kind and (pid is None or str(e["pid"]) == pid)
               and all(e["fields"].get(k) == v for k, v in want.items())]
        if len(got) != n:
            errors.append("%d events for %d x %s %s" % (len(got), n, kind, " ".join(words)))
            continue
        for e in got:
            if lo and not any(lo <= f < hi for f in e["frames"]):
                errors.append("%s %s: no frame in [0x%x, 0x%x): %s" % (
                    kind, " ".join(words), lo, hi, " ".join(hex(f) for f in e["frames"])))
    heap_kinds = ("HEAP_ALLOC", "HEAP_REALLOC", "HEAP_FREE")
    # COUNT: the program's own calls, made from its executable (the first
    # module listed) and not from inside another heap call
    first = procs[0]["pid"] if procs else None
    mods = [e for e in events if e["kind"] == "MODULE" and e["pid"] == first]
    exe_lo = int(mods[0]["fields"]["base"], 16) if mods else 0
    exe_hi = exe_lo + (int(mods[0]["fields"]["size"], 16) if mods else 0)
    for heap, n in counts.items():
        got = sum(1 for e in events if e["kind"] in heap_kinds and e["fields"].get("heap") == heap
                  and e["pid"] == first and e["fields"].get("depth") == "0x0" and e["frames"]
                  and exe_lo <= e["frames"][0] < exe_hi)
        if got != n:
            errors.append("COUNT heap=%s: %d events, want %d" % (heap, got, n))
    if codeview:
        sig, age = codeview
        # objdump prints the GUID's first three fields as numbers (byte-swapped)
        raw = sig[6:8] + sig[4:6] + sig[2:4] + sig[0:2] + sig[10:12] + sig[8:10] + \
            sig[14:16] + sig[12:14] + sig[16:]
        got = (mods[0]["fields"].get("guid"), mods[0]["fields"].get("age")) if mods else None
        if got != (raw, hex(age)):
            errors.append("program's CodeView %s, want guid=%s age=%s" % (got, raw, hex(age)))
    # Times: with the launcher's CLOCK record, every event has t_ns inside the run
    clocks = [e for e in events if e["kind"] == "CLOCK"]
    if clocks:
        c = {k: int(v, 16) for k, v in clocks[0]["fields"].items()}
        run_ns = (c["qpc1"] - c["qpc0"]) * 1e9 / c["qpc_freq"]
        late = [e for e in events if e["kind"] != "CLOCK" and
                not 0 <= float(e["fields"].get("t_ns", -1)) <= run_ns]
        if late:
            errors.append("%d events without a time inside the run (%.0f ns), first: %s" % (
                len(late), run_ns, late[0]))
    exits = [e for e in events if e["kind"] == "EXIT" and e["pid"] == first]
    if want_exit is not None and (len(exits) != 1 or int(exits[0]["fields"]["status"], 16) != want_exit):
        errors.append("EXIT %s, want status 0x%x" % ([e["fields"] for e in exits], want_exit))
    if heap_log:
        errors += check_heap_log(heap_log, events, procs[0]["fields"]["pid"] if procs else None, counts)
    for e in errors[:20]:
        print("check_events: " + e)
    if len(errors) > 20:
        print("check_events: ... %d more" % (len(errors) - 20))
    n_heap = sum(1 for e in events if e["kind"] in heap_kinds)
    print("check_events: %d events (%d heap), %d expectations, %d counts: %s" % (
        len(events), n_heap, sum(expects.values()), len(counts), "FAIL" if errors else "ok"))
    return 1 if errors else 0


LOG_RE = re.compile(r"^([0-9a-f]+):[0-9a-f]+:trace:heap:(RtlAllocateHeap|RtlReAllocateHeap|RtlFreeHeap) "
                    r"handle ([0-9A-F]+), flags (0x[0-9a-f]+|0)(.*)$")


def key_of_event(e):
    f = e["fields"]
    kind = {"HEAP_ALLOC": "RtlAllocateHeap", "HEAP_REALLOC": "RtlReAllocateHeap",
            "HEAP_FREE": "RtlFreeHeap"}[e["kind"]]
    addr = f["result"] if e["kind"] != "HEAP_FREE" else f["ptr"]
    return (kind, int(f["heap"], 16), int(addr, 16))


def check_heap_log(path, events, pid_hex, counts):
    """The oracle: Wine's own trace of the calls (handle and address)."""
    errors = []
    pid = int(pid_hex, 16) if pid_hex else None
    log = collections.Counter()
    for line in open(path, errors="replace"):
        m = LOG_RE.match(line)
        if not m or int(m.group(1), 16) != pid:
            continue
        fn, handle, rest = m.group(2), int(m.group(3), 16), m.group(5)
        ptr = re.search(r"(?:ptr|return) ([0-9A-F]+)" if fn == "RtlFreeHeap"
                        else r"return ([0-9A-F]+)", rest)
        log[(fn, handle, int(ptr.group(1), 16) if ptr else 0)] += 1
    if not log:
        return ["no heap calls of pid %s in %s" % (pid_hex, path)]
    heap_events = [e for e in events if e["kind"] in ("HEAP_ALLOC", "HEAP_REALLOC", "HEAP_FREE")
                   and e["pid"] == pid]
    # Wine logs no RtlFreeHeap(NULL): it returns before its trace line
    ours = collections.Counter(key_of_event(e) for e in heap_events
                               if not (e["kind"] == "HEAP_FREE" and e["fields"]["ptr"] == "0x0"))
    for k, n in ours.items():
        if log[k] < n:
            errors.append("heap log has %d x %s, the trace %d" % (log[k], k, n))
    for heap in counts:
        h = int(heap, 16)
        in_log = sum(v for k, v in log.items() if k[1] == h)
        in_trace = sum(1 for e in heap_events if int(e["fields"]["heap"], 16) == h)
        if in_log != in_trace:
            errors.append("heap %s: %d calls in the heap log, %d in the trace" % (heap, in_log, in_trace))
    print("check_events: heap log: %d calls of the program, %d in the trace" % (
        sum(log.values()), sum(ours.values())))
    return errors


if __name__ == "__main__":
    sys.exit(main())
