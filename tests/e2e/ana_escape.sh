#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A program's bytes never reach the output raw: a function name and argv
# holding ESC [2J (clear the screen) and bytes that are not UTF-8 come out
# of text as \xHH, and JSON (python3's json.load) and CSV (python3's csv on
# a strict UTF-8 decode) stay valid, with the name escaped the same way;
# so do the flame graph SVG and every export (massif, SQLite, heaptrack,
# DHAT, pprof, folded, CSV), each read by its real reader where installed.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" --go-on ana-escape MEMSCRIBE MS_PROGRAMS
want='evil\x1b[2J\xff\xc0name'

"$MEMSCRIBE" record -q -o "$WORK/t.mscr" -- "$MS_PROGRAMS/ana_escape" \
    "$(printf 'arg\033[2J\377\300end')" || { fail "record"; exit 1; }

# kind file: the check of one output.
cat >"$WORK/check.py" <<'PY'
import csv, io, json, sys
kind, path, want = sys.argv[1], sys.argv[2], sys.argv[3]
data = open(path, "rb").read()
bad = [c for c in data if (c < 0x20 and c not in b"\n\t") or c == 0x7f]
if bad:
    sys.exit("control bytes %s in the output" % sorted(set(bad)))
text = data.decode("utf-8")  # strict: raises on bytes that are not UTF-8
if any(0x80 <= ord(ch) < 0xa0 for ch in text):
    sys.exit("C1 control characters in the output")
if kind == "json":
    json.loads(text)
elif kind == "csv":
    list(csv.reader(io.StringIO(text)))
if kind != "html" and want not in text.replace("\\\\", "\\"):
    sys.exit("the escaped name %s is not in it" % want)
PY

