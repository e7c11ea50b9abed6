#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The trace's index (docs/format.md, SUMMARY; docs/serve.md, "Scale"): what
# is live at a moment T, from the chunk summaries before the chunk that
# reaches T and that chunk's events, is what the replay from the start
# gives. leaks --index: the same JSON and text, at moments across the run,
# at 0, at the end and past it, with --pid; window --index: the same JSON
# (but events_read, never more) for windows across the run, as rows by
# stack, thread and size class and as a tree. The index answers (no note
# that it replayed) on a real program
# (perl, one process, four chunks), on tests/programs/rec_agg (a fork,
# threads, nine chunks) and on a tree of 16 processes (sh starting perl and
# sleep, overlapping, across four chunks), whose index hands each process's
# sites to the fold as its live state is read (the replay's rows, by
# program, by process, of one executable; and the rows of a replay that
# keeps every site, MEMSCRIBE_FOLD=0); where it cannot (sampled, aggregated, pools, leak
# classes, stackless blocks of several processes: the golden traces) it
# says why and replays, with the same answer. dump --verify holds every
# chunk's summary against its events and passes on all of them.
# usage: ana_index.sh [leaks|tree|windows|golden]: one part (each a test of
# its own: the whole made some 400 runs of the sanitized build, 257 s on a
# quiet machine and past its 600 s limit beside two busy loops; leaks and
# tree together took 163 s in a fresh root, past the 300 s limit of a test
# beside two), or all four.
# Needs MEMSCRIBE, MS_PROGRAMS, MS_SOURCE.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" ana_index MEMSCRIBE MS_PROGRAMS MS_SOURCE
need jq
need perl
M=$MEMSCRIBE
PART=${1:-all}
case $PART in all | leaks | tree | windows | golden) ;; *) fail "usage: ana_index.sh [leaks|tree|windows|golden]" ;; esac
# usage: part NAME: whether this run does part NAME.
part() { [ "$PART" = all ] || [ "$PART" = "$1" ]; }

chunks() { "$M" dump --header "$1" 2>/dev/null | sed -n 's/.* chunks=\([0-9]*\) .*/\1/p'; }
if part tree; then
    # A tree: five perl processes 0.35 s apart, each living 0.6 s and more (so
    # that two run at once and the chunks cut through them), and five sleeps.
    # shellcheck disable=SC2016 # perl's own $ in perl's code
    "$M" record -q -o "$WORK/tree.mscr" -- sh -c 'for r in 1 2 3 4 5; do
        perl -e "my %h; \$h{\$_} = [\$_ x 3] for 1 .. 4000 * $r; delete \$h{\$_} for 1 .. 1000;
            select(undef, undef, undef, 0.6)" & sleep 0.35; done; wait' || fail "record the tree failed"
    [ "$(chunks "$WORK/tree.mscr")" -ge 3 ] || fail "the tree: $(chunks "$WORK/tree.mscr") chunks"
fi

# One process: perl and rec_agg, for every part but the tree's.
if [ "$PART" != tree ]; then
    # perl keeps a hash of 10,000 entries and replaces them in rounds 0.2 s apart:
    # the recorder cuts a chunk every second.
    # shellcheck disable=SC2016 # perl's own $ in perl's code
    PERL_HASH_SEED=0 PERL_PERTURB_KEYS=0 "$M" record -q -o "$WORK/perl.mscr" -- perl -e '
        use Time::HiRes qw(usleep);
        my %h;
        for my $r (1 .. 12) {
            $h{"$r.$_"} = [$_ x 3] for 1 .. 5000;
            if ($r > 2) { delete $h{($r - 2) . ".$_"} for 1 .. 5000 }
            usleep 200000;
        }' || fail "record perl failed"
    # rec_agg in 40 rounds (133,000 events), cut into chunks of 16,384 events
    # (the recorder's test knob): the sanitized build decodes it some 400 times
    # below, and 400 rounds in chunks of their own size made this test 250 s.
    MEMSCRIBE_CHUNK_EVENTS=16384 "$M" record -q -o "$WORK/agg.mscr" -- "$MS_PROGRAMS/rec_agg" 40 ||
        fail "record rec_agg failed"
    [ "$(chunks "$WORK/perl.mscr")" -ge 3 ] || fail "perl: $(chunks "$WORK/perl.mscr") chunks"
    [ "$(chunks "$WORK/agg.mscr")" -ge 3 ] || fail "rec_agg: $(chunks "$WORK/agg.mscr") chunks"
fi

