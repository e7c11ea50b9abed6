#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# report --index, timeline --index and tree --index (format 1.10's chunk totals, docs/
# format-blocks.md "TOTALS"; docs/report.md, docs/timeline.md): on programs of
# this tree (temporaries by heaptrack's rule per thread, every call kind,
# threads) and on real ones nobody here wrote (python3 with
# PYTHONMALLOC=malloc, perl, sqlite3, sort), each cut into chunks of 64
# or 2,048 events (MEMSCRIBE_CHUNK_EVENTS) so that the totals of many
# chunks are merged and the peak falls inside one: report --index prints what report prints, byte for
# byte, in text and JSON, and report --verify (the totals' model held
# against the replay's, number for number) passes; the index timeline's last row is the replayed
# timeline's last row (heap, allocations, bytes, live blocks, RSS), its
# highest heap_max is report's peak, and its sites are the replay's, their
# series ending where the replay's do; so on traces of several processes (the
# tree's peak from format 1.11's all-processes part, the per-program view's
# programs' peaks found from the totals too, its rows folded or not; a
# selection and an older trace are replayed, with a note on stderr that
# says why). Needs MEMSCRIBE,
# MS_PROGRAMS.
# shellcheck source=tests/e2e/ana_lib.sh
source "$(dirname "$0")/ana_lib.sh"
: "${MS_SOURCE:?set by ctest}"

