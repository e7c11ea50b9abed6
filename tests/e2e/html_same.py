#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Whether two HTML reports of one trace show the same: every member of
their data alike, but the window cells (heap "wpa" and commit "vm"), which
are compared at the wider of their two bucket widths (a page that keeps
fewer cell keys, the folded page's rows against the whole model's stacks,
coarsens its buckets later: its windows are finer, never other).

usage: html_same.py A.html B.html   (exit 0: the same; 1: not, and why)"""
import collections
import json
import re
import sys


def page_data(path):
    page = open(path, encoding="utf-8").read()
    m = re.search(r'<script type="application/json" id="ms-data">(.*?)</script>', page, re.S)
    if not m:
        sys.exit(path + ": no #ms-data")
    return json.loads(m.group(1))


def cells(w, width):
    """The cells (key, alloc bucket, free bucket) -> [blocks, bytes] at width."""
    k = width // w["bucketNs"]
    out = collections.defaultdict(lambda: [0, 0])
    for key, a, f, n, b in zip(w.get("site", w.get("k")), w["a"], w["f"], w["n"], w["b"]):
        c = out[(key, a // k, f if f < 0 else f // k)]
        c[0] += n
        c[1] += b
    return {key: c for key, c in out.items() if c != [0, 0]}


def main():
    a, b = page_data(sys.argv[1]), page_data(sys.argv[2])
    bad = []
    for key in sorted(set(a) | set(b)):
        if key in ("wpa", "vm") and key in a and key in b:
            width = max(a[key]["bucketNs"], b[key]["bucketNs"])
            if width % a[key]["bucketNs"] or width % b[key]["bucketNs"]:
                bad.append("%s: bucket widths %d and %d" % (key, a[key]["bucketNs"], b[key]["bucketNs"]))
            elif cells(a[key], width) != cells(b[key], width):
                bad.append(key + ": cells differ")
            rest = [m for m in set(a[key]) | set(b[key])
                    if m not in ("site", "k", "a", "f", "n", "b", "bucketNs", "nrBuckets")]
            bad += ["%s.%s" % (key, m) for m in rest if a[key].get(m) != b[key].get(m)]
        elif a.get(key) != b.get(key):
            bad.append(key)
    if bad:
        sys.exit("differ: " + ", ".join(bad))


main()
