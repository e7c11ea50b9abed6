#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The leaks of win_prog_pdb.exe (run_pdb.sh) named from its PDB: each
SITE-<name> line of the source is the leaf frame inside the program of a
leak row with known bytes and blocks. The PDB is moved between the places
the symbolizer looks (the CodeView path, an srv* symbol store and a plain
directory in _NT_SYMBOL_PATH, a --debug-dir, the same store and directory
given by --symbol-path, which is searched before _NT_SYMBOL_PATH: --verbose
names the PDB taken), then replaced by a truncated,
a garbage and another build's PDB, which must each be named in a note and
leave the frames as module+offset.
Usage: check_pdb.py SOURCE OUTDIR MEMSCRIBE"""
import json
import os
import re
import shutil
import struct
import subprocess
import sys

errors = []
# site -> (bytes, blocks, function)
SITES = {"heap": (4242, 1, "pdb_heap_leak"), "malloc": (1717, 1, "pdb_malloc_leak"),
         "loop": (201, 2, "pdb_loop_leak")}


def site_lines(source):
    lines = {}
    for n, text in enumerate(open(source), 1):
        m = re.search(r"SITE-(\w+)", text)
        if m:
            lines[m.group(1)] = n
    return lines


def leaks(memscribe, trace, env, extra=()):
    r = subprocess.run([memscribe, "leaks", "--format", "json", "--top", "0", *extra, trace],
                       env=env, capture_output=True, text=True)
    if r.returncode != 0:
        errors.append(f"leaks exit {r.returncode}: {r.stderr.strip()}")
        return {"stacks": []}, r.stderr
    return json.loads(r.stdout), r.stderr


def program_leaf(stack):
    """The first frame that is not Wine's or the C runtime's."""
    for f in stack:
        if "pdb_" in f or "win_prog_pdb.exe" in f:
            return f
    return None


def check_named(case, memscribe, trace, lines, env, extra=()):
    j, err = leaks(memscribe, trace, env, extra)
    for site, (size, blocks, fn) in SITES.items():
        want = f"{fn} (win_prog_pdb.c:{lines[site]})"
        rows = [s for s in j["stacks"] if s["leaked_bytes"] == size and s["leaked_blocks"] == blocks
                and program_leaf(s["stack"]) is not None
                and program_leaf(s["stack"]).startswith(want)]
        if len(rows) != 1:
            got = [(s["leaked_bytes"], s["leaked_blocks"], program_leaf(s["stack"])) for s in j["stacks"]]
            errors.append(f"{case}: no single row of {size} bytes in {blocks} blocks at {want}; "
                          f"rows {got}")
    # main called every site: the next frame is main, also named with its line
    for s in j["stacks"]:
        if s["leaked_bytes"] == 4242:
            if not any(re.match(r"main \(win_prog_pdb\.c:\d+\)", f) for f in s["stack"]):
                errors.append(f"{case}: main missing under pdb_heap_leak: {s['stack']}")
    if "win_prog_pdb" in err and "not used" in err:
        errors.append(f"{case}: unexpected note: {err.strip()}")


def check_unnamed(case, memscribe, trace, env, note):
    """Text output (notes are printed with it, on stderr)."""
    r = subprocess.run([memscribe, "leaks", "--top", "0", "--frames", "0", trace], env=env,
                       capture_output=True, text=True)
    if r.returncode != 0:
        errors.append(f"{case}: leaks exit {r.returncode}: {r.stderr.strip()}")
    notes = [l for l in r.stderr.splitlines() if l.startswith("memscribe: leaks: note: ")]
    if not any(note in l for l in notes):
        errors.append(f"{case}: stderr lacks {note!r}: {r.stderr.strip()!r}")
    named = [fn for _, _, fn in SITES.values() if fn in r.stdout]
    if named:
        errors.append(f"{case}: frames named without a usable PDB: {named}")
    if "win_prog_pdb.exe+0x" not in r.stdout:
        errors.append(f"{case}: no module+offset frame of win_prog_pdb.exe")


def store_dir(exe):
    """GUID and age as a symbol store names the directory, from the PE."""
    data = open(exe, "rb").read()
    i = data.index(b"RSDS")
    d1, d2, d3 = struct.unpack_from("<IHH", data, i + 4)
    d4 = data[i + 12:i + 20]
    age = struct.unpack_from("<I", data, i + 20)[0]
    return f"{d1:08X}{d2:04X}{d3:04X}" + d4.hex().upper() + f"{age:X}"


def main():
    source, out, memscribe = sys.argv[1:]
    lines = site_lines(source)
    trace = f"{out}/pdb.mscr"
    pdb = f"{out}/bin/win_prog_pdb.pdb"
    env = {k: v for k, v in os.environ.items() if k != "_NT_SYMBOL_PATH"}
    # rerunnable on the same OUTDIR: start from the PDB lld wrote
    good = f"{out}/good.pdb"
    if not os.path.exists(good):
        shutil.copy(pdb, good)
    shutil.copy(good, pdb)
    for d in ("store", "flat"):
        shutil.rmtree(f"{out}/{d}", ignore_errors=True)
    check_named("CodeView path", memscribe, trace, lines, env)

    # away from the CodeView path: a symbol store (srv*cache*server)
    store = f"{out}/store/win_prog_pdb.pdb/{store_dir(out + '/bin/win_prog_pdb.exe')}"
    os.makedirs(store)
    shutil.move(pdb, f"{store}/win_prog_pdb.pdb")
    check_unnamed("PDB missing", memscribe, trace, env, f"win_prog_pdb.exe: its PDB {pdb} not found")
    srv = dict(env, _NT_SYMBOL_PATH=f"{out}/none;srv*{out}/store*https://msdl.microsoft.com/download/symbols")
    check_named("srv* store", memscribe, trace, lines, srv)
    # a plain directory, in Windows form (Z:\ is /)
    os.makedirs(f"{out}/flat")
    shutil.copy(f"{store}/win_prog_pdb.pdb", f"{out}/flat/win_prog_pdb.pdb")
    flat = dict(env, _NT_SYMBOL_PATH="Z:" + f"{out}/flat".replace("/", "\\"))
    check_named("plain dir", memscribe, trace, lines, flat)
    check_named("--debug-dir", memscribe, trace, lines, env, ("--debug-dir", f"{out}/flat"))
    server = "https://msdl.microsoft.com/download/symbols"
    check_named("--symbol-path srv*", memscribe, trace, lines, env,
                ("--symbol-path", f"srv*{out}/store*{server}"))
    check_named("--symbol-path dir", memscribe, trace, lines, env,
                ("--symbol-path", f"{out}/none;{out}/flat"))
    # both: --symbol-path's store is taken, not _NT_SYMBOL_PATH's directory
    for case, extra, taken in [
            ("_NT_SYMBOL_PATH alone", (), f"{out}/flat/win_prog_pdb.pdb"),
            ("--symbol-path first", ("--symbol-path", f"srv*{out}/store*{server}"),
             f"{store}/win_prog_pdb.pdb")]:
        _, err = leaks(memscribe, trace, flat, ("--verbose", *extra))
        want = f"win_prog_pdb.exe: {out}/bin/win_prog_pdb.exe (the recorded path)"
        if not any(l.startswith("memscribe: leaks: note: ") and want in l
                   and l.endswith(f", and its PDB {taken}") for l in err.splitlines()):
            errors.append(f"{case}: --verbose does not say the PDB is {taken}: {err.strip()!r}")

    # bad PDBs where the CodeView record points: named, not used
    data = open(good, "rb").read()
    for case, data, note in [
            ("truncated", data[:len(data) // 3], f"{pdb}: "),
            ("garbage", b"\x00" * 4096, f"{pdb}: not a PDB"),
            ("another build", open(f"{out}/other/win_prog_pdb.pdb", "rb").read(),
             f"{pdb}: another GUID or age")]:
        open(pdb, "wb").write(data)
        check_unnamed(case, memscribe, trace, env, note)
    shutil.copy(good, pdb)
    for e in errors:
        print("check_pdb:", e)
    sys.exit(1 if errors else 0)


main()
