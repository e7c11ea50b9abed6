#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Wine's DLLs named without options (run_wine_names.sh, docs/windows.md
"Symbols"). OUTDIR/demo.mscr is the demo recorded by `memscribe record`.

1. With no option and no help from the environment (no WINEPREFIX or
   _NT_SYMBOL_PATH, an empty HOME): --verbose says each C:\\windows module
   was read from the Wine prefix the trace recorded, with its debug
   information, and no module got a note of another kind; report, leaks,
   vmem, tree, flamegraph, html, export (pprof, folded) and dump --stacks
   show no frame of a Wine DLL as module+offset, and (64-bit) name the
   threads' start (BaseThreadInitThunk; the text outputs with --all-frames,
   their rows leaving it out otherwise); every 10 MB commit's stack starts
   VirtualAllocEx < VirtualAlloc (kernelbase) < Buffer.
2. The same DLLs without debug information: stripped copies (DWARF and COFF
   symbols gone; the recorded SizeOfImage written back, as a build without
   -g would have its own) at the same paths under --sysroot. Each frame of
   a Wine DLL in dump --stacks is MODULE!EXPORT+0xOFFSET, EXPORT the
   nearest named export at or below the frame's address (the address
   before a return address, as for every frame) in objdump's export table,
   aliases chosen as the symbol table chooses them; and vmem names the
   10 MB commits VirtualAlloc (kernelbase.dll) < Buffer (kernelbase's
   VirtualAlloc+0x3a, the frame the issue showed as kernelbase.dll+0x3ef8a;
   VirtualAllocEx, which DWARF shows inlined there, has no frame of its
   own without debug information).
Usage: check_wine_names.py OUTDIR MEMSCRIBE TOOLPREFIX (x86_64-w64-mingw32-)"""
import gzip
import json
import os
import re
import shutil
import struct
import subprocess
import sys

BUF = 10002432  # the demo's 10 MB buffers in 4 KiB pages
errors = []


def expect(what, got, want):
    if got != want:
        errors.append(f"{what}: {got!r}, want {want!r}")


def clean_env(out):
    env = {k: v for k, v in os.environ.items()
           if k not in ("WINEPREFIX", "_NT_SYMBOL_PATH", "DEBUGINFOD_URLS")}
    env["HOME"] = f"{out}/home"
    return env


def run(env, *argv):
    r = subprocess.run(argv, env=env, capture_output=True)
    if r.returncode != 0:
        errors.append(f"{' '.join(argv)}: exit {r.returncode}: {r.stderr.decode()!r}")
    return r.stdout.decode("utf-8", "replace"), r.stderr.decode("utf-8", "replace")


def modules(env, memscribe, trace):
    """{basename: (base, recorded path)} of the process's modules."""
    hdr, _ = run(env, memscribe, "dump", "--header", trace)
    mods = {}
    for m in re.finditer(r'^# module \d+ image=0 base=0x([0-9a-f]+) path="(.*)"$', hdr, re.M):
        path = m.group(2).replace("\\\\", "\\")
        mods[path.rsplit("\\", 1)[-1]] = (int(m.group(1), 16), path)
    return mods


def wine_modules(mods):
    return {name: v for name, v in mods.items() if v[1][:3].upper() == "C:\\"}


def files_used(env, memscribe, trace, extra=()):
    """--verbose: {recorded path: (file, how, rest)}; other notes as a list."""
    _, err = run(env, memscribe, "leaks", "--verbose", *extra, trace)
    used, other = {}, []
    for line in err.splitlines():
        m = re.match(r"memscribe: leaks: note: (.*?): (/.*) \(([^)]*)\)(, .*)$", line)
        if m:
            used[m.group(1)] = (m.group(2), m.group(3), m.group(4))
        elif line.startswith("memscribe: leaks: note: "):
            other.append(line)
    return used, other


def unnamed_in(text, names):
    """Frames of the Wine DLLs shown as module+offset."""
    pat = "|".join(re.escape(n) for n in names)
    return sorted(set(re.findall(rf"(?i)(?:{pat})\+0x[0-9a-f]+", text)))