# usage: same NAME TRACE T [OPTION...]: leaks at T with and without --index
# (the replay's with $WANT_FOLD in MEMSCRIBE_FOLD, if set).
same() {
    local name=$1 f=$2 t=$3
    shift 3
    MEMSCRIBE_FOLD=${WANT_FOLD:-${MEMSCRIBE_FOLD:-}} \
        "$M" leaks --format=json --top 0 --at "$t" "$@" "$f" >"$WORK/want" 2>/dev/null ||
        fail "$name: leaks --at $t failed"
    "$M" leaks --index --format=json --top 0 --at "$t" "$@" "$f" >"$WORK/got" 2>"$WORK/err" ||
        fail "$name: leaks --index --at $t failed: $(cat "$WORK/err")"
    cmp -s "$WORK/want" "$WORK/got" ||
        fail "$name: at $t: $(diff <(jq . "$WORK/want") <(jq . "$WORK/got") | head -5)"
}
# usage: answers NAME TRACE [OPTION...]: the index answers at moments
# across the run (and at 0, the end and past it) as the replay does; STEPS
# (default 7) moments between 0 and the end.
answers() {
    local name=$1 f=$2 end t n=0
    shift 2
    end=$("$M" report --format=json "$f" 2>/dev/null | jq '[.processes[].last_ns] | max')
    # 0 (seq's first), sevenths of the run, its end, past it, the peak and before it
    for t in $(seq 0 $((end / ${STEPS:-7})) "$end" | sed 's/$/ns/') end 1h peak peak-1ms; do
        same "$name" "$f" "$t" "$@"
        grep -q "replaying" "$WORK/err" && fail "$name: at $t the index did not answer: $(cat "$WORK/err")"
        n=$((n + 1))
    done
    echo "ok: $name: $n moments, the index's leaks the replay's"
}
if part leaks; then
    answers perl "$WORK/perl.mscr"
    answers rec_agg "$WORK/agg.mscr"
    child=$("$M" report --format=json "$WORK/agg.mscr" 2>/dev/null | jq '.processes[1].pid')
    answers "rec_agg --pid $child" "$WORK/agg.mscr" --pid "$child"
    # Something is live in the middle (not a comparison of empty answers).
    mid=$("$M" leaks --index --format=json --at 1.2s "$WORK/perl.mscr" 2>/dev/null | jq '.processes[0].leaked_blocks')
    [ "$mid" -gt 10000 ] || fail "perl: $mid blocks live at 1.2 s"
    diff <("$M" leaks --at 0.15s "$WORK/agg.mscr" 2>&1) <("$M" leaks --index --at 0.15s "$WORK/agg.mscr" 2>&1) \
        >"$WORK/diff" || fail "rec_agg: text differs: $(head -5 "$WORK/diff")"
    echo "ok: text, and $mid blocks live at 1.2 s in perl"
fi
if part tree; then
    [ "$("$M" report --format=json "$WORK/tree.mscr" 2>/dev/null | jq '.processes | length')" -ge 8 ] ||
        fail "the tree has fewer than 8 processes: no fold by process"
    answers tree "$WORK/tree.mscr"
    answers "tree --by-process" "$WORK/tree.mscr" --by-process
    answers "tree --exe perl" "$WORK/tree.mscr" --exe perl
    # against a replay that keeps every site, at fewer moments (each is two
    # replays of sixteen processes)
    STEPS=3 WANT_FOLD=0 answers "tree, against every site kept" "$WORK/tree.mscr"
    STEPS=3 WANT_FOLD=0 answers "tree --by-process, against every site kept" "$WORK/tree.mscr" --by-process
    diff <("$M" leaks --by-process "$WORK/tree.mscr" 2>&1) \
        <("$M" leaks --index --by-process "$WORK/tree.mscr" 2>&1) >"$WORK/diff" ||
        fail "the tree: text by process differs: $(head -5 "$WORK/diff")"
    echo "ok: the tree's text by process"
fi

