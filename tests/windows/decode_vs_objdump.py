#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The hook engine's decoder against objdump on real compiler output: the
first instructions of every exported function of Wine's x86-64 ntdll and
kernelbase must have the lengths objdump gives them. The decoder may refuse
an instruction (the hook is then not installed), never misjudge one.
Usage: decode_vs_objdump.py WIN_DECLEN WINE_X86_64_WINDOWS_DIR"""
import os
import re
import struct
import subprocess
import sys
import tempfile

PREFIX = 48  # bytes of each function looked at


def exports(path):
    """(name, bytes) of each exported function in an executable section."""
    d = open(path, "rb").read()
    pe = struct.unpack_from("<I", d, 0x3C)[0]
    nsec, = struct.unpack_from("<H", d, pe + 6)
    optsz, = struct.unpack_from("<H", d, pe + 20)
    opt = pe + 24
    ddir = opt + (112 if struct.unpack_from("<H", d, opt)[0] == 0x20B else 96)
    erva, _ = struct.unpack_from("<II", d, ddir)
    secs = [struct.unpack_from("<8sIIIIIIHHI", d, opt + optsz + 40 * i) for i in range(nsec)]

    def off(rva, code_only=False):
        for s in secs:
            if s[2] <= rva < s[2] + max(s[1], s[3]):
                if code_only and not s[9] & 0x20000000:  # IMAGE_SCN_MEM_EXECUTE
                    return None
                return rva - s[2] + s[4]
        return None
    eo = off(erva)
    _, nn, fa, na, oa = struct.unpack_from("<IIIII", d, eo + 20)
    out = []
    for i in range(nn):
        name_off = off(struct.unpack_from("<I", d, off(na) + 4 * i)[0])
        name = d[name_off:d.index(b"\0", name_off)].decode()
        ordinal, = struct.unpack_from("<H", d, off(oa) + 2 * i)
        rva, = struct.unpack_from("<I", d, off(fa) + 4 * ordinal)
        o = off(rva, code_only=True)
        if o is not None:
            out.append((name, d[o:o + PREFIX]))
    return out


def objdump_lengths(code, tmp):
    with open(tmp, "wb") as f:
        f.write(code)
    text = subprocess.run(["objdump", "-D", "-b", "binary", "-mi386:x86-64", tmp],
                          capture_output=True, text=True, check=True).stdout
    starts = [int(m.group(1), 16) for m in re.finditer(r"^\s+([0-9a-f]+):\t[0-9a-f ]+\t", text, re.M)]
    return [b - a for a, b in zip(starts, starts[1:])]


def main():
    declen, wine_dir = sys.argv[1:]
    checked = refused = 0
    bad = []
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = os.path.join(tmpdir, "f.bin")
        for dll in ("ntdll.dll", "kernelbase.dll"):
            funcs = exports(os.path.join(wine_dir, dll))
            hexes = "".join(" ".join("%02x" % c for c in code) + "\n" for _, code in funcs)
            ours = subprocess.run([declen, "64"], input=hexes, capture_output=True, text=True,
                                  check=True).stdout.splitlines()
            if len(ours) != len(funcs):
                print("decode_vs_objdump: %s: %d lines for %d functions" % (dll, len(ours), len(funcs)))
                return 1
            for (name, code), line in zip(funcs, ours):
                lens = []
                for w in line.split():
                    if w.startswith("E"):
                        refused += 1
                        break
                    lens.append(int(w))
                ref = objdump_lengths(code, tmp)
                checked += 1
                if lens != ref[:len(lens)]:
                    bad.append("%s!%s: decoder %s, objdump %s (%s)" % (
                        dll, name, lens, ref[:len(lens)], code[:16].hex(" ")))
    for b in bad[:20]:
        print("decode_vs_objdump: " + b)
    print("decode_vs_objdump: %d functions, %d differ, %d refused an instruction" % (
        checked, len(bad), refused))
    return 1 if bad or checked < 2000 else 0


if __name__ == "__main__":
    sys.exit(main())