# usage: same NAME [OPTION...]: report OPTION... with and without --index on
# $WORK/NAME.mscr.
same() {
    local t=$WORK/$1.mscr f
    shift
    local name=${t##*/}
    name=${name%.mscr}
    for f in text json; do
        "$MEMSCRIBE" report "$@" --format=$f "$t" >"$WORK/a.$f" 2>"$WORK/a.err" ||
            fail "$name: report: $(cat "$WORK/a.err")"
        "$MEMSCRIBE" report "$@" --index --format=$f "$t" >"$WORK/b.$f" 2>"$WORK/b.err" ||
            fail "$name: report --index: $(cat "$WORK/b.err")"
        [ ! -s "$WORK/b.err" ] || fail "$name: report --index replayed: $(cat "$WORK/b.err")"
        cmp -s "$WORK/a.$f" "$WORK/b.$f" ||
            fail "$name: report --index ($f) differs: $(diff "$WORK/a.$f" "$WORK/b.$f" | head -5)"
    done
    # --verify holds the totals' model against the replay's, on one CPU
    # (one reader) and on two (ranges of 1,000 events merged): it passes
    # and is report.
    local jobs
    for jobs in 1 2; do
        MEMSCRIBE_JOBS=$jobs MEMSCRIBE_RANGE_EVENTS=1000 "$MEMSCRIBE" report "$@" --verify "$t" \
            >"$WORK/v.text" 2>"$WORK/v.err" ||
            fail "$name: report --verify on $jobs CPUs: $(cat "$WORK/v.err")"
        cmp -s "$WORK/a.text" "$WORK/v.text" || fail "$name: report --verify on $jobs CPUs differs"
    done
    local chunks
    chunks=$("$MEMSCRIBE" dump --header "$t" | sed -n 's/.* chunks=\([0-9]*\) .*/\1/p')
    echo "ok: $name: report --index is report, text and JSON, and passes --verify ($chunks chunks)"
    timeline "$name"
}

# usage: trees NAME [OPTION...]: tree --index is tree, each way (the page's
# trees ask it so once the index passed its check: docs/serve.md).
trees() {
    local t=$WORK/$1.mscr name=$1 way
    shift
    for way in "" --bottom-up --flat "--sort leaked --top 0 --depth 0" "--sort temporary"; do
        # shellcheck disable=SC2086 # each way's words
        "$MEMSCRIBE" tree "$@" $way --format=json "$t" >"$WORK/ta.json" 2>"$WORK/ta.err" ||
            fail "$name: tree $way: $(cat "$WORK/ta.err")"
        # shellcheck disable=SC2086
        "$MEMSCRIBE" tree "$@" $way --index --format=json "$t" >"$WORK/tb.json" 2>"$WORK/tb.err" ||
            fail "$name: tree $way --index: $(cat "$WORK/tb.err")"
        [ ! -s "$WORK/tb.err" ] || fail "$name: tree $way --index replayed: $(cat "$WORK/tb.err")"
        cmp -s "$WORK/ta.json" "$WORK/tb.json" ||
            fail "$name: tree $way --index differs: $(diff "$WORK/ta.json" "$WORK/tb.json" | head -5)"
    done
    echo "ok: $name: tree --index is tree, top-down, bottom-up, flat, by leaked and temporary"
}

# The index timeline against the replayed one and report.
timeline() {
    local t=$WORK/$1.mscr
    "$MEMSCRIBE" timeline --index --sites 3 --format=json "$t" >"$WORK/ti.json" 2>"$WORK/ti.err" ||
        fail "$1: timeline --index: $(cat "$WORK/ti.err")"
    [ ! -s "$WORK/ti.err" ] || fail "$1: timeline --index replayed: $(cat "$WORK/ti.err")"
    "$MEMSCRIBE" timeline --sites 3 --format=json "$t" >"$WORK/tr.json" || fail "$1: timeline failed"
    local last='.processes[0].rows[-1] | [.time_ns, .heap_bytes, .allocations, .allocated_bytes, .live_blocks, .rss_bytes]'
    expect "$1: the index timeline's last row" "$(jq -c "$last" "$WORK/ti.json")" \
        "$(jq -c "$last" "$WORK/tr.json")"
    expect "$1: the index timeline's highest heap_max" \
        "$(jq '[.processes[0].rows[].heap_max_bytes] | max' "$WORK/ti.json")" \
        "$(jq '.processes[0].peak_bytes' "$WORK/a.json")"
    expect "$1: rows at the chunks' ends" "$(jq '.index' "$WORK/ti.json")" true
    # The same sites as the replay's, their series ending as its do.
    local n
    [ "$(jq -c '[.sites[].stack]' "$WORK/ti.json")" = "$(jq -c '[.sites[].stack]' "$WORK/tr.json")" ] ||
        fail "$1: the index timeline's sites are not the replay's"
    expect "$1: the sites' last bytes" "$(jq -c '[.sites[].bytes[-1]]' "$WORK/ti.json")" \
        "$(jq -c '[.sites[].bytes[-1]]' "$WORK/tr.json")"
    n=$(jq '.sites | length' "$WORK/ti.json")
    echo "ok: $1: timeline --index ends where the replay ends, its peak is report's, $n sites"
}

# usage: rec NAME CMD...: record CMD with its chunks' totals, in chunks of $CHUNK events.
CHUNK=64
rec() {
    local name=$1
    shift
    MEMSCRIBE_CHUNK_EVENTS=$CHUNK "$MEMSCRIBE" record -q --totals -o "$WORK/$name.mscr" -- "$@" \
        >/dev/null 2>"$WORK/rec.err" || fail "record $name: $(cat "$WORK/rec.err")"
}

rec temporary "$MS_PROGRAMS/ana_temporary"
same temporary
trees temporary
rec threads "$MS_PROGRAMS/ana_threads"
same threads
rec calls "$MS_PROGRAMS/col_calls"
same calls
rec hog "$MS_PROGRAMS/ana_hog"
same hog
# Real programs, larger: chunks of 2,048 events.
CHUNK=2048
PYTHONMALLOC=malloc rec python /usr/bin/python3 -c '
import json
d = [{"k": i, "v": [str(i)] * 3} for i in range(20000)]
print(len(json.dumps(d)))'
same python
trees python
# shellcheck disable=SC2016 # perl's own variables
rec perl /usr/bin/perl -e 'my %h; $h{$_ % 5000} .= "x" x ($_ % 64) for 1 .. 60000; print scalar(keys %h), "\n"'
same perl
seq 1 50000 | sed 's/^/k/' >"$WORK/words"
rec sort sort -R "$WORK/words"
same sort
if command -v sqlite3 >/dev/null; then
    rec sqlite sqlite3 :memory: 'create table t(a, b); with recursive c(x) as (select 1 union all select x + 1 from c where x < 20000) insert into t select x, hex(randomblob(x % 100)) from c; select count(*), sum(length(b)) from t;'
    same sqlite
    trees sqlite
fi

# Several processes (format 1.11's all-processes totals): two, and a tree
# of sh, sort and perl whose processes exit while others run.
CHUNK=64
rec procs "$MS_PROGRAMS/ana_procs"
same procs --by-process
trees procs --by-process
CHUNK=2048
# shellcheck disable=SC2016 # perl's own variables
rec tree /bin/sh -c 'sort -R "$1" | sort >/dev/null; perl -e '"'"'my @a; push @a, "x" x ($_ % 900) for 1 .. 30000; print scalar(@a), "\n"'"'"'' sh "$WORK/words"
same tree --by-process
# The per-program view (the two sorts summed; report's default here), its
# rows folded at each process's end as a build's are (cli_fold.h): the
# programs' peaks from the totals, bounded where both sorts move in a chunk
# and replayed there; and unfolded.
same tree
trees tree
MEMSCRIBE_FOLD=0 same tree

# Replayed, and said why: a selection, no totals.
pid=$("$MEMSCRIBE" report --format=json "$WORK/sqlite.mscr" | jq '.processes[0].pid')
run 0 report --index --pid "$pid" "$WORK/sqlite.mscr"
grep -q 'selection.*replaying' "$WORK/err" || fail "--pid: no note: $(cat "$WORK/err")"
# an interval is answered from the totals, at chunk ends (ana_timeline_bound.sh)
run 0 timeline --index --interval 1ms "$WORK/temporary.mscr"
grep -q 'chunk ends, none closer than --interval' "$WORK/err" ||
    fail "--interval: no note: $(cat "$WORK/err")"
run 0 report --index "$MS_SOURCE/tests/golden/v1_9_segment.mscr"
grep -q 'no chunk totals.*replaying' "$WORK/err" || fail "1.9: no note: $(cat "$WORK/err")"
"$MEMSCRIBE" record -q -o "$WORK/plain.mscr" -- "$MS_PROGRAMS/ana_hog" >/dev/null 2>&1 || fail "record hog"
expect "without --totals: the version" "$("$MEMSCRIBE" dump --header "$WORK/plain.mscr" | head -1)" \
    "# memscribe trace version 1.7"
run 0 report --index "$WORK/plain.mscr"
grep -q 'no chunk totals.*record --totals.*replaying' "$WORK/err" ||
    fail "without --totals: no note: $(cat "$WORK/err")"
run 2 report --index --verify "$WORK/temporary.mscr"
echo "ok: replayed where the totals cannot answer, with a note"
