#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The HTML page is a claim too: read the data `memscribe html` embedded
in its page (#ms-data) and the bars of its size histogram, and compare
them with the JSON of the text commands on the same trace.

usage: pic_data.py MEMSCRIBE TRACE PAGE.html [HIST.svg]

- summary: every number `report --format=json` has in its "total" (calls,
  allocations, peak and when, leaked, temporary: null in a sampled trace,
  peak RSS, ...), and its processes' count;
- sites: each call site's allocations, bytes, leaked bytes and blocks and
  temporary allocations against report's CSV row of the same process and
  stack (the row's lowest stack id, as the page's); its bytes at the peak
  too for one process, and their sum against the peak for a tree;
- flame graphs: every node the page keeps, top-down and inverted, against
  `tree` (and `tree --bottom-up`) at the same path, processes merged;
- the window table's cells over the whole trace against `memscribe window`:
  per process and class (AIFI, AIFO, AOFI, AOFO) and per row;
- the commit lifetimes' cells against `memscribe vmem`'s groups and classes,
  over the whole trace and windows of whole buckets at every cell's edges;
- threads against `dump --header`;
- a page of the per-program view (a tree where an executable ran in
  several processes; "programs" in its data): the programs table against
  report's "programs", and each listed site against report's row of the
  same program and frames; the per-process checks of sites and the window
  table then read the page `html --by-process` writes;
- the size histogram's bars (the page's, and HIST.svg from `plot
  histogram`) against `histogram --format=json`.
