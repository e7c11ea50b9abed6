#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A program's bytes never reach the output raw: a function name and argv
# holding ESC [2J (clear the screen) and bytes that are not UTF-8 come out
# of text as \xHH, and JSON (python3's json.load) and CSV (python3's csv on
# a strict UTF-8 decode) stay valid, with the name escaped the same way.
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
    "csv window --format=csv" "html html"; do
    kind=${spec%% *}
    cmd=${spec#* }
    # shellcheck disable=SC2086 # the command's words
    "$MEMSCRIBE" $cmd "$tmp/t.mscr" >"$tmp/out" 2>"$tmp/err" ||
        { echo "FAIL: $cmd: $(cat "$tmp/err")"; fails=$((fails + 1)); continue; }
    python3 "$tmp/check.py" "$kind" "$tmp/out" "$want" ||
        { echo "FAIL: $cmd: the output above"; fails=$((fails + 1)); }
done
# The command line as report shows it.
"$MEMSCRIBE" report "$tmp/t.mscr" | grep -qF 'arg\x1b[2J\xff\xc0end' ||
    { echo "FAIL: report does not show argv escaped"; fails=$((fails + 1)); }
[ "$fails" -eq 0 ] && echo "ana_escape: text, JSON, CSV and HTML carry the name escaped"
exit $((fails > 0))
