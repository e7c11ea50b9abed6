#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# memscribe export's command line: --help per format, usage errors (exit 2),
# unreadable input and failed output (exit 1, naming the file).
source "$(dirname "$0")/export_lib.sh"

"$M" export --help >"$T/help"
for f in massif heaptrack dhat pprof folded sqlite csv; do
    grep -q "^  $f " "$T/help" || fail "--help does not describe $f"
done
grep -q "Drops" "$T/help" || fail "--help says nothing about what is dropped"

syn=$(synth)
expect_exit 2 "unknown format 'callgrind'" "$M" export --to callgrind "$syn"
expect_exit 2 "say which format" "$M" export "$syn"
expect_exit 2 "unknown cost 'cpu'" "$M" export --to folded --cost cpu "$syn"
expect_exit 2 "--cost is for --to folded" "$M" export --to csv --cost bytes "$syn"
expect_exit 2 "snapshots wants" "$M" export --to massif --snapshots 1 "$syn"
expect_exit 2 "threshold wants" "$M" export --to massif --threshold 200 "$syn"
expect_exit 2 "detailed-freq wants" "$M" export --to massif --detailed-freq 0 "$syn"
expect_exit 2 "are for --to massif" "$M" export --to csv --detailed-freq 5 "$syn"
expect_exit 2 "needs -o DATABASE" "$M" export --to sqlite "$syn"
expect_exit 2 "which trace" "$M" export --to csv
expect_exit 2 "unknown or incomplete option '--bogus'" "$M" export --to csv --bogus "$syn"
expect_exit 2 "pid wants" "$M" export --to csv --pid x1 "$syn"
expect_exit 1 "no process of --pid" "$M" export --to csv --pid 999999 "$syn"
"$M" export --to csv --pid 4100 "$syn" >"$T/one.csv"
"$M" export --to csv "$syn" | cmp -s - "$T/one.csv" || fail "--pid of the only process changed the output"
expect_exit 1 "$T/none.mscr" "$M" export --to csv "$T/none.mscr"
printf 'not a trace' >"$T/junk.mscr"
expect_exit 1 "$T/junk.mscr" "$M" export --to csv "$T/junk.mscr"
expect_exit 1 "$T/no/dir/out.csv: cannot create it" "$M" export --to csv "$syn" -o "$T/no/dir/out.csv"
expect_exit 1 "/dev/full: writing failed: No space left on device" \
    "$M" export --to massif "$syn" -o /dev/full
expect_exit 1 "standard output: writing failed" sh -c "'$M' export --to csv '$syn' >/dev/full"
expect_exit 1 "$T/no/dir/x.db" "$M" export --to sqlite "$syn" -o "$T/no/dir/x.db"
expect_exit 2 "is the input trace" "$M" export --to csv "$syn" -o "$syn"
[ -s "$syn" ] || fail "the trace was truncated"

# The symbolizer's options pass through: --raw names frames module+offset.
recorded
"$M" export --to folded --raw "$T/prog.mscr" -o "$T/raw.folded"
grep -q ";export_prog+0x[0-9a-f]*;" "$T/raw.folded" || fail "--raw: $(head -2 "$T/raw.folded")"
grep -q "churn" "$T/raw.folded" && fail "--raw still names functions"

# A chunk corrupt in the middle of the trace: exit 1 with the reader's
# message, and no partial output left behind to be read as a whole one.
"$MS_BUILD/tests/unit/test_ana_export" --write-trace "$T/two.mscr" 400000
size=$(stat -c %s "$T/two.mscr")
printf '\377\377\377\377\377\377\377\377' |
    dd of="$T/two.mscr" bs=1 seek=$((size * 3 / 4)) conv=notrunc 2>/dev/null
for f in heaptrack csv sqlite; do
    expect_exit 1 "two.mscr: offset [0-9]*: " "$M" export --to "$f" "$T/two.mscr" -o "$T/two.$f"
    [ ! -e "$T/two.$f" ] || fail "$f: a partial output was left"
done

# A binary gone since the recording: frames fall back to module+offset and
# a note on stderr says why.
cp "$MS_PROGRAMS/export_prog" "$T/gone_prog"
(cd "$T" && "$M" record -o "$T/gone.mscr" -- "$T/gone_prog" >/dev/null 2>&1) || fail "record gone_prog"
rm "$T/gone_prog"
"$M" export --to folded "$T/gone.mscr" -o "$T/gone.folded" 2>"$T/err"
grep -q "gone.mscr: $T/gone_prog: .*module+offset" "$T/err" || fail "no note: $(cat "$T/err")"
grep -q ";gone_prog+0x[0-9a-f]*;" "$T/gone.folded" || fail "no module+offset frame"
echo "export_cli: ok"
