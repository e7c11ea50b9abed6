#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A pprof profile (gzipped profile.proto) as sorted text lines, for
comparing two profiles whatever their order of fields and their ids: the
header's fields, the mappings, then one line per sample (its values, its
labels, its stack as each location's address, mapping and lines by
name). Usage: pprof_samples.py [--digest] PROFILE.pb.gz; --digest: each
line's SHA-1 instead (a large profile's lines run to gigabytes)."""
import gzip
import hashlib
import sys


def varint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return v, i


def fields(b):
    """(field, value) of a message: ints, or bytes for length-delimited."""
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        wire = key & 7
        if wire == 0:
            v, i = varint(b, i)
        elif wire == 2:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
        else:
            sys.exit("pprof_samples: wire type %d" % wire)
        yield key >> 3, v


def packed(v):
    """A repeated varint field, packed (bytes) or not (an int)."""
    if isinstance(v, int):
        return [v]
    out, i = [], 0
    while i < len(v):
        x, i = varint(v, i)
        out.append(x)
    return out


def signed(x):
    return x - (1 << 64) if x >= 1 << 63 else x


class Digests(list):
    """A list of lines kept as their SHA-1."""

    def append(self, line):
        super().append(hashlib.sha1(line.encode("utf-8", "surrogateescape")).hexdigest())


def main(path, digest):
    with gzip.open(path, "rb") as f:
        data = f.read()
    strs, samples, locs, funcs, maps, head = [], [], {}, {}, {}, []
    for field, v in fields(data):
        if field == 6:
            strs.append(v.decode("utf-8", "surrogateescape"))
        elif field == 2:
            samples.append(v)
        elif field == 4:
            d = {}
            lines = []
            for k, x in fields(v):
                if k == 4:
                    lines.append(dict(fields(x)))
                else:
                    d[k] = x
            locs[d.get(1, 0)] = (d, lines)
        elif field == 5:
            d = dict(fields(v))
            funcs[d.get(1, 0)] = d
        elif field == 3:
            d = dict(fields(v))
            maps[d.get(1, 0)] = d
        else:
            head.append((field, v))
    s = lambda i: strs[i] if i < len(strs) else "?%d" % i
    out = []
    if digest:
        out = Digests()
    for field, v in head:
        if field in (1, 11):  # sample and period types
            d = dict(fields(v))
            out.append("type %d %s/%s" % (field, s(d.get(1, 0)), s(d.get(2, 0))))
        elif field in (13, 14):  # comment, default sample type: string indexes
            out.append("head %d %s" % (field, s(v)))
        else:
            out.append("head %d %s" % (field, v))
    for d in maps.values():
        out.append("mapping %x-%x+%x %s %s %s" % (d.get(2, 0), d.get(3, 0), d.get(4, 0),
                                                 s(d.get(5, 0)), s(d.get(6, 0)),
                                                 [d.get(k, 0) for k in (7, 8, 9, 10)]))

    def loc(i):
        d, lines = locs[i]
        m = maps.get(d.get(2, 0), {})
        names = []
        for ln in lines:
            f = funcs[ln.get(1, 0)]
            names.append("%s|%s|%s:%d" % (s(f.get(2, 0)), s(f.get(3, 0)), s(f.get(4, 0)),
                                         signed(ln.get(2, 0))))
        return "%x@%s{%s}" % (d.get(3, 0), s(m.get(5, 0)) if m else "-", ",".join(names))

    for v in samples:
        ids, vals, labels = [], [], []
        for k, x in fields(v):
            if k == 1:
                ids += packed(x)
            elif k == 2:
                vals += [signed(y) for y in packed(x)]
            elif k == 3:
                d = dict(fields(x))
                labels.append("%s=%s" % (s(d.get(1, 0)), s(d.get(2, 0))))
        out.append("sample %s [%s] %s" % (vals, ",".join(sorted(labels)),
                                          " ".join(loc(i) for i in ids)))
    if not strs or strs[0] != "":
        out.append("error: string_table[0] is not empty")
    for line in sorted(out):
        print(line)


if __name__ == "__main__":
    main(sys.argv[-1], sys.argv[1] == "--digest")
