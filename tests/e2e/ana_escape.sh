#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A program's bytes never reach the output raw: a function name and argv
# holding ESC [2J (clear the screen) and bytes that are not UTF-8 come out
# of text as \xHH, and JSON (python3's json.load) and CSV (python3's csv on
# a strict UTF-8 decode) stay valid, with the name escaped the same way;
# so do the flame graph SVG and every export (massif, SQLite, heaptrack,
# DHAT, pprof, folded, CSV), each read by its real reader where installed.
set -uo pipefail
: "${MEMSCRIBE:?}" "${MS_PROGRAMS:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
want='evil\x1b[2J\xff\xc0name'

"$MEMSCRIBE" record -q -o "$tmp/t.mscr" -- "$MS_PROGRAMS/ana_escape" \
    "$(printf 'arg\033[2J\377\300end')" || { echo "FAIL: record"; exit 1; }

# kind file: the check of one output.
cat >"$tmp/check.py" <<'PY'
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
    "text diff $tmp/t.mscr" "json diff --format=json $tmp/t.mscr" \
    "csv diff --format=csv $tmp/t.mscr" "html html --base $tmp/t.mscr"; do
    kind=${spec%% *}
    cmd=${spec#* }
    # shellcheck disable=SC2086 # the command's words
    "$MEMSCRIBE" $cmd "$tmp/t.mscr" >"$tmp/out" 2>"$tmp/err" ||
        { echo "FAIL: $cmd: $(cat "$tmp/err")"; fails=$((fails + 1)); continue; }
    python3 "$tmp/check.py" "$kind" "$tmp/out" "$want" ||
        { echo "FAIL: $cmd: the output above"; fails=$((fails + 1)); }
done
# Exports: massif's cmd: line and labels (then read by ms_print), and
# SQLite's text columns (read back by the sqlite3 shell): escaped the same
# way, valid UTF-8.
"$MEMSCRIBE" export --to massif "$tmp/t.mscr" -o "$tmp/massif.out" 2>"$tmp/err" ||
    { echo "FAIL: export --to massif: $(cat "$tmp/err")"; fails=$((fails + 1)); }
python3 "$tmp/check.py" text "$tmp/massif.out" "$want" ||
    { echo "FAIL: export --to massif: the output above"; fails=$((fails + 1)); }
grep -qF 'cmd: '"$MS_PROGRAMS"'/ana_escape arg\x1b[2J\xff\xc0end' "$tmp/massif.out" ||
    { echo "FAIL: massif's cmd: line: $(grep '^cmd:' "$tmp/massif.out")"; fails=$((fails + 1)); }
if command -v ms_print >/dev/null; then
    ms_print "$tmp/massif.out" >"$tmp/ms.txt" 2>"$tmp/err" && [ ! -s "$tmp/err" ] ||
        { echo "FAIL: ms_print: $(cat "$tmp/err")"; fails=$((fails + 1)); }
    python3 "$tmp/check.py" text "$tmp/ms.txt" "$want" ||
        { echo "FAIL: ms_print's output: the output above"; fails=$((fails + 1)); }
fi
"$MEMSCRIBE" export --to sqlite "$tmp/t.mscr" -o "$tmp/t.db" 2>"$tmp/err" ||
    { echo "FAIL: export --to sqlite: $(cat "$tmp/err")"; fails=$((fails + 1)); }
if command -v sqlite3 >/dev/null; then
    sqlite3 "$tmp/t.db" "SELECT value FROM meta WHERE key = 'command';
        SELECT exe, argv FROM processes; SELECT name FROM threads; SELECT path FROM modules;
        SELECT module, function, file FROM frames;" >"$tmp/sq.txt" 2>"$tmp/err" ||
        { echo "FAIL: sqlite3: $(cat "$tmp/err")"; fails=$((fails + 1)); }
    python3 "$tmp/check.py" text "$tmp/sq.txt" "$want" ||
        { echo "FAIL: the SQLite text columns: the output above"; fails=$((fails + 1)); }
    grep -qxF "$MS_PROGRAMS/ana_escape arg\x1b[2J\xff\xc0end" "$tmp/sq.txt" ||
        { echo "FAIL: SQLite's command: $(head -1 "$tmp/sq.txt")"; fails=$((fails + 1)); }
fi
# heaptrack: the X (command) line and the s (string) lines, read back by
# heaptrack_print; DHAT: its cmd and ftbl, parsed by python3 (strict UTF-8)
# and jq; pprof: its string table, read by go tool pprof; folded stacks,
# the event CSV and the flame graph SVG (xmllint: ESC is not XML).
cmdline="$MS_PROGRAMS/ana_escape arg\x1b[2J\xff\xc0end"
for spec in "text heaptrack ht" "json dhat dhat.json" "pprof pprof pb.gz" "text folded folded" \
    "csv csv csv"; do
    read -r kind to ext <<<"$spec"
    "$MEMSCRIBE" export --to "$to" "$tmp/t.mscr" -o "$tmp/x.$ext" 2>"$tmp/err" ||
        { echo "FAIL: export --to $to: $(cat "$tmp/err")"; fails=$((fails + 1)); continue; }
    [ "$kind" = pprof ] && continue
    python3 "$tmp/check.py" "$kind" "$tmp/x.$ext" "$want" ||
        { echo "FAIL: export --to $to: the output above"; fails=$((fails + 1)); }
done
grep -qxF "X $cmdline" "$tmp/x.ht" ||
    { echo "FAIL: heaptrack's X line: $(grep '^X ' "$tmp/x.ht")"; fails=$((fails + 1)); }
if command -v heaptrack_print >/dev/null; then
    heaptrack_print "$tmp/x.ht" >"$tmp/htp.txt" 2>"$tmp/err" && [ ! -s "$tmp/err" ] ||
        { echo "FAIL: heaptrack_print: $(head -5 "$tmp/err")"; fails=$((fails + 1)); }
    python3 "$tmp/check.py" text "$tmp/htp.txt" "$want" ||
        { echo "FAIL: heaptrack_print's output: the output above"; fails=$((fails + 1)); }
fi
python3 -c 'import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
assert d["cmd"] == sys.argv[2], d["cmd"]' "$tmp/x.dhat.json" "$cmdline" ||
    { echo "FAIL: DHAT's cmd"; fails=$((fails + 1)); }
if command -v jq >/dev/null; then
    jq -e '.ftbl | length > 1' "$tmp/x.dhat.json" >/dev/null 2>"$tmp/err" ||
        { echo "FAIL: jq on the DHAT file: $(cat "$tmp/err")"; fails=$((fails + 1)); }
fi
if command -v go >/dev/null; then
    go tool pprof -traces "$tmp/x.pb.gz" >"$tmp/pp.txt" 2>"$tmp/err" ||
        { echo "FAIL: go tool pprof: $(cat "$tmp/err")"; fails=$((fails + 1)); }
    python3 "$tmp/check.py" text "$tmp/pp.txt" "$want" ||
        { echo "FAIL: pprof's strings: the output above"; fails=$((fails + 1)); }
fi
"$MEMSCRIBE" flamegraph "$tmp/t.mscr" -o "$tmp/flame.svg" 2>"$tmp/err" ||
    { echo "FAIL: flamegraph: $(cat "$tmp/err")"; fails=$((fails + 1)); }
xmllint --noout "$tmp/flame.svg" 2>"$tmp/err" ||
    { echo "FAIL: the flame graph is not XML: $(head -3 "$tmp/err")"; fails=$((fails + 1)); }
python3 "$tmp/check.py" text "$tmp/flame.svg" "$want" ||
    { echo "FAIL: flamegraph: the output above"; fails=$((fails + 1)); }
# The command line as report shows it.
"$MEMSCRIBE" report "$tmp/t.mscr" | grep -qF 'arg\x1b[2J\xff\xc0end' ||
    { echo "FAIL: report does not show argv escaped"; fails=$((fails + 1)); }
[ "$fails" -eq 0 ] && echo "ana_escape: text, JSON, CSV, HTML, SVG and every export carry the name escaped"
exit $((fails > 0))