for spec in "text report" "text leaks" "text tree" "text window" "text dump --stacks" \
    "json report --format=json" "json leaks --format=json" "json tree --format=json" \
    "json window --format=json" "json window --tree --format=json" \
    "csv leaks --format=csv" "csv report --format=csv" "csv tree --format=csv" \
    "csv window --format=csv" "html html" "text flamegraph --folded" \
    "text diff $WORK/t.mscr" "json diff --format=json $WORK/t.mscr" \
    "csv diff --format=csv $WORK/t.mscr" "html html --base $WORK/t.mscr"; do
    kind=${spec%% *}
    cmd=${spec#* }
    # shellcheck disable=SC2086 # the command's words
    "$MEMSCRIBE" $cmd "$WORK/t.mscr" >"$WORK/out" 2>"$WORK/err" ||
        { fail "$cmd: $(cat "$WORK/err")"; continue; }
    python3 "$WORK/check.py" "$kind" "$WORK/out" "$want" ||
        fail "$cmd: the output above"
done
# Exports: massif's cmd: line and labels (then read by ms_print), and
# SQLite's text columns (read back by the sqlite3 shell): escaped the same
# way, valid UTF-8.
"$MEMSCRIBE" export --to massif "$WORK/t.mscr" -o "$WORK/massif.out" 2>"$WORK/err" ||
    fail "export --to massif: $(cat "$WORK/err")"
python3 "$WORK/check.py" text "$WORK/massif.out" "$want" ||
    fail "export --to massif: the output above"
grep -qF 'cmd: '"$MS_PROGRAMS"'/ana_escape arg\x1b[2J\xff\xc0end' "$WORK/massif.out" ||
    fail "massif's cmd: line: $(grep '^cmd:' "$WORK/massif.out")"
# usage: read_back TOOL FILE: TOOL, a real reader (when installed), reads
# FILE with nothing on stderr, and what it prints is escaped.
read_back() {
    command -v "$1" >/dev/null || return 0
    "$1" "$2" >"$WORK/$1.txt" 2>"$WORK/err" && [ ! -s "$WORK/err" ] ||
        fail "$1: $(head -5 "$WORK/err")"
    python3 "$WORK/check.py" text "$WORK/$1.txt" "$want" ||
        fail "$1's output: the output above"
}
read_back ms_print "$WORK/massif.out"
"$MEMSCRIBE" export --to sqlite "$WORK/t.mscr" -o "$WORK/t.db" 2>"$WORK/err" ||
    fail "export --to sqlite: $(cat "$WORK/err")"
if command -v sqlite3 >/dev/null; then
    sqlite3 "$WORK/t.db" "SELECT value FROM meta WHERE key = 'command';
        SELECT exe, argv FROM processes; SELECT name FROM threads; SELECT path FROM modules;
        SELECT module, function, file FROM frames;" >"$WORK/sq.txt" 2>"$WORK/err" ||
        fail "sqlite3: $(cat "$WORK/err")"
    python3 "$WORK/check.py" text "$WORK/sq.txt" "$want" ||
        fail "the SQLite text columns: the output above"
    grep -qxF "$MS_PROGRAMS/ana_escape arg\x1b[2J\xff\xc0end" "$WORK/sq.txt" ||
        fail "SQLite's command: $(head -1 "$WORK/sq.txt")"
fi
# heaptrack: the X (command) line and the s (string) lines, read back by
# heaptrack_print; DHAT: its cmd and ftbl, parsed by python3 (strict UTF-8)
# and jq; pprof: its string table, read by go tool pprof; folded stacks,
# the event CSV and the flame graph SVG (xmllint: ESC is not XML).
cmdline="$MS_PROGRAMS/ana_escape arg\x1b[2J\xff\xc0end"
for spec in "text heaptrack ht" "json dhat dhat.json" "pprof pprof pb.gz" "text folded folded" \
    "csv csv csv"; do
    read -r kind to ext <<<"$spec"
    "$MEMSCRIBE" export --to "$to" "$WORK/t.mscr" -o "$WORK/x.$ext" 2>"$WORK/err" ||
        { fail "export --to $to: $(cat "$WORK/err")"; continue; }
    [ "$kind" = pprof ] && continue
    python3 "$WORK/check.py" "$kind" "$WORK/x.$ext" "$want" ||
        fail "export --to $to: the output above"
done
grep -qxF "X $cmdline" "$WORK/x.ht" ||
    fail "heaptrack's X line: $(grep '^X ' "$WORK/x.ht")"
read_back heaptrack_print "$WORK/x.ht"
python3 -c 'import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
assert d["cmd"] == sys.argv[2], d["cmd"]' "$WORK/x.dhat.json" "$cmdline" ||
    fail "DHAT's cmd"
if command -v jq >/dev/null; then
    jq -e '.ftbl | length > 1' "$WORK/x.dhat.json" >/dev/null 2>"$WORK/err" ||
        fail "jq on the DHAT file: $(cat "$WORK/err")"
fi
if command -v go >/dev/null; then
    go tool pprof -traces "$WORK/x.pb.gz" >"$WORK/pp.txt" 2>"$WORK/err" ||
        fail "go tool pprof: $(cat "$WORK/err")"
    python3 "$WORK/check.py" text "$WORK/pp.txt" "$want" ||
        fail "pprof's strings: the output above"
fi
"$MEMSCRIBE" flamegraph "$WORK/t.mscr" -o "$WORK/flame.svg" 2>"$WORK/err" ||
    fail "flamegraph: $(cat "$WORK/err")"
xmllint --noout "$WORK/flame.svg" 2>"$WORK/err" ||
    fail "the flame graph is not XML: $(head -3 "$WORK/err")"
python3 "$WORK/check.py" text "$WORK/flame.svg" "$want" ||
    fail "flamegraph: the output above"
# The command line as report shows it.
grep -qF 'arg\x1b[2J\xff\xc0end' <("$MEMSCRIBE" report "$WORK/t.mscr") ||
    fail "report does not show argv escaped"
finish "ana_escape: text, JSON, CSV, HTML, SVG and every export carry the name escaped"
