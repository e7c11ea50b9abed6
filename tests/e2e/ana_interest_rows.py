#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Rows that reach the user's code (issue 59, item 2): report's text tables
read against report's JSON of the same trace and options, row by row.

usage: ana_interest_rows.py REPORT.txt REPORT.json CHECK [ARGS...]

CHECK names:
  names FN...   every row whose JSON stack holds one of the functions FN
                names it in its text row (the row's printed items), and its
                JSON "interest" is that frame
  early WIDTH   rows of one table whose frames of interest (JSON "interest")
                differ, differ within their first WIDTH characters, and each
                row names its frame of interest (rows of one frame of
                interest that would read alike show more of their stacks)
  argv          each process whose argv names a C source file (a word
                ending in .c) keeps that file's name in the command column
Prints a line per table checked; exits 1 with the rows that fail.
"""
import json
import re
import sys

TABLES = {"peak contribution": "peak", "leaked bytes": "leaked",
          "number of allocations": "allocations", "temporary allocations": "temporary"}


def text_sections(path):
    """{section: {table: [call site cells]}}: section "all processes", a
    program's exe or "pid N exe"."""
    out, section, table, col = {}, None, None, None
    for line in open(path):
        line = line.rstrip("\n")
        m = re.match(r"^(\S.*?)(?: \(\d+ processes\))?$", line)
        if m and not line.startswith("memscribe") and not line.startswith("command:") and \
                not line.startswith("programs") and not line.startswith("processes"):
            section, table = m.group(1), None
            out.setdefault(section, {})
            continue
        m = re.match(r"^  top call sites by (.*):$", line)
        if m and section is not None:
            table = TABLES.get(m.group(1))
            col = None
            continue
        if table and col is None and "call site" in line:
            col = line.index("call site")
            out[section][table] = []
            continue
        if table and col is not None:
            if not line.strip():
                table = None
                continue
            out[section][table].append(line[col:])
    return out


def json_sections(rep):
    out = {"all processes": rep.get("total", {}).get("top", {})}
    for p in rep.get("programs") or []:
        out[p["exe"]] = p["top"]
    for p in rep.get("processes") or []:
        out["pid %d %s" % (p["pid"], (p["exe"] or "").rsplit("/", 1)[-1])] = p["top"]
    return out


def pairs(txt, rep):
    """(section, table, text cell, JSON row) of every row of both."""
    js = json_sections(rep)
    for section, tables in txt.items():
        if section not in js:
            continue
        for table, cells in tables.items():
            rows = js[section].get(table) or []
            if len(rows) != len(cells):
                sys.exit("%s: %s: %d text rows, %d JSON rows" % (section, table, len(cells), len(rows)))
            for cell, row in zip(cells, rows):
                yield section, table, cell, row


def main():
    txt, rep, check, args = text_sections(sys.argv[1]), json.load(open(sys.argv[2])), sys.argv[3], sys.argv[4:]
    bad, n = [], 0
    if check == "names":
        for section, table, cell, row in pairs(txt, rep):
            want = [f for f in row["stack"] if any(fn in f for fn in args)]
            if not want:
                continue
            n += 1
            if not any(fn in cell for fn in args):
                bad.append("%s: %s: the row does not name %s: %s" % (section, table, " or ".join(args), cell))
            if row["stack"][row["interest"]] != want[0]:
                bad.append("%s: %s: interest %d is %r, not %r" % (section, table, row["interest"],
                                                                 row["stack"][row["interest"]], want[0]))
        if not n:
            bad.append("no row holds %s" % " or ".join(args))
        print("%d rows holding %s name it" % (n, " or ".join(args)))
    elif check == "early":
        width = int(args[0])
        by_table = {}
        for section, table, cell, row in pairs(txt, rep):
            n += 1
            label = row["stack"][row["interest"]]
            if label not in cell:
                bad.append("%s: %s: the frame of interest %r not in %r" % (section, table, label, cell))
            by_table.setdefault((section, table), []).append((cell[:width], label, cell))
        for (section, table), rows in by_table.items():
            for i, (p1, l1, c1) in enumerate(rows):
                for p2, l2, c2 in rows[i + 1:]:
                    if p1 == p2 and l1 != l2:
                        bad.append("%s: %s: two rows alike in %d characters:\n  %s\n  %s" %
                                   (section, table, width, c1, c2))
        print("%d rows name their frames of interest, different ones within %d characters" % (n, width))
    elif check == "argv":
        lines = open(sys.argv[1]).read().splitlines()
        for p in rep.get("process_table") or []:
            files = [w for w in p["argv"] if w.endswith(".c") and not w.startswith("-")]
            if not files:
                continue
            n += 1
            line = [l for l in lines if re.match(r"^\s+%d\s+%d\s" % (p["pid"], p["ppid"]), l)]
            if len(line) != 1:
                bad.append("pid %d: %d lines in the process table" % (p["pid"], len(line)))
                continue
            for f in files:
                if f.rsplit("/", 1)[-1] not in line[0]:
                    bad.append("pid %d: its command drops %s: %s" % (p["pid"], f, line[0].strip()))
        if not n:
            bad.append("no process compiled a .c file")
        print("%d compiles keep their source files' names" % n)
    for b in bad:
        print("FAIL: " + b, file=sys.stderr)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