Prints a line per check; exits 1 naming the first difference, 2 on usage.
"""
import csv
import io
import json
import re
import subprocess
import sys

BYTES = {"B": 1, "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3, "TiB": 1024**4}


def die(msg, code=1):
    print("pic_data: " + msg, file=sys.stderr)
    sys.exit(code)


def run(ms, *args):
    p = subprocess.run([ms, *args], capture_output=True, text=True)
    if p.returncode:
        die("memscribe %s: exit %d: %s" % (" ".join(args), p.returncode, p.stderr.strip()[-300:]))
    return p.stdout


def check(what, got, want):
    if got != want:
        die("%s: the page has %r, the text command %r" % (what, got, want))


def page_data(path):
    page = open(path, encoding="utf-8").read()
    m = re.search(r'<script type="application/json" id="ms-data">(.*?)</script>', page, re.S)
    if not m:
        die(path + ": no #ms-data", 2)
    return page, json.loads(m.group(1))


def check_summary(d, rep):
    tot, s = rep["total"], d["summary"]
    keys = [k for k in s if k in tot]
    for k in keys:
        check("summary " + k, s[k], tot[k])
    check("summary process_count", s["process_count"], len(rep["processes"]))
    print("ok: summary: %d numbers equal report's total (%s)" % (len(keys), ", ".join(keys)))


def site_frames(d, i):
    fr, out = d["frames"], []
    n = d["sites"]["node"][i]
    while n > 0:
        out.append(d["strings"][fr["place"][n]])
        n = fr["parent"][n]
    return out


def lumped(d):
    """The index of the page's one site for the call sites it lumps
    together ("(N other call sites ...)": stack 0, pid 0), or None."""
    c = d["sites"]
    if c["stack"] and c["stack"][-1] == 0 and c["pid"][-1] == 0:
        return len(c["stack"]) - 1
    return None


def check_sites(d, ms, trace, rep):
    rows = list(csv.DictReader(io.StringIO(run(ms, "report", "--format=csv", "--top", "0", trace))))
    by = {(int(r["pid"]), int(r["stack_id"])): r for r in rows}
    c = d["sites"]
    one = len(rep["processes"]) == 1
    sampled = "temporary" not in c
    keys = ["allocations", "allocated_bytes", "leaked_bytes", "leaked_blocks"] + ([] if sampled else ["temporary"])
    other = lumped(d)
    seen, peak_sum = set(), 0
    for i, stack in enumerate(c["stack"]):
        peak_sum += c["peak_bytes"][i]
        if i == other:
            continue
        key = (c["pid"][i], stack)
        r = by.get(key)
        if r is None:
            die("site pid %d stack %d (%s) is not a row of report" % (key + (site_frames(d, i)[0],)))
        seen.add(key)
        for k in keys:
            check("site %s %s" % (key, k), c[k][i], int(r[k]))
        if sampled:
            check("site %s temporary (report's CSV)" % (key,), r["temporary"], "")
        if one:
            check("site %s peak_bytes" % (key,), c["peak_bytes"][i], int(r["peak_bytes"]))
    rest = [r for k, r in by.items() if k not in seen and (int(r["allocations"]) or int(r["leaked_bytes"]))]
    if other is None and rest:
        die("report's rows %s are not sites of the page" % [(r["pid"], r["stack_id"]) for r in rest[:5]])
    if other is not None:
        for k in keys:
            check("the lumped site's %s (report's rows not listed, summed)" % k, c[k][other],
                  sum(int(r[k]) for r in rest))
    check("the sites' bytes at the peak, summed", peak_sum, rep["total"]["peak_bytes"])
    print("ok: sites: %d call sites equal report's rows%s%s" % (
        len(seen), "" if one else " (a tree: peak summed)",
        "" if other is None else ", %d more lumped into one, summed" % len(rest)))


# The page's flame cost order (ana_flame.h) and tree's keys.
FLAME = [("allocations", "allocations"), ("bytes", "allocated_bytes"), ("leaked", "leaked_bytes"),
         ("peak", "peak_bytes"), ("temporary", "temporary")]


def tree_paths(node, path, out, skip_first):
    for ch in node["children"]:
        if skip_first:  # a tree of processes: each is a first-level node
            tree_paths(ch, path, out, False)
            continue
        p = path + (ch["function"],)
        acc = out.setdefault(p, {k: 0 for _, k in FLAME})
        for _, k in FLAME:
            v = ch["inclusive"][k]
            acc[k] = None if v is None else acc[k] + v
        tree_paths(ch, p, out, False)


def check_flame(d, key, ms, trace, rep, bottom_up):
    args = ["tree", "--format=json", "--depth", "0", "--top", "0", "--no-self"]
    t = json.loads(run(ms, *args, *(["--bottom-up"] if bottom_up else []), trace))
    paths = {}
    tree_paths(t, (), paths, len(rep["processes"]) > 1)
    f = d[key]
    one = len(rep["processes"]) == 1
    names = [None if n < 0 else d["strings"][n] for n in f["name"]]
    path_of = []
    for k, par in enumerate(f["parent"]):
        path_of.append(() if par < 0 else path_of[par] + (names[k],))
    # The flame graph keeps whole stacks; tree starts at main or a thread's
    # function (docs/symbols.md, "The frame of interest"): a flame node's
    # tree path is its path without the entry chain, the frames the page's
    # data marks so (frames.kind 3, the C rule's); a node of the chain
    # alone has none.
    entry = {d["strings"][n] for n, k in zip(d["frames"]["fn"], d["frames"]["kind"]) if k == 3 and n >= 0}
    # ... and a stripped program's nameless _start, a root whose callee is
    # of the chain (ana_interest_entry)
    td = d["flame"]
    chain_roots = {d["strings"][td["name"][par]] for k, par in enumerate(td["parent"])
                   if par > 0 and td["parent"][par] == 0 and d["strings"][td["name"][k]] in entry}

    def tree_path(path):
        path = list(path)
        if bottom_up:
            if len(path) >= 2 and path[-1] in chain_roots and path[-2] in entry:
                path.pop()
            while path and path[-1] in entry:
                path.pop()
        else:
            if path and path[0] in chain_roots and (len(path) == 1 or path[1] in entry):
                path.pop(0)
            while path and path[0] in entry:
                path.pop(0)
        return tuple(path)
    # Sites the page lumps together are one node under the root: every
    # other node then has what its listed sites give, at most the tree's.
    part = lumped(d) is not None
    for c, (fname, tkey) in enumerate(FLAME):
        col = f["cost"][c]
        if fname == "peak" and not one:
            continue  # the page's peak is the tree's (all processes'), tree's each process's
        for k in range(len(path_of)):
            if k and not tree_path(path_of[k]):
                continue  # the entry chain, which tree leaves out
            want = t["inclusive"][tkey] if k == 0 else paths.get(tree_path(path_of[k]), {}).get(tkey)
            got = None if col is None else col[k]
            if tkey == "leaked_bytes" and want is not None:
                want = max(0, want)
            if part and k and re.match(r"\(\d+ other call sites", names[k]):
                continue
            if part and k and got is not None and want is not None and 0 <= got <= want:
                continue
            if got != want and not (fname == "leaked" and got == 0 and want is None):
                die("%s node %s: %s %r, tree says %r" % (key, " < ".join(path_of[k][::-1]) or "(all)",
                                                        fname, got, want))
    print("ok: %s: %d nodes equal tree%s%s" % (key, len(path_of), " --bottom-up" if bottom_up else "",
                                                " (the root; the others at most, sites lumped)" if part else ""))


def check_window(d, ms, trace):
    w = json.loads(run(ms, "window", "--format=json", "--top", "0", trace))
    wpa, nb, other = d["wpa"], d["wpa"]["nrBuckets"], lumped(d)
    cls, per = {}, {}
    for s, a, f, n, b in zip(wpa["site"], wpa["a"], wpa["f"], wpa["n"], wpa["b"]):
        c = "aifi" if 0 <= f <= nb - 1 else "aifo"  # the whole trace: nothing before it
        cls[c] = cls.get(c, 0) + n
        cls[c + "_bytes"] = cls.get(c + "_bytes", 0) + b
        acc = per.setdefault(s, [0, 0, 0, 0])
        acc[0 if c == "aifi" else 2] += n
        acc[1 if c == "aifi" else 3] += b
    for k in ("aifi", "aifi_bytes", "aifo", "aifo_bytes"):
        check("window %s" % k, cls.get(k, 0), sum(p[k] for p in w["processes"]))
    # Rows: a listed site's Transient (AIFI) and Impacting (AIFO) rows are
    # window's rows of its process and frames; the lumped site's, the sum of
    # the rows left.
    want = {(r["impacting_type"], r["pid"], tuple(r["stack"])): (r["count"], r["size"], r["impacting_size"])
            for r in w["rows"]}
    left = dict(want)
    for s, v in per.items():
        for typ, n, b in (("Transient", v[0], v[1]), ("Impacting", v[2], v[3])):
            if not n or s == other:
                continue
            key = (typ, d["sites"]["pid"][s], tuple(site_frames(d, s)))
            check("window row %s" % (key[:2] + (key[2][0],),), (n, b, 0 if typ == "Transient" else b),
                  want.get(key))
            del left[key]
    if other is not None:
        v = per.get(other, [0, 0, 0, 0])
        for typ, n, b in (("Transient", v[0], v[1]), ("Impacting", v[2], v[3])):
            check("the lumped site's %s rows, summed" % typ, (n, b),
                  (sum(x[0] for k, x in left.items() if k[0] == typ), sum(x[1] for k, x in left.items() if k[0] == typ)))
    elif left:
        die("window rows not on the page: %s" % list(left)[:3])
    print("ok: window: %d cells, %d rows equal memscribe window over the whole trace" % (len(wpa["n"]), len(want)))


def node_frames(d, n):
    fr, out = d["frames"], []
    while n > 0:
        out.append(d["strings"][fr["place"][n]])
        n = fr["parent"][n]
    return out


def vm_rows(d, i, j):
    """The commit lifetimes' rows the page shows for the buckets [i, j], as
    vmem's groups: (type, pid, frames) -> [(count, size, impacting size)],
    and the classes' counts and bytes; the lumped keys' rows apart."""
    vm = d["vm"]
    acc = {}
    for k, a, f, n, b in zip(vm["k"], vm["a"], vm["f"], vm["n"], vm["b"]):
        if a > j or 0 <= f < i:
            continue
        ended = 0 <= f <= j
        cls = ("aifi" if ended else "aifo") if a >= i else ("aofi" if ended else "aofo")
        c = acc.setdefault(k, {})
        c[cls] = c.get(cls, 0) + n
        c[cls + "_bytes"] = c.get(cls + "_bytes", 0) + b
    rows, other, classes = {}, {}, {}
    lumped = len(vm["stack"]) - 1 if vm["stack"] and vm["pid"][-1] == 0 and vm["stack"][-1] == 0 else None
    for k, c in acc.items():
        for key, v in c.items():
            classes[key] = classes.get(key, 0) + v
        g = lambda x: c.get(x, 0)
        for typ, n, size, imp in (("Transient", g("aifi"), g("aifi_bytes"), 0),
                                  ("Impacting", g("aifo") + g("aofi"), g("aifo_bytes"),
                                   g("aifo_bytes") - g("aofi_bytes"))):
            if not n:
                continue
            if k == lumped:
                other[typ] = (n, size, imp)
                continue
            key = (typ, vm["pid"][k], tuple(node_frames(d, vm["node"][k])))
            rows.setdefault(key, []).append((n, size, imp))
    return rows, other, classes


def vm_windows(vm):
    """Windows of whole buckets that put each cell's commit and decommit
    bucket on an edge (a wrong bucket changes a class in one of them): the
    whole trace, [0, f] and [0, f - 1] for each decommit bucket f, [a, end]
    and [a + 1, end] for each commit bucket a; at most 40, evenly chosen."""
    nb = vm["nrBuckets"]
    ws = {(0, f) for f in vm["f"] if f >= 0} | {(0, f - 1) for f in vm["f"] if f > 0}
    ws |= {(a, nb - 1) for a in vm["a"]} | {(a + 1, nb - 1) for a in vm["a"] if a + 1 < nb}
    ws = sorted(ws - {(0, nb - 1)})
    if len(ws) > 39:
        ws = [ws[k * len(ws) // 39] for k in range(39)]
    return [(0, nb - 1)] + ws


def check_vm(d, ms, trace):
    """The commit lifetimes' cells (the page's VirtualAlloc commit
    lifetimes) against `vmem`'s groups and classes: over the whole trace and
    windows of whole buckets [i*W, (j+1)*W - 1 ns] at every cell's edges."""
    vm = d["vm"]
    check("vm buckets (the heap window's)", (vm["bucketNs"], vm["nrBuckets"]),
          (d["wpa"]["bucketNs"], d["wpa"]["nrBuckets"]))
    nb, bw = vm["nrBuckets"], vm["bucketNs"]
    n = 0
    windows = vm_windows(vm)
    for i, j in windows:
        args = [] if (i, j) == (0, nb - 1) else ["--from", "%dns" % (i * bw), "--to", "%dns" % ((j + 1) * bw - 1)]
        v = json.loads(run(ms, "vmem", "--format=json", "--top", "0", "--rows", "0", *args, trace))
        got, other, classes = vm_rows(d, i, j)
        want = {}
        for g in v["groups"]:
            want.setdefault((g["impacting_type"], g["pid"], tuple(g["group"])), []).append(
                (g["count"], g["size"], g["impacting_size"]))
        left = {}
        for key, vals in want.items():
            if sorted(got.get(key, [])) != sorted(vals):
                left[key] = vals
        for key in got:
            if key not in want:
                die("window %d-%d: the page's commit row %s is not a group of vmem" % (i, j, key[:2] + (key[2][:1],)))
        if other:  # the lumped keys: what vmem has that the listed keys lack, summed
            for typ in ("Transient", "Impacting"):
                rest = [x for k, vals in left.items() if k[0] == typ for x in vals]
                check("window %d-%d: the lumped commit stacks' %s row" % (i, j, typ), other.get(typ),
                      tuple(sum(x[c] for x in rest) for c in range(3)) if rest else None)
        elif left:
            k = sorted(left)[0]
            die("window %d-%d: vmem's group %s %s is %s on the page" % (i, j, k[:2], k[2][:1], got.get(k)))
        for c in ("aifi", "aifo", "aofi", "aofo"):
            for key in (c, c + "_bytes"):
                check("window %d-%d: commit lifetimes %s" % (i, j, key), classes.get(key, 0),
                      sum(p[key] for p in v["processes"]))
        n += len(v["groups"])
    print("ok: commit lifetimes: %d cells, %d groups in %d windows equal vmem's%s" % (
        len(vm["k"]), n, len(windows), "" if n else " (none in this trace)"))


