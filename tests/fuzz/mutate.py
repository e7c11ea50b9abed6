#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Structure-aware mutants of a memscribe trace (docs/format.md).

A byte flipped at random in a trace mostly breaks a CRC or a zstd frame,
which every reader rejects the same way. This tool decodes the file into
its blocks, records and chunk columns, changes one thing at that level
(a varint of a record or a chunk header, a byte or a length of a column,
a whole record or block), and writes the file back with every CRC, size,
index entry and trailer made consistent again, so the mutant reaches the
reader's checks of meaning instead of its checks of framing. Payloads and
columns are written back uncompressed, which the format allows.

Usage: mutate.py TRACE OUTDIR FIRST_SEED COUNT
Writes OUTDIR/m<SEED>.mscr for each seed and prints "m<SEED>.mscr <what
changed>" per mutant. Seed 0 rewrites the trace without a change (the
re-encoding alone must read exactly as the original). The same trace and
seed always give the same mutant."""

import ctypes
import random
import struct
import sys

MAGIC = b"\x89MSCR\r\n\x1a"
BLOCK_MAGIC = 0x4B42534D
T_META, T_CHUNK, T_DEFS, T_INDEX = 1, 2, 3, 4
FLAG_ZSTD = 1

_zstd = ctypes.CDLL("libzstd.so.1")
_zstd.ZSTD_decompress.restype = ctypes.c_size_t
_zstd.ZSTD_decompress.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p,
                                  ctypes.c_size_t]
_zstd.ZSTD_isError.argtypes = [ctypes.c_size_t]


def unzstd(data, raw_size):
    out = ctypes.create_string_buffer(max(raw_size, 1))
    n = _zstd.ZSTD_decompress(out, raw_size, data, len(data))
    if _zstd.ZSTD_isError(n) or n != raw_size:
        raise ValueError("bad zstd frame")
    return out.raw[:raw_size]


def _crc_table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    return t


_CRC = _crc_table()


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = _CRC[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def put_varint(v):
    v &= (1 << 64) - 1
    out = bytearray()
    while v >= 0x80:
        out.append(v & 0x7F | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def get_varint(buf, pos):
    v, shift = 0, 0
    while pos < len(buf) and shift < 70:
        b = buf[pos]
        pos += 1
        v |= (b & 0x7F) << shift
        if not b & 0x80:
            return v, pos
        shift += 7
    raise ValueError("bad varint")


def varints(buf):
    """buf as a list of varints, or None when it is not one."""
    out, pos = [], 0
    try:
        while pos < len(buf):
            v, pos = get_varint(buf, pos)
            out.append(v)
    except ValueError:
        return None
    return out


def records(payload):
    out, pos = [], 0
    while pos < len(payload):
        typ, pos = get_varint(payload, pos)
        n, pos = get_varint(payload, pos)
        out.append([typ, bytes(payload[pos:pos + n])])
        pos += n
    return out


def join_records(recs):
    return b"".join(put_varint(t) + put_varint(len(b)) + b for t, b in recs)


class Chunk:
    """A CHUNK payload: header varints and its columns, decompressed."""

    def __init__(self, payload):
        pos = 0
        self.head = []
        for _ in range(4):
            v, pos = get_varint(payload, pos)
            self.head.append(v)
        ncol, pos = get_varint(payload, pos)
        table = []
        for _ in range(ncol):
            f = []
            for _ in range(4):
                v, pos = get_varint(payload, pos)
                f.append(v)
            table.append(f)
        self.cols = []
        for cid, enc, raw, stored in table:
            data = payload[pos:pos + stored]
            pos += stored
            self.cols.append([cid, unzstd(data, raw) if enc == 1 else bytes(data)])

    def encode(self):
        out = b"".join(put_varint(v) for v in self.head) + put_varint(len(self.cols))
        for cid, data in self.cols:
            out += put_varint(cid) + put_varint(0) + put_varint(len(data)) * 2
        return out + b"".join(d for _, d in self.cols)


def parse(data):
    """(header bytes, [[type, seq, payload]], had_trailer)"""
    if data[:8] != MAGIC:
        raise ValueError("not a trace")
    blocks, pos = [], 64
    end = len(data)
    had_trailer = data[-32:-24] == b"MSCRTEND"
    if had_trailer:
        end -= 32
    while pos + 24 <= end:
        magic, typ, flags, stored, raw, seq, _ = struct.unpack_from("<IHHIIII", data, pos)
        if magic != BLOCK_MAGIC:
            break
        payload = data[pos + 24:pos + 24 + stored]
        pos += 24 + stored
        if typ == T_INDEX:
            continue
        if flags & FLAG_ZSTD:
            payload = unzstd(payload, raw)
        blocks.append([typ, seq, bytes(payload)])
    return data[:64], blocks, had_trailer


def block_bytes(typ, seq, payload):
    head = struct.pack("<IHHIII", BLOCK_MAGIC, typ, 0, len(payload), len(payload), seq)
    return head + struct.pack("<I", crc32c(head + payload)) + payload


def serialize(header, blocks, trailer=True):
    out = bytearray(header)
    offs = []
    for typ, seq, payload in blocks:
        offs.append((typ, len(out), len(payload)))
        out += block_bytes(typ, seq, payload)
    if not trailer:
        return bytes(out)
    idx = put_varint(len(offs))
    prev = 0
    for typ, off, size in offs:
        idx += put_varint(typ) + put_varint(off - prev) + put_varint(size)
        prev = off
    index_off = len(out)
    out += block_bytes(T_INDEX, len(blocks), idx)
    tr = b"MSCRTEND" + struct.pack("<QQI", index_off, len(blocks), 0)
    out += tr + struct.pack("<I", crc32c(tr))
    return bytes(out)


def odd_value(rnd, v):
    """A value near v or one of the edges a reader must survive."""
    return rnd.choice([v + 1, max(v - 1, 0), v * 2 + 1, v + rnd.randint(2, 1000), 0,
                       0x7F, 0x80, 1 << 20, 1 << 32, (1 << 63) - 1, 1 << 63,
                       (1 << 64) - 1, rnd.getrandbits(64)])


def mutate_varints(rnd, body):
    """Change one varint of a body that is a list of varints; None if it is not."""
    vs = varints(body)
    if not vs:
        return None, None
    i = rnd.randrange(len(vs))
    old = vs[i]
    vs[i] = odd_value(rnd, old) & ((1 << 64) - 1)
    return b"".join(put_varint(v) for v in vs), "varint %d: %d -> %d" % (i, old, vs[i])


def mutate_bytes(rnd, body):
    b = bytearray(body)
    op = rnd.choice(["flip", "set", "insert", "delete", "cut"] if b else ["insert"])
    i = rnd.randrange(len(b)) if b else 0
    if op == "flip":
        bit = rnd.randrange(8)
        b[i] ^= 1 << bit
        return bytes(b), "byte %d bit %d flipped" % (i, bit)
    if op == "set":
        v = rnd.choice([0, 0x7F, 0x80, 0xFF, rnd.randrange(256)])
        b[i] = v
        return bytes(b), "byte %d set to %#x" % (i, v)
    if op == "insert":
        v = rnd.choice([0, 1, 0x80, 0xFF, rnd.randrange(256)])
        b.insert(i, v)
        return bytes(b), "byte %#x inserted at %d" % (v, i)
    if op == "delete":
        del b[i]
        return bytes(b), "byte %d deleted" % i
    return bytes(b[:i]), "cut to %d bytes" % i


def mutate_record_block(rnd, blk):
    recs = records(blk[2])
    if not recs:
        return None
    i = rnd.randrange(len(recs))
    typ, body = recs[i]
    op = rnd.choice(["varint", "varint", "varint", "bytes", "drop", "dup", "type"])
    if op == "drop":
        del recs[i]
        what = "dropped"
    elif op == "dup":
        recs.insert(i, [typ, body])
        what = "duplicated"
    elif op == "type":
        recs[i][0] = rnd.choice([typ + 1, max(typ - 1, 0), 99])
        what = "type %d -> %d" % (typ, recs[i][0])
    else:
        new, what = mutate_varints(rnd, body) if op == "varint" else (None, None)
        if new is None:
            new, what = mutate_bytes(rnd, body)
        recs[i][1] = new
    blk[2] = join_records(recs)
    return "record %d (type %d): %s" % (i, typ, what)


def mutate_chunk(rnd, blk):
    ch = Chunk(blk[2])
    if rnd.random() < 0.3:
        names = ["number", "events", "first serial", "base time"]
        i = rnd.randrange(4)
        old = ch.head[i]
        ch.head[i] = odd_value(rnd, old) & ((1 << 64) - 1)
        blk[2] = ch.encode()
        return "chunk %s: %d -> %d" % (names[i], old, ch.head[i])
    k = rnd.randrange(len(ch.cols))
    cid, data = ch.cols[k]
    if rnd.random() < 0.5:
        new, what = mutate_varints(rnd, data)
        if new is None:
            new, what = mutate_bytes(rnd, data)
    else:
        new, what = mutate_bytes(rnd, data)
    ch.cols[k][1] = new
    blk[2] = ch.encode()
    return "chunk column %d: %s" % (cid, what)


def mutate(rnd, header, blocks):
    """Change blocks in place; returns (what changed, keep the trailer)."""
    r = rnd.random()
    if r < 0.05:
        cut = rnd.randrange(64, len(serialize(header, blocks)))
        return "file cut at %d" % cut, cut
    if r < 0.12 and len(blocks) > 2:
        i = rnd.randrange(1, len(blocks))
        op = rnd.choice(["drop", "dup", "swap"])
        if op == "drop":
            del blocks[i]
        elif op == "dup":
            blocks.insert(i, list(blocks[i]))
        else:
            j = rnd.randrange(1, len(blocks))
            blocks[i], blocks[j] = blocks[j], blocks[i]
        for seq, b in enumerate(blocks):
            b[1] = seq
        return "block %d %s" % (i, op), True
    kinds = [b for b in blocks if b[0] in (T_CHUNK, T_DEFS)]
    if rnd.random() < 0.08:
        kinds = [b for b in blocks if b[0] == T_META]
    blk = rnd.choice(kinds)
    if blk[0] == T_CHUNK:
        return "block %d: %s" % (blk[1], mutate_chunk(rnd, blk)), True
    what = mutate_record_block(rnd, blk)
    return "block %d: %s" % (blk[1], what), True


def main():
    if len(sys.argv) != 5:
        sys.exit("usage: mutate.py TRACE OUTDIR FIRST_SEED COUNT")
    path, outdir, first, count = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    with open(path, "rb") as f:
        data = f.read()
    for seed in range(first, first + count):
        header, blocks, trailer = parse(data)
        rnd = random.Random("%d:%s" % (seed, len(data)))
        what, keep = ("unchanged", trailer) if seed == 0 else mutate(rnd, header, blocks)
        out = serialize(header, blocks, keep is True)
        if keep is not True and keep is not False:
            out = out[:keep]
        name = "m%d.mscr" % seed
        with open("%s/%s" % (outdir, name), "wb") as f:
            f.write(out)
        print(name, what)


if __name__ == "__main__":
    main()