# usage: windows NAME TRACE: window --index against the replay, windows
# from each of three starts to each later of three ends, four ways each.
# INDEX_FOLD=always: the index's replay retires each process's rows as it
# ends (in one range, as on a build's tree) from two processes on.
windows() {
    local name=$1 f=$2 end a b by n=0
    end=$("$M" report --format=json "$f" 2>/dev/null | jq '[.processes[].last_ns] | max')
    for a in 0 $((end / 3)) $((end / 2)); do
        for b in $((end / 5)) $((end / 2)) "$end"; do
            [ "$b" -ge "$a" ] || continue
            for by in "--by stack" "--by thread" "--by size-class" "--tree"; do
                # shellcheck disable=SC2086 # by is two words
                "$M" window --format=json --top 0 --from "${a}ns" --to "${b}ns" $by "$f" \
                    >"$WORK/want" 2>/dev/null || fail "$name: window $a-$b $by failed"
                # shellcheck disable=SC2086
                MEMSCRIBE_FOLD=${INDEX_FOLD:-} "$M" window --index --format=json --top 0 \
                    --from "${a}ns" --to "${b}ns" $by "$f" >"$WORK/got" 2>"$WORK/err" ||
                    fail "$name: window --index $a-$b $by failed"
                grep -q "replaying" "$WORK/err" && fail "$name: the index did not answer: $(cat "$WORK/err")"
                cmp -s <(jq -c 'del(.events_read)' "$WORK/want") <(jq -c 'del(.events_read)' "$WORK/got") ||
                    fail "$name: window $a-$b $by: $(diff <(jq 'del(.events_read)' "$WORK/want") \
                        <(jq 'del(.events_read)' "$WORK/got") | head -5)"
                [ "$(jq ".events_read // 0" "$WORK/got")" -le "$(jq ".events_read // 0" "$WORK/want")" ] ||
                    fail "$name: window --index read more events"
                n=$((n + 1))
            done
        done
    done
    echo "ok: $name: $n windows, the index's the replay's"
}
if part windows; then
    windows perl "$WORK/perl.mscr"
    windows rec_agg "$WORK/agg.mscr"
    INDEX_FOLD=always windows "rec_agg, processes retired as they end" "$WORK/agg.mscr"
    # Around the peak: the peak is found by a replay, the window from the index.
    for f in "$WORK/perl.mscr" "$WORK/agg.mscr"; do
        "$M" window --format=json --top 0 --from peak-50ms --to peak "$f" 2>/dev/null |
            jq -c 'del(.events_read)' >"$WORK/want"
        "$M" window --index --format=json --top 0 --from peak-50ms --to peak "$f" 2>/dev/null |
            jq -c 'del(.events_read)' >"$WORK/got"
        cmp -s "$WORK/want" "$WORK/got" || fail "$(basename "$f"): window --index around the peak differs"
    done
    # A window late in the run reads fewer events from the index.
    late=$("$M" window --index --format=json --from 2s --to 2.1s "$WORK/perl.mscr" 2>/dev/null | jq .events_read)
    whole=$("$M" window --format=json --from 2s --to 2.1s "$WORK/perl.mscr" 2>/dev/null | jq .events_read)
    [ "$late" -lt "$whole" ] || fail "window --index at 2 s read $late events, the replay $whole"
    echo "ok: a window at 2 s: $late events read from the index, $whole replaying"
fi

part golden || finish "PASS ($PART)"
# The golden traces: the same answer, from the index or (saying why) replayed.
for g in "$MS_SOURCE"/tests/golden/*.mscr; do
    for t in 0 1ms end; do
        same "$(basename "$g")" "$g" "$t"
        if grep -q "replaying" "$WORK/err"; then
            grep -Eq "index: (--all|a sampled|an aggregated|a pool|blocks without a stack)" "$WORK/err" ||
                fail "$(basename "$g"): replayed without a reason: $(cat "$WORK/err")"
        fi
    done
    "$M" window --format=json --top 0 --from 1ms "$g" 2>/dev/null | jq -c 'del(.events_read)' >"$WORK/want"
    "$M" window --index --format=json --top 0 --from 1ms "$g" 2>/dev/null | jq -c 'del(.events_read)' >"$WORK/got"
    cmp -s "$WORK/want" "$WORK/got" || fail "$(basename "$g"): window --index differs"
done
echo "ok: the golden traces, from the index or replayed with the reason"
"$M" leaks --index --all "$WORK/perl.mscr" 2>"$WORK/err" >/dev/null || fail "leaks --index --all failed"
grep -q "index: --all .* need every block; replaying" "$WORK/err" || fail "--all: $(cat "$WORK/err")"

# dump --verify: every chunk's summary against its events.
for f in "$WORK/perl.mscr" "$WORK/agg.mscr" "$MS_SOURCE"/tests/golden/*.mscr; do
    out=$("$M" dump --verify "$f" 2>&1) || fail "dump --verify $(basename "$f"): $out"
    [ -z "$out" ] || fail "dump --verify $(basename "$f") printed: $out"
done
echo "ok: dump --verify on every trace"
rc=0
"$M" dump --verify --header "$WORK/perl.mscr" >/dev/null 2>&1 || rc=$?
expect "dump --verify --header: exit status" "$rc" 2
finish "PASS ($PART)"