def check_threads(d, ms, trace):
    head = run(ms, "dump", "--header", trace)
    want = []
    for line in head.splitlines():
        m = re.match(r'# thread \d+ image=\d+ pid=(\d+) tid=(\d+) name="(.*)"$', line)
        if m:
            want.append((int(m.group(1)), int(m.group(2)), m.group(3) or None))
    got = [(t["pid"], t["tid"], t["name"]) for t in d["threads"]]
    check("threads (pid, tid, name)", got, want)
    print("ok: threads: %d equal dump --header" % len(got))


def label_bytes(s):
    m = re.fullmatch(r"([0-9.]+) (\S+)", s.strip())
    return round(float(m.group(1)) * BYTES[m.group(2)])


def check_histogram(svg, what, ms, trace):
    want = {}
    for r in json.loads(run(ms, "histogram", "--format=json", trace)):
        want[r["min_size"]] = want.get(r["min_size"], 0) + r["count"]
    got = {}
    for lo, n in re.findall(r'<rect class="bar-count"[^>]*><title>([^<]*?) \.\. [^<]*?: (\d+) allocations', svg):
        got[label_bytes(lo)] = int(n)
    check(what + " bars (class: allocations)", got, want)
    print("ok: %s: %d bars equal histogram" % (what, len(got)))