def every_output(env, memscribe, out, trace, names, want_names):
    outputs = {}
    # --all-frames: text rows leave out the threads' start (docs/symbols.md,
    # "The frame of interest"); every frame is what is checked here
    for argv in (["report", "--all-frames"], ["leaks", "--all-frames", "--top", "0"],
                 ["vmem", "--all-frames", "--top", "0"], ["tree", "--all-frames"],
                 ["dump", "--stacks"]):
        outputs[argv[0]], _ = run(env, memscribe, *argv, trace)
    for cmd, file in (("flamegraph", "fg.svg"), ("html", "report.html")):
        run(env, memscribe, cmd, "-o", f"{out}/{file}", trace)
        outputs[cmd] = open(f"{out}/{file}", encoding="utf-8", errors="replace").read()
    for fmt, file in (("pprof", "heap.pb.gz"), ("folded", "heap.folded")):
        run(env, memscribe, "export", "--to", fmt, "-o", f"{out}/{file}", trace)
        data = open(f"{out}/{file}", "rb").read()
        outputs[f"export {fmt}"] = (gzip.decompress(data) if file.endswith(".gz")
                                    else data).decode("latin-1")
    for what, text in outputs.items():
        expect(f"{what}: frames of Wine's DLLs as module+offset", unnamed_in(text, names), [])
        for want in want_names:
            if want not in text:
                errors.append(f"{what}: no frame named {want}")


def vmem_stacks(env, memscribe, trace, extra=()):
    j, _ = run(env, memscribe, "vmem", "--format", "json", "--top", "0", "--rows", "0",
               "--frames", "0", *extra, trace)
    try:
        return [l["stack"] for l in json.loads(j)["lifetimes"] if l["size"] == BUF]
    except (ValueError, KeyError):
        errors.append(f"vmem --format json: unreadable: {j[:200]!r}")
        return []


def check_named(env, memscribe, out, trace, mods, tools):
    wine = wine_modules(mods)
    expect("Wine modules in the trace", sorted(n.lower() for n in wine if n.lower() in
           ("ntdll.dll", "kernel32.dll", "kernelbase.dll")),
           ["kernel32.dll", "kernelbase.dll", "ntdll.dll"])
    used, other = files_used(env, memscribe, trace)
    expect("notes other than --verbose's", other, [])
    for name, (_, path) in wine.items():
        how = used.get(path)
        if not how or how[1] != "the Wine prefix the trace recorded" or \
                not how[2].startswith(", with debug information"):
            errors.append(f"{path}: read as {how}, want the recorded prefix's file with DWARF")
    # (32-bit stacks are walked by frame pointers, and were never run here:
    # only the 64-bit run insists on the threads' start)
    start = [] if tools.startswith("i686") else ["BaseThreadInitThunk"]
    every_output(env, memscribe, out, trace, list(wine), start)
    big = vmem_stacks(env, memscribe, trace)
    expect("10 MB commits", len(big), 12)
    top = re.compile(r"VirtualAllocEx \(memory\.c:\d+\) < VirtualAlloc \(memory\.c:\d+\) < "
                     r"\(anonymous namespace\)::Buffer\(\) \(memtest_demo_win\.cc:\d+\) < ")
    bad = [s[:3] for s in big if not top.match(" < ".join(s))]
    expect("10 MB commits not from VirtualAllocEx < VirtualAlloc < Buffer", bad, [])
    return used


def exports(tools, dll):
    """objdump's export table: ({rva: [names]}, code ranges [(start, end)] as RVAs)."""
    text = subprocess.run([tools + "objdump", "-p", "-h", dll], check=True, capture_output=True,
                          text=True).stdout
    base = int(re.search(r"^ImageBase\s+([0-9a-f]+)", text, re.M).group(1), 16)
    eat, names, part = {}, [], 0
    for line in text.splitlines():
        if "Export Address Table -- Ordinal Base" in line:
            part = 1
        elif "[Ordinal/Name Pointer] Table" in line:
            part = 2
        elif part and not line.startswith("\t"):
            part = 0
        m = re.match(r"\s*\[\s*(\d+)\] \+base\[\s*\d+\] ([0-9a-f]+) Export RVA$", line)
        if part == 1 and m:
            eat[int(m.group(1))] = int(m.group(2), 16)
        m = re.match(r"\s*\[\s*(\d+)\] (\S+)$", line)
        if part == 2 and m:
            names.append((int(m.group(1)), m.group(2)))
    code = []
    for m in re.finditer(r"^\s*\d+ (\S+)\s+([0-9a-f]+)\s+([0-9a-f]+)\s+[0-9a-f]+\s+[0-9a-f]+\s+"
                         r"\S+\n\s+([^\n]*)", text, re.M):
        if "CODE" in m.group(4):
            start = int(m.group(3), 16) - base
            code.append((start, start + int(m.group(2), 16)))
    by_rva = {}
    for idx, name in names:
        rva = eat.get(idx)  # forwarders and gaps have no Export RVA
        if rva is not None and any(s <= rva < e for s, e in code):
            by_rva.setdefault(rva, []).append(name)
    return by_rva, code


