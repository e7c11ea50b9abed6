#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# What richer chunk summaries would cost in trace size (issues 43 and 45;
# docs/serve.md "Scale", bench/README.md "serve"): the route to a first view
# from the index needs each chunk's SUMMARY to say, per stack, the blocks it
# started and their bytes and its temporary allocations and their bytes
# (heaptrack's rule per thread, docs/architecture.md), and per process image
# a few totals (allocations, frees, temporary, unmatched frees, failed calls,
# the chunk's highest heap and the event that reached it, RSS), beside the
# live deltas format 1.9 keeps. Nothing is written: this counts them from the
# trace's events as a writer would, chunk by chunk (the CHUNK blocks' event
# counts), encodes them as varints in stack order, and compresses each
# chunk's with zstd -3, as a DEFS block is (its frame overhead counted too,
# so the figure is a little high).
#
# usage: bench/summary_cost.py MEMSCRIBE TRACE
import os
import re
import struct
import subprocess
import sys
from collections import defaultdict

HEAP_STARTS = {"malloc", "calloc", "realloc", "reallocarray", "memalign", "posix_memalign",
               "aligned_alloc", "valloc", "pvalloc"}
HEAP_ENDS = {"free", "realloc", "reallocarray"}
ENDS = re.compile(r" ends=#(\d+)")
STACK = re.compile(r" stack=(\d+)")
SIZE = re.compile(r" size=(\d+)")
IMAGE_TOTALS = 12  # varints per image and chunk: the totals above


def varint(buf, pos):
    v = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return v, pos


def put(out, v):
    while v >= 0x80:
        out.append(v & 0x7F | 0x80)
        v >>= 7
    out.append(v)


def chunk_events(path):
    """The event count of each CHUNK block, in file order."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89MSCR\r\n\x1a":
        sys.exit(f"summary_cost.py: {path}: not a memscribe trace")
    counts, pos = [], 64
    while pos + 24 <= len(data) and data[pos:pos + 4] == b"MSBK":
        btype, _flags, stored = struct.unpack_from("<HHI", data, pos + 4)
        if btype == 2:
            _chunk, p = varint(data, pos + 24)
            n, _ = varint(data, p)
            counts.append(n)
        pos += 24 + stored
    return counts, len(data)


def zstd_size(raw):
    if not raw:
        return 0
    out = subprocess.run(["zstd", "-3", "-q", "-c"], input=bytes(raw), stdout=subprocess.PIPE,
                         check=True).stdout
    return len(out)


def encode(stacks, images):
    raw, prev = bytearray(), 0
    for s in sorted(stacks):
        a = stacks[s]
        put(raw, s - prev)
        prev = s
        for v in a:
            put(raw, v)
    for _ in range(images * IMAGE_TOTALS):
        put(raw, 1 << 20)  # a total of about a million: three bytes, as most are
    return raw


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: summary_cost.py MEMSCRIBE TRACE")
    counts, trace_bytes = chunk_events(sys.argv[2])
    dump = subprocess.Popen([sys.argv[1], "dump", sys.argv[2]], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, bufsize=1 << 20)
    block_stack, block_size, last = {}, {}, {}
    total = raw_total = events = 0
    k = left = 0
    stacks = defaultdict(lambda: [0, 0, 0, 0])
    images = set()
    for line in dump.stdout:
        if not left:
            if k < len(counts) and (stacks or images):
                raw = encode(stacks, len(images))
                raw_total += len(raw)
                total += zstd_size(raw)
            stacks, images = defaultdict(lambda: [0, 0, 0, 0]), set()
            if k == len(counts):
                sys.exit("summary_cost.py: more events than the chunks hold")
            left = counts[k]
            k += 1
        left -= 1
        events += 1
        f = line.split(" ", 5)
        if len(f) < 5:
            continue
        tid, kind = f[2], f[4]
        images.add(f[1])
        if kind in HEAP_ENDS:
            m = ENDS.search(line)
            if m:
                s = int(m.group(1))
                if last.get(tid) == s and s in block_stack:
                    t = stacks[block_stack[s]]
                    t[2] += 1
                    t[3] += block_size[s]
                block_stack.pop(s, None)
                block_size.pop(s, None)
                last[tid] = 0
        if kind in HEAP_STARTS and f[3] != "-":
            s = int(f[3][1:])
            st, sz = STACK.search(line), SIZE.search(line)
            stack = int(st.group(1)) if st else 0
            size = int(sz.group(1)) if sz else 0
            block_stack[s], block_size[s] = stack, size
            t = stacks[stack]
            t[0] += 1
            t[1] += size
            last[tid] = s
    if stacks or images:
        raw = encode(stacks, len(images))
        raw_total += len(raw)
        total += zstd_size(raw)
    if dump.wait():
        sys.exit(f"summary_cost.py: memscribe dump {sys.argv[2]} failed")
    print(f"{os.path.basename(sys.argv[2])}: {trace_bytes} bytes, {events} events, "
          f"{len(counts)} chunks; summaries' additions {raw_total} bytes raw, {total} "
          f"compressed: +{100.0 * total / trace_bytes:.2f} %")


if __name__ == "__main__":
    main()
