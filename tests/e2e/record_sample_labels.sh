#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A sampled trace's figures are labelled as estimates in every output
# (docs/record-sampling.md: Labels): '~' before each estimated figure of
# text, and a line inside each exported file, read back by the format's
# own reader where one is installed (ms_print, heaptrack_print, go tool
# pprof, sqlite3). An exact trace's outputs have neither.
source "$(dirname "$0")/record_lib.sh"
command -v go >/dev/null || fail "go not installed (scripts/setup.sh --test)"
export HOME=$WORK GOCACHE=$WORK/gocache GOFLAGS=-mod=mod GOTOOLCHAIN=local

P=$MS_PROGRAMS/col_phases
"$MEMSCRIBE" record -q -o "$WORK/exact.mscr" -- "$P" || fail "exact record exited with $?"
"$MEMSCRIBE" record -q --sample 1K -o "$WORK/s.mscr" -- "$P" || fail "--sample 1K exited with $?"
LABEL="memscribe: sampled trace (record --sample 1024): figures are estimates, a peak is not an unbiased estimate, temporary allocations are not estimated"

# has TRACE WHAT FILE: FILE holds the label for the sampled trace, not for the exact one.
has() {
    if [ "$1" = s ]; then
        grep -qF "$LABEL" "$3" || fail "$2 of the sampled trace has no label: $(head -c 600 "$3")"
    else
        ! grep -q "sampled trace" "$3" || fail "$2 of the exact trace says sampled"
    fi
}

# marked CMD PATTERN: CMD's text output for the sampled trace has a line
# matching PATTERN (its figures marked '~').
marked() {
    grep -q -- "$2" "$WORK/s.$1" || fail "$1: not marked, no line like '$2' in: $(cat "$WORK/s.$1")"
}

for t in s exact; do
    # Text: every figure of the process and its tables marked; none in the
    # exact trace's.
    for cmd in report leaks tree window histogram; do
        "$MEMSCRIBE" $cmd "$WORK/$t.mscr" >"$WORK/$t.$cmd" 2>/dev/null || fail "$cmd $t failed"
        [ "$t" = s ] || ! grep -q "~" "$WORK/exact.$cmd" ||
            fail "$cmd of an exact trace has a '~': $(grep '~' "$WORK/exact.$cmd")"
    done
    if [ "$t" = s ]; then
        # calls, allocations and temporaries counted (record_sample_exact.sh): no mark
        marked report "^  allocations:        28 (3670016 bytes, 3.50 MiB)$"
        marked report "^  calls:              malloc 28, free 20$"
        marked report "^  peak heap in use:   ~3145728 bytes (~3.00 MiB) in ~24 blocks at .* (sampled: not an unbiased estimate of the peak)$"
        marked report "^  leaked:             ~2097152 bytes (~2.00 MiB) in ~8 blocks$"
        marked report "^ *~2097152 *~2097152 *~8 *~8 *~2097152 *  block"
        marked leaks "~2097152 *~8 "
        # (the tree's root is main: the start-up is left out, docs/tree.md)
        marked tree "^ *~3145728 *~2097152 *~28 *~3670016  .* main$"
        marked tree "^total: peak ~3145728 bytes, leaked ~2097152 bytes, ~28 allocations of ~3670016 bytes, temporary not estimated in a sampled trace$"
        marked window ": Transient ~20 blocks ~1572864 bytes; Impacting ~8 blocks, Impacting Size ~2097152 bytes$"
        marked histogram " 65536  131071  *~16  *~1048576 "
    fi

    # massif: desc, which ms_print prints.
    "$MEMSCRIBE" export --to massif -o "$WORK/$t.massif" "$WORK/$t.mscr" 2>/dev/null || fail "massif $t"
    ms_print "$WORK/$t.massif" >"$WORK/$t.ms_print" 2>&1 || fail "ms_print $t: $(cat "$WORK/$t.ms_print")"
    has $t "ms_print's Description" "$WORK/$t.ms_print"
    # pprof: a comment, which go tool pprof -comments prints.
    "$MEMSCRIBE" export --to pprof -o "$WORK/$t.pb.gz" "$WORK/$t.mscr" 2>/dev/null || fail "pprof $t"
    go tool pprof -comments "$WORK/$t.pb.gz" >"$WORK/$t.comments" 2>&1 || fail "go tool pprof $t: $(cat "$WORK/$t.comments")"
    has $t "pprof's comments" "$WORK/$t.comments"
    # heaptrack: heaptrack_print shows the command line.
    "$MEMSCRIBE" export --to heaptrack -o "$WORK/$t.heaptrack.gz" "$WORK/$t.mscr" 2>/dev/null || fail "heaptrack $t"
    heaptrack_print -f "$WORK/$t.heaptrack.gz" >"$WORK/$t.htp" 2>&1 || fail "heaptrack_print $t: $(head -5 "$WORK/$t.htp")"
    has $t "heaptrack_print's output" "$WORK/$t.htp"
    # DHAT: the command line dh_view shows.
    "$MEMSCRIBE" export --to dhat -o "$WORK/$t.dhat" "$WORK/$t.mscr" 2>/dev/null || fail "dhat $t"
    jq -r .cmd "$WORK/$t.dhat" >"$WORK/$t.dhat.cmd" || fail "dhat $t: not JSON"
    has $t "DHAT's cmd" "$WORK/$t.dhat.cmd"
    # Folded stacks: a first line.
    "$MEMSCRIBE" export --to folded -o "$WORK/$t.folded" "$WORK/$t.mscr" 2>/dev/null || fail "folded $t"
    head -1 "$WORK/$t.folded" >"$WORK/$t.folded1"
    has $t "export --to folded's first line" "$WORK/$t.folded1"
    "$MEMSCRIBE" flamegraph --folded "$WORK/$t.mscr" 2>/dev/null >"$WORK/$t.ffolded"
    head -1 "$WORK/$t.ffolded" >"$WORK/$t.ffolded1"
    has $t "flamegraph --folded's first line" "$WORK/$t.ffolded1"
    # The flame graph SVG: its subtitle (a valid SVG still).
    "$MEMSCRIBE" flamegraph -o "$WORK/$t.svg" "$WORK/$t.mscr" 2>/dev/null || fail "flamegraph $t"
    xmllint --noout "$WORK/$t.svg" || fail "flamegraph $t: not XML"
    xmllint --xpath "//*[local-name()='text'][@class='subtitle']/text()" "$WORK/$t.svg" >"$WORK/$t.subtitle" 2>/dev/null || true
    has $t "the flame graph's subtitle" "$WORK/$t.subtitle"
    # SQLite: meta rows.
    "$MEMSCRIBE" export --to sqlite -o "$WORK/$t.db" "$WORK/$t.mscr" 2>/dev/null || fail "sqlite $t"
    sqlite3 "$WORK/$t.db" "SELECT key || ' ' || value FROM meta WHERE key LIKE 'sample%'" >"$WORK/$t.meta"
    has $t "SQLite's meta" "$WORK/$t.meta"
done
grep -qx "sample_bytes 1024" "$WORK/s.meta" || fail "SQLite: no sample_bytes row: $(cat "$WORK/s.meta")"
echo "ok: every output of a sampled trace says its figures are estimates; an exact trace's do not"