def preferred(names):
    """The alias ana_sym_table shows: fewest leading underscores, shortest, first."""
    return min(names, key=lambda n: (len(n) - len(n.lstrip("_")), len(n), n))


def strip_copy(tools, src, dst, size_of_image):
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    subprocess.run([tools + "strip", "-o", dst, src], check=True)
    data = bytearray(open(dst, "rb").read())
    opt = struct.unpack_from("<I", data, 0x3c)[0] + 24
    struct.pack_into("<I", data, opt + 56, size_of_image)
    open(dst, "wb").write(data)


def size_of_image(tools, dll):
    text = subprocess.run([tools + "objdump", "-p", dll], check=True, capture_output=True,
                          text=True).stdout
    return int(re.search(r"^SizeOfImage\s+([0-9a-f]+)", text, re.M).group(1), 16)


def check_exports(env, memscribe, out, trace, mods, used, tools):
    wine = wine_modules(mods)
    root = f"{out}/root"
    shutil.rmtree(root, ignore_errors=True)
    tables = {}
    for name, (_, path) in mods.items():
        if path not in used:
            continue
        src = used[path][0]
        dst = root + src
        if name in wine:
            strip_copy(tools, src, dst, size_of_image(tools, src))
            tables[name] = exports(tools, dst)
            expect(f"{name}: exports of the stripped copy", tables[name][0],
                   exports(tools, src)[0])
        else:  # the program and the collector, as they are
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copy(src, dst)
    sysroot = ("--sysroot", root)
    used_root, other = files_used(env, memscribe, trace, sysroot)
    expect("notes other than --verbose's, stripped", other, [])
    for name, (_, path) in wine.items():
        how = used_root.get(path)
        if not how or not how[0].startswith(root) or \
                how[2] != ", symbols only (no debug information)":
            errors.append(f"{path}: read as {how}, want the stripped copy under {root}")

    text, _ = run(env, memscribe, "dump", "--stacks", *sysroot, trace)
    nr = 0
    frame = re.compile(r"^\s+\[(\d+)\] ([0-9a-f]+) (\S+?)(?:!(\S+)\+0x([0-9a-f]+)|\+0x[0-9a-f]+)"
                       r"( .*)?$")
    for line in text.splitlines():
        m = frame.match(line)
        if not m or m.group(3) not in wine:
            continue
        addr = int(m.group(2), 16)
        name = m.group(3)
        rva = addr - wine[name][0]
        by_rva, code = tables[name]
        below = [r for r in by_rva if r <= rva - 1 and any(s <= r and rva - 1 < e for s, e in code)]
        if below:
            r = max(below)
            want = f"{name}!{preferred(by_rva[r])}+0x{rva - r:x}"
        else:
            want = f"{name}+0x{rva:x}"
        got = line.split()[2]
        nr += 1
        if got != want or m.group(6):
            errors.append(f"stripped: {line.strip()}: want {want}")
    if nr < 10:
        errors.append(f"stripped: only {nr} frames of Wine's DLLs in dump --stacks")
    # VirtualAllocEx is a frame of its own when it was not inlined
    big = vmem_stacks(env, memscribe, trace, sysroot)
    top = re.compile(r"(VirtualAllocEx \(kernelbase\.dll\) < )?VirtualAlloc \(kernelbase\.dll\) < "
                     r"\(anonymous namespace\)::Buffer\(\) \(memtest_demo_win\.cc:\d+\) < ")
    bad = [s[:3] for s in big if not top.match(" < ".join(s))]
    expect("stripped: 10 MB commits", len(big), 12)
    expect("stripped: 10 MB commits not from VirtualAlloc (kernelbase.dll) < Buffer", bad, [])
    print(f"check_wine_names: {nr} frames of Wine's DLLs named by their exports")


def main():
    out, memscribe, tools = sys.argv[1:]
    trace = f"{out}/demo.mscr"
    env = clean_env(out)
    mods = modules(env, memscribe, trace)
    used = check_named(env, memscribe, out, trace, mods, tools)
    check_exports(env, memscribe, out, trace, mods, used, tools)
    for e in errors:
        print("check_wine_names:", e)
    sys.exit(1 if errors else 0)


main()
