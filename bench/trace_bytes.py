#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Where a memscribe trace's bytes go (docs/format.md): per block type, and per
# event column of the CHUNK blocks (stored bytes, and bytes per event of the
# trace), so a change to the encoding can be aimed at the column that costs.
#
# usage: bench/trace_bytes.py TRACE [EVENTS]
#        bench/trace_bytes.py --times TRACE
#   EVENTS  divisor for the per-event figures (default: the events the chunks hold)
#   --times print only the bytes of the per-event times (TIME, FREE_TIME, TIME_HI),
#           which heaptrack's trace has no counterpart of (bench/run.sh)
import struct
import sys

COLUMNS = {1: "OP", 2: "TIME", 3: "CTX", 4: "SIZE", 5: "ADDR", 6: "STACK", 7: "REF", 8: "MISC",
           9: "STRS", 10: "FREE_TIME", 11: "FREE_STACK", 12: "SIZE_HI", 13: "TIME_HI",
           14: "REF_HI", 15: "FACT_SIZE", 16: "FACT_STACK", 17: "FACT_ADDR", 18: "FACT_TIME",
           19: "FACT_CTX", 20: "ADDR_REC", 21: "ADDR_REC_HI"}
BLOCKS = {1: "META", 2: "CHUNK", 3: "DEFS", 4: "INDEX"}
TIME_COLUMNS = (2, 10, 13)


def varint(buf, pos):
    v = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return v, pos


def main():
    times_only = len(sys.argv) == 3 and sys.argv[1] == "--times"
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: trace_bytes.py TRACE [EVENTS] | trace_bytes.py --times TRACE")
    path = sys.argv[2] if times_only else sys.argv[1]
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89MSCR\r\n\x1a":
        sys.exit(f"trace_bytes.py: {path}: not a memscribe trace")
    blocks, cols, events, pos = {}, {}, 0, 64
    while pos + 24 <= len(data) and data[pos:pos + 4] == b"MSBK":
        btype, _flags, stored = struct.unpack_from("<HHI", data, pos + 4)
        blocks[btype] = blocks.get(btype, 0) + 24 + stored
        if btype == 2:
            p = pos + 24
            _chunk, p = varint(data, p)
            n, p = varint(data, p)
            events += n
            _serial, p = varint(data, p)
            _base, p = varint(data, p)
            nr_cols, p = varint(data, p)
            for _ in range(nr_cols):
                cid, p = varint(data, p)
                _enc, p = varint(data, p)
                _raw, p = varint(data, p)
                size, p = varint(data, p)
                cols[cid] = cols.get(cid, 0) + size
        pos += 24 + stored
    if times_only:
        print(sum(cols.get(c, 0) for c in TIME_COLUMNS))
        return
    div = int(sys.argv[2]) if len(sys.argv) == 3 else events
    print(f"{path}: {len(data)} bytes, {events} events, {len(data) / max(div, 1):.3f} bytes/event")
    print(f"{'part':<12} {'bytes':>12} {'bytes/event':>12} {'share':>7}")
    rows = [(f"block {BLOCKS.get(t, t)}", b) for t, b in sorted(blocks.items())]
    rows += [(f"  {COLUMNS.get(c, c)}", b) for c, b in sorted(cols.items(), key=lambda x: -x[1])]
    for name, b in rows:
        print(f"{name:<12} {b:>12} {b / max(div, 1):>12.3f} {100.0 * b / len(data):>6.1f}%")


if __name__ == "__main__":
    main()
