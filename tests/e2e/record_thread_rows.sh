#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Threads as the trace lists them (col_thread_rows): a thread whose only
# heap call is a free after its exit hook ran starts and ends; a forked
# child and an exec'd image each list their main thread once, in dump
# --header and in the SQLite export, not a second unnamed row for the
# recorder's own events. A trace written before that fix
# (tests/golden/v1_5_main_thread_twice.mscr: a program and its forked
# child, by the recorder of 89d3638) lists them once too.
source "$(dirname "$0")/record_lib.sh"
: "${MS_SOURCE:?set by ctest}"

# One row per (image, tid) in dump --header and in the SQLite export.
rows_once() { # TRACE WHAT
    "$MEMSCRIBE" dump --header "$1" >"$WORK/h.txt" || fail "$2: dump failed"
    local dup
    dup=$(awk '$2 == "thread" { print $4, $6 }' "$WORK/h.txt" | sort | uniq -d)
    [ -z "$dup" ] || fail "$2: dump --header lists a thread twice: $dup"
    grep -q '^# thread .* name=""$' "$WORK/h.txt" && fail "$2: an unnamed thread row: $(grep '^# thread' "$WORK/h.txt")"
    rm -f "$WORK/t.db"
    "$MEMSCRIBE" export --to sqlite "$1" -o "$WORK/t.db" || fail "$2: export failed"
    dup=$(sqlite3 "$WORK/t.db" "select image, tid from threads group by image, tid having count(*) > 1")
    [ -z "$dup" ] || fail "$2: the SQLite threads table lists a thread twice: $dup"
}

"$MEMSCRIBE" record -q -o "$WORK/t.mscr" -- "$MS_PROGRAMS/col_thread_rows" >"$WORK/out" ||
    fail "record exited with $?"
tid=$(sed -n 's/^late-free tid=//p' "$WORK/out")
[ -n "$tid" ] || fail "the program printed no tid: $(cat "$WORK/out")"
ms_dump_ok "$WORK/t.mscr"
ev() { awk -v tid="$tid" -v what="$1" '$3 == tid && $5 == what' "$WORK/dump.txt" | wc -l; }
expect_eq "thread_start of the late-free thread" "$(ev thread_start)" 1
expect_eq "thread_exit of the late-free thread" "$(ev thread_exit)" 1
n=$(awk -v tid="$tid" '$3 == tid && $5 == "free" && / size=4321 /' "$WORK/dump.txt" | wc -l)
expect_eq "its free of the 4321-byte block" "$n" 1
images=$(grep -c '^# image' <("$MEMSCRIBE" dump --header "$WORK/t.mscr"))
expect_eq "images (the program, its fork, the exec)" "$images" 3
rows_once "$WORK/t.mscr" "new trace"
expect_eq "thread rows of the new trace" "$(grep -c '^# thread' "$WORK/h.txt")" 4
rows_once "$MS_SOURCE/tests/golden/v1_5_main_thread_twice.mscr" "old trace"
expect_eq "thread rows of the old trace" "$(grep -c '^# thread' "$WORK/h.txt")" 2
echo "ok: the late-free thread ends; one row per main thread, new and old traces"