def check_programs(d, rep):
    got = sorted((p["exe"], p["processes"], p["peak_bytes"], p["leaked_bytes"], p["allocations"])
                 for p in d["programs"])
    want = sorted((p["exe"], p["processes"], p["peak_bytes"], p["leaked_bytes"], p["allocations"])
                  for p in rep["programs"])
    check("programs", got, want)
    # report's rows of each program, by frames (every table: --top 0).
    rows = {}
    for p in rep["programs"]:
        for table in p["top"].values():
            for r in table or []:
                rows[(p["exe"], tuple(r["stack"]))] = r
    c, other, n = d["sites"], lumped(d), 0
    for i in range(len(c["stack"])):
        if i == other:
            continue
        key = (d["programs"][c["program"][i]]["exe"], tuple(site_frames(d, i)))
        r = rows.get(key)
        if r is None:
            die("site of %s (%s) is not a row of report's program" % (key[0], key[1][0]))
        for k in ("allocations", "allocated_bytes", "leaked_bytes", "leaked_blocks"):
            check("site of %s (%s) %s" % (key[0], key[1][0], k), c[k][i], r[k])
        n += 1
    merged = sum(1 for p in d["programs"] if p["processes"] > 1)
    print("ok: programs: %d programs (%d of several processes) and %d sites equal report's" % (
        len(got), merged, n))


def main():
    if len(sys.argv) not in (4, 5):
        die(__doc__.strip().splitlines()[5], 2)
    ms, trace, html = sys.argv[1:4]
    page, d = page_data(html)
    rep = json.loads(run(ms, "report", "--format=json", "--top", "0", trace))
    check_summary(d, rep)
    if "programs" in d:
        check_programs(d, rep)
        page, d = page_data(html.replace(".html", ".by-process.html"))
        rep = json.loads(run(ms, "report", "--format=json", "--top", "0", "--by-process", trace))
    check_sites(d, ms, trace, rep)
    check_flame(d, "flame", ms, trace, rep, False)
    check_flame(d, "flameInv", ms, trace, rep, True)
    check_window(d, ms, trace)
    check_vm(d, ms, trace)
    check_threads(d, ms, trace)
    m = re.search(r'<svg[^>]*id="histogram-svg".*?</svg>', page, re.S)
    if not m:
        die(html + ": no histogram", 2)
    check_histogram(m.group(0), "the page's size histogram", ms, trace)
    if len(sys.argv) == 5:
        check_histogram(open(sys.argv[4], encoding="utf-8").read(), "plot histogram", ms, trace)


if __name__ == "__main__":
    main()
