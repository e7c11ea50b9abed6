#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Turn an X window dump (`xwd -silent`, of a window or the root) into a
PNG, with python3 alone (no ImageMagick): the viewer tests' screenshots.

usage: xwd_png.py IN.xwd OUT.png [--half]

Reads the ZPixmap dumps an Xvfb screen of depth 24 gives (24 or 32 bits
per pixel, either byte order, red/green/blue masks as the header says).
--half writes every second pixel of every second row: the small copies
kept under docs/. Exits 1 with a message on a dump it cannot read.
"""
import struct
import sys
import zlib


def read_xwd(data):
    fields = struct.unpack(">25I", data[:100])
    (header_size, version, fmt, _depth, width, height, _xoff, byte_order, _unit, _bit_order,
     _pad, bpp, bytes_per_line, _vclass, red_mask, green_mask, blue_mask, _bits_rgb,
     _cmap_entries, ncolors) = fields[:20]
    if version != 7 or fmt != 2 or bpp not in (24, 32):
        raise ValueError("not a 24- or 32-bit ZPixmap dump (version %d, format %d, %d bits per pixel)"
                         % (version, fmt, bpp))
    size = bpp // 8
    start = header_size + ncolors * 12
    if len(data) < start + bytes_per_line * height:
        raise ValueError("truncated: %d bytes, %d wanted" % (len(data), start + bytes_per_line * height))
    # Where each colour sits in a pixel's four bytes, in file order.
    def byte_of(mask):
        shift = (mask & -mask).bit_length() - 1
        return shift // 8 if byte_order == 0 else size - 1 - shift // 8
    offs = [byte_of(m) for m in (red_mask, green_mask, blue_mask)]
    rows = []
    for y in range(height):
        row = data[start + y * bytes_per_line:start + y * bytes_per_line + width * size]
        rgb = bytearray(width * 3)
        for c, off in enumerate(offs):
            rgb[c::3] = row[off::size]
        rows.append(bytes(rgb))
    return width, height, rows


def write_png(path, width, height, rows):
    def chunk(kind, body):
        return (struct.pack(">I", len(body)) + kind + body +
                struct.pack(">I", zlib.crc32(kind + body) & 0xffffffff))
    raw = b"".join(b"\0" + r for r in rows)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n")
        f.write(chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)))
        f.write(chunk(b"IDAT", zlib.compress(raw, 9)))
        f.write(chunk(b"IEND", b""))


def main():
    if len(sys.argv) not in (3, 4) or (len(sys.argv) == 4 and sys.argv[3] != "--half"):
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        sys.exit(2)
    try:
        width, height, rows = read_xwd(open(sys.argv[1], "rb").read())
    except (OSError, ValueError, struct.error) as e:
        print("xwd_png: %s: %s" % (sys.argv[1], e), file=sys.stderr)
        sys.exit(1)
    if len(sys.argv) == 4:
        rows = [bytes(b"".join(r[i:i + 3] for i in range(0, len(r), 6))) for r in rows[::2]]
        width, height = (width + 1) // 2, len(rows)
    write_png(sys.argv[2], width, height, rows)


if __name__ == "__main__":
    main()
