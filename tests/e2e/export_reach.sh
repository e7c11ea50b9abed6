#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The reachability classes of record --reach in the exports that have a
# place for them (docs/export.md): pprof's samples labelled leak_class
# (read by go tool pprof, -tagfocus per class), SQLite's and CSV's
# leak_class column (read by the sqlite3 shell and by awk). Each class's
# bytes and blocks there must be `memscribe leaks`'s, and the totals stay
# what they are without classes.
# shellcheck source=tests/e2e/export_lib.sh
source "$(dirname "$0")/export_lib.sh"
need go
need jq
need sqlite3
export HOME=$T GOCACHE=$T/gocache GOFLAGS=-mod=mod GOTOOLCHAIN=local

"$M" record --reach -q -o "$T/r.mscr" -- "$MS_PROGRAMS/rec_reach" >/dev/null ||
    fail "record --reach failed"
"$M" leaks --format=json "$T/r.mscr" >"$T/leaks.json" || fail "leaks"
# "bytes blocks" of a class (its JSON key stem) in leaks' numbers.
want() { jq -r ".processes[0].reach | \"\(.$1_bytes) \(.$1_blocks)\"" "$T/leaks.json"; }
expect_eq "a lost block at least" "$(want definitely_lost)" "1003 1"
LEAKED=$(jq '.processes[0].leaked_bytes' "$T/leaks.json")

# pprof: -tagfocus keeps the samples of one class.
total() { # profile sample-type [tagfocus]
    go tool pprof -top -unit=B -sample_index="$2" ${3:+-tagfocus=leak_class=$3} "$1" \
        >"$T/pp.out" 2>"$T/pp.err" || fail "go tool pprof failed: $(cat "$T/pp.err")"
    if [ -n "${3:-}" ]; then
        sed -n 's/^Showing nodes accounting for \([0-9]*\)B*, .*/\1/p' "$T/pp.out"
    else
        sed -n 's/.*Total samples = \([0-9]*\)B* *$/\1/p' "$T/pp.out"
    fi
}
"$M" export --to pprof "$T/r.mscr" -o "$T/r.pb.gz" || fail "export pprof"
expect_eq "pprof inuse_space, all classes" "$(total "$T/r.pb.gz" inuse_space)" "$LEAKED"
for c in definitely_lost indirectly_lost possibly_lost still_reachable; do
    read -r bytes blocks <<<"$(want $c)"
    expect_eq "pprof $c bytes" "$(total "$T/r.pb.gz" inuse_space $c)" "$bytes"
    expect_eq "pprof $c blocks" "$(total "$T/r.pb.gz" inuse_objects $c)" "$blocks"
done

# SQLite and CSV: the class of each block live at the end.
"$M" export --to sqlite "$T/r.mscr" -o "$T/r.db" || fail "export sqlite"
"$M" export --to csv "$T/r.mscr" -o "$T/r.csv" || fail "export csv"
expect_eq "csv header" "$(head -n 1 "$T/r.csv")" \
    "serial,pid,tid,kind,address,size,alloc_ns,free_ns,stack,function,leak_class"
for c in definitely_lost indirectly_lost possibly_lost still_reachable; do
    expect_eq "sqlite $c" "$(sqlite3 "$T/r.db" "SELECT SUM(size), COUNT(*) FROM allocations
        WHERE free_ns IS NULL AND leak_class = '$c'" | tr '|' ' ')" "$(want $c)"
    expect_eq "csv $c" "$(awk -F, -v c=$c 'NR > 1 && $NF == c { s += $6; n++ }
        END { print s + 0, n + 0 }' "$T/r.csv")" "$(want $c)"
done
expect_eq "sqlite: a freed block has no class" \
    "$(sqlite3 "$T/r.db" "SELECT COUNT(*) FROM allocations WHERE free_ns IS NOT NULL AND leak_class IS NOT NULL")" 0
echo "export_reach: ok"
