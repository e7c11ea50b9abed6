#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# How many bits naming the block each free ends takes at least (issue 45,
# bench/README.md "Which block a free ends: what it costs at least"). heaptrack's
# file names no block: its frees carry the allocation's (size, stack) index
# only, so the bytes a memscribe trace spends on identity (REF, REF_HI and the
# FACT_* columns of docs/format.md) are over and above everything heaptrack stores.
#
# For every free (and realloc) of a heap block, r = how many heap blocks
# started after it are still live (0: the newest live block), over the
# whole trace, chunks ignored. Ranks are split into power-of-two buckets
# b = floor(log2(r + 1)): a coder of ranks writes the bucket (at best its
# entropy, H(b), or H(b | the free's stack) when it knows the free's own
# stack, which the trace stores anyway) and then the rank inside the bucket,
# b bits when it cannot predict where in the bucket the block lies (the
# frees of random keys of a map or a pool: each block of the bucket alike).
# Printed per heap call of the trace:
#   within  the bits inside the buckets alone: what any such coder pays
#   order0  within + H(b)
#   site    the stack of the freed block, then its rank among that site's
#           live blocks: H(site) + H(b' | site) + the bits inside b'
#           (a coder that names the allocation site first; heaptrack's
#           frees carry the site, and nothing more)
# Ranks among all live heap blocks of the trace: meant for one-process
# workloads (the format ranks per thread and chunk; bench's are one thread).
#
# usage: memscribe dump TRACE | bench/ref_entropy.py
import bisect
import math
import re
import sys
from collections import Counter, defaultdict

HEAP_STARTS = {"malloc", "calloc", "realloc", "reallocarray", "memalign", "posix_memalign",
               "aligned_alloc", "valloc", "pvalloc"}
HEAP_ENDS = {"free", "realloc", "reallocarray"}
ENDS = re.compile(r" ends=#(\d+)")
STACK = re.compile(r" stack=(\d+)")


class Fenwick:
    """Counts of live blocks by serial, with prefix sums."""

    def __init__(self):
        self.n = 1 << 16
        self.t = [0] * (self.n + 1)

    def grow(self, i):
        while i > self.n:  # rebuild at twice the size: sums are prefix sums
            old = [self.prefix(k) - self.prefix(k - 1) for k in range(1, self.n + 1)]
            self.n *= 2
            self.t = [0] * (self.n + 1)
            for k, v in enumerate(old, 1):
                if v:
                    self.add(k, v)

    def add(self, i, v):
        while i <= self.n:
            self.t[i] += v
            i += i & -i

    def prefix(self, i):
        s = 0
        i = min(i, self.n)
        while i > 0:
            s += self.t[i]
            i -= i & -i
        return s


def entropy(counts):
    n = sum(counts.values())
    return -sum(c / n * math.log2(c / n) for c in counts.values() if c) if n else 0.0


def main():
    if len(sys.argv) != 1:
        sys.exit("usage: memscribe dump TRACE | ref_entropy.py")
    live = Fenwick()
    buckets = Counter()
    by_stack = defaultdict(Counter)
    calls = frees = newest = 0
    within = site_within = 0
    site_of = {}  # live serial -> its stack
    site_live = defaultdict(list)  # stack -> its live serials, ascending
    sites = Counter()
    site_buckets = defaultdict(Counter)
    for line in sys.stdin:
        f = line.split(" ", 5)
        if len(f) < 5:
            continue
        kind = f[4]
        if kind in HEAP_ENDS:
            m = ENDS.search(line)
            if m:
                s = int(m.group(1))
                r = live.prefix(newest) - live.prefix(s)
                live.add(s, -1)
                b = (r + 1).bit_length() - 1
                buckets[b] += 1
                st = STACK.search(line)
                by_stack[st.group(1) if st else "0"][b] += 1
                within += b
                frees += 1
                site = site_of.pop(s, None)
                if site is not None:
                    lst = site_live[site]
                    i = bisect.bisect_left(lst, s)
                    b = (len(lst) - i).bit_length() - 1
                    del lst[i]
                    sites[site] += 1
                    site_buckets[site][b] += 1
                    site_within += b
        if kind in HEAP_STARTS:
            calls += 1
            if f[3] != "-":
                s = int(f[3][1:])
                live.grow(s)
                live.add(s, 1)
                newest = max(newest, s)
                st = STACK.search(line)
                site = st.group(1) if st else "0"
                site_of[s] = site
                bisect.insort(site_live[site], s)
        elif kind in HEAP_ENDS or kind == "free":
            calls += 1
    if not calls:
        sys.exit("ref_entropy.py: no heap calls in the dump")
    h0 = entropy(buckets) * frees
    hs = sum(entropy(c) * sum(c.values()) for c in by_stack.values())
    by_site = site_within + entropy(sites) * sum(sites.values()) + sum(
        entropy(c) * sum(c.values()) for c in site_buckets.values())
    print(f"heap calls {calls}, frees of known blocks {frees}")
    print("bucket  rank          frees")
    for b in sorted(buckets):
        lo, hi = (1 << b) - 1, (1 << (b + 1)) - 2
        print(f"{b:6d}  {lo:>5}-{hi:<7d} {buckets[b]:9d}")
    for name, bits in (("within", within), ("order0", within + h0), ("stack", within + hs),
                       ("site", by_site)):
        print(f"{name:8s} {bits / 8 / calls:.3f} bytes per heap call")


if __name__ == "__main__":
    main()
