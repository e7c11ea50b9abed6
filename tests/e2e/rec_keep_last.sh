#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# record --keep-last (docs/aggregate.md, "Flight recorder"): tests/programs/rec_agg
# (the same heap calls every run) recorded with --keep-last 20ms at --aggregate=1ms
# and exactly. The whole run's trace gives the exact recording's totals per process
# (allocations, bytes, temporaries, peak, leaks). Its folder holds the latest
# segments of S = D/2 = 10 ms, numbered on from 1, each a trace of its own (format
# 1.9, META SEGMENT: its number, its start, 10 ms after the one before), the fewest that
# hold D: from the first kept one's start to the last event, at least D and at most
# D + S, the span `record` prints. A segment's report gives its own span (from its
# start, not its processes' start that it carries in), and says "leaked:" or "live
# at the end:" where its JSON says ended true or false, with the same figures as
# `leaks`. In each segment, the blocks live at any moment from its start on are the
# whole run's then (leaks --at, to the byte), so are the blocks carried in (live at
# start), and the last one's leaks are the whole run's. Then: a recorder killed
# mid-run leaves the trace and its latest segments readable, holding D on disk; the
# refusals exit 2.
# Needs MEMSCRIBE, MS_PROGRAMS.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" rec_keep_last MEMSCRIBE MS_PROGRAMS
need jq
PROG=$MS_PROGRAMS/rec_agg
T=$WORK/k.mscr
D=20000000
S=10000000 # D / 2 (REC_KEEP_PARTS), a multiple of the 1 ms period

"$MEMSCRIBE" record -q -o "$WORK/exact.mscr" -- "$PROG" 30 || fail "exact record failed"
"$MEMSCRIBE" record --keep-last 20ms --aggregate=1ms -o "$T" -- "$PROG" 30 2>"$WORK/rec.err" ||
    fail "record --keep-last failed: $(cat "$WORK/rec.err")"

# usage: totals FILE: per process in order, the figures every trace kind gives exactly.
totals() {
    "$MEMSCRIBE" report --format=json --top 0 "$1" 2>/dev/null |
        jq -c '[.processes[] | {allocations, allocated_bytes, frees, temporary, temporary_bytes,
                                peak_bytes, leaked_bytes, leaked_blocks}]'
}
expect "the whole run's totals against the exact recording's" "$(totals "$T")" "$(totals "$WORK/exact.mscr")"
"$MEMSCRIBE" report --format=json --top 0 "$T" >"$WORK/whole.json" 2>/dev/null || fail "report"
expect "the whole run's keep_last" "$(jq -c .keep_last "$WORK/whole.json")" '{"keep_last_ns":20000000}'

# usage: ns SECONDS: dump's and record's "12.072610000" in ns.
ns() {
    local s=${1%%.*} f=${1#*.}000000000
    echo $((10#$s * 1000000000 + 10#${f:0:9}))
}
# usage: secs NS: as record and report print a time, "%.6f".
secs() { awk -v n="$1" 'BEGIN { printf "%.6f", n / 1e9 }'; }

mapfile -t segs < <(find "$T.last" -name 'seg-*.mscr' | sort)
nr=${#segs[@]}
num() { basename "$1" .mscr | sed 's/seg-0*//'; }
first=$(num "${segs[0]}")
last=$(num "${segs[-1]}")
expect_eq "segments kept are consecutive" "$((last - first + 1))" "$nr"
[ "$first" -gt 1 ] || fail "the run ($(jq '[.processes[].last_ns] | max' "$WORK/whole.json") ns) kept its first segment"

# The span kept: from the first kept segment's start to the last segment's last
# event (or its start, if it has none of its own), at least D and at most D + S;
# every segment S long; and what record printed.
declare -A FROM
for seg in "${segs[@]}"; do
    n=$(num "$seg")
    "$MEMSCRIBE" dump --header "$seg" >"$WORK/seg$n.txt" 2>&1 || fail "segment $n: dump failed"
    FROM[$n]=$(sed -n 's/^# keep-last .* from_ns=\([0-9]*\)$/\1/p' "$WORK/seg$n.txt")
    # (n - 1) x S, unless the program stood still longer than D (a loaded machine):
    # then only the segments kept of that silence were made
    expect_eq "segment $n's start, a multiple of S" $((FROM[$n] % S)) 0
    [ "$n" = "$first" ] || expect_eq "segment $n: S after the one before" $((FROM[$n] - FROM[$((n - 1))])) "$S"
done
end=$(ns "$(grep -v '^#' "$WORK/seg$last.txt" | tail -1 | cut -d' ' -f1)")
[ "$end" -ge "${FROM[$last]}" ] || end=${FROM[$last]}
span=$((end - FROM[$first]))
[ "$span" -ge "$D" ] && [ "$span" -le $((D + S)) ] ||
    fail "kept $span ns (segments $first-$last, from ${FROM[$first]} to $end ns), not within [D, D + S] = [$D, $((D + S))]"
printed=$(sed -n 's/^.*record: kept the last \([0-9.]*\) s (\([0-9.]*\) s to \([0-9.]*\) s of the trace; --keep-last 20ms) in \([0-9]*\) segments of \([0-9.]*\) s in .*: seg-0*\([0-9]*\)\.mscr to seg-0*\([0-9]*\)\.mscr.*$/\1 \2 \3 \4 \5 \6 \7/p' "$WORK/rec.err")
expect "record's kept span, from, to, segments, their length, first, last" "$printed" \
    "$(secs "$span") $(secs "${FROM[$first]}") $(secs "$end") $nr 0.01 $first $last"

# usage: text_scope FILE PID: report's text of the process, "PID FROM TO WORD BYTES
# BLOCKS" (the run time's span, "leaked" or "live at the end" and its figures).
text_scope() {
    "$MEMSCRIBE" report --pid "$2" "$1" 2>/dev/null | awk '
        /^pid [0-9]+ / { pid = $2 }
        # "  run time:           1.000000s (8.000000s to 9.000000s of the trace)"
        pid && /^  run time:/ { from = substr($4, 2, length($4) - 2); to = substr($6, 1, length($6) - 1) }
        pid && /^  (leaked|live at the end):/ {
            word = ($0 ~ /^  leaked:/) ? "leaked" : "live at the end"
            bytes = blocks = ""
            for (i = 2; i <= NF; i++) {
                if ($i == "bytes" && bytes == "") bytes = $(i - 1)
                if ($i == "blocks") blocks = $(i - 1)
            }
            print pid, from, to, word, bytes, blocks; pid = 0 }'
}

end_ns=$(jq '[.processes[].last_ns // empty] | max // 0' "$WORK/whole.json")
for n in $(seq "$first" "$last"); do
    seg=$T.last/$(printf 'seg-%06d.mscr' "$n")
    from=${FROM[$n]}
    "$MEMSCRIBE" report --format=json --top 0 "$seg" >"$WORK/seg$n.json" 2>"$WORK/seg$n.err" ||
        fail "segment $n: report failed: $(cat "$WORK/seg$n.err")"
    expect_eq "segment $n's META" "$(jq -c .keep_last "$WORK/seg$n.json")" \
        "{\"keep_last_ns\":20000000,\"segment\":$n,\"from_ns\":$from}"
    grep -q '^# memscribe trace version 1\.9$' "$WORK/seg$n.txt" || fail "segment $n: not a 1.9 trace"
    expect_eq "segment $n's command and host" "$(grep '^# command ' "$WORK/seg$n.txt")" \
        "$("$MEMSCRIBE" dump --header "$T" | grep '^# command ')"
    # Its span, per process: from the segment's start (or the process's first event
    # in it, if later) to its last event in the dump, in JSON and in the text; its
    # blocks live at the end named alike in both, with leaks' figures.
    "$MEMSCRIBE" leaks --format=json "$seg" >"$WORK/leaks$n.json" 2>/dev/null || fail "segment $n: leaks failed"
    got_text="" want_text="" want_json=""
    for pid in $(jq '.processes[].pid' "$WORK/seg$n.json"); do
        read -r t0 t1 < <(grep -v '^#' "$WORK/seg$n.txt" | awk -v p="$pid" '$2 == p { if (!f) f = $1; l = $1 } END { print f, l }')
        lo=$(ns "$t0") hi=$(ns "$t1")
        [ "$lo" -ge "$from" ] || lo=$from
        [ "$hi" -ge "$lo" ] || hi=$lo
        want_json="$want_json{\"pid\":$pid,\"run_time_ns\":$((hi - lo)),\"first_ns\":$lo,\"last_ns\":$hi}"
        read -r ended bytes blocks < <(jq -r --argjson p "$pid" '.processes[] | select(.pid == $p) |
            "\(.ended) \(.leaked_bytes) \(.leaked_blocks)"' "$WORK/seg$n.json")
        word="live at the end"
        [ "$ended" = true ] && word=leaked
        want_text="$want_text$pid $(secs "$lo") $(secs "$hi") $word $bytes $blocks;"
        got_text="$got_text$(text_scope "$seg" "$pid");"
        expect_eq "segment $n, pid $pid: leaks' ended and figures" \
            "$(jq -r --argjson p "$pid" '.processes[] | select(.pid == $p) | "\(.ended) \(.leaked_bytes) \(.leaked_blocks)"' \
                "$WORK/leaks$n.json")" "$ended $bytes $blocks"
    done
    expect_eq "segment $n: its span per process (JSON)" \
        "$(jq -j '.processes[] | {pid, run_time_ns, first_ns, last_ns} | tojson' "$WORK/seg$n.json")" "$want_json"
    expect_eq "segment $n: its span and blocks live at the end per process (text)" \
        "$got_text" "$want_text"
    # At its start and 2 ms in (cuts of the whole run, where it is exact), the same
    # blocks live to the byte in both, of the processes it holds (those running at its
    # start or started in it: one that ended before is the whole run's alone); the
    # carried ones are those live at the start.
    for at in "$from" $((from + 2000000)); do
        for f in "$T" "$seg"; do
            "$MEMSCRIBE" leaks --format=json --at "${at}ns" "$f" 2>/dev/null |
                jq -c --slurpfile s "$WORK/seg$n.json" \
                    '[.processes[] | select(.pid as $p | $s[0].processes | map(.pid) | index($p))
                      | {pid, leaked_bytes, leaked_blocks}]' >"$WORK/at.$(basename "$f")"
        done
        expect_eq "segment $n: blocks live at ${at} ns" "$(cat "$WORK/at.$(basename "$seg")")" \
            "$(cat "$WORK/at.$(basename "$T")")"
    done
    carried=$(jq '[.processes[].carried_blocks // 0] | add' "$WORK/seg$n.json")
    live=$("$MEMSCRIBE" leaks --format=json --at "${from}ns" "$T" 2>/dev/null |
        jq --slurpfile s "$WORK/seg$n.json" \
            '[.processes[] | select(.pid as $p | $s[0].processes | map(.pid) | index($p)) | .leaked_blocks] | add // 0')
    expect_eq "segment $n: blocks carried in" "$carried" "$live"
done
echo "ok: segments $first-$last of a run of $end_ns ns: kept $span ns, each segment's span its own, its blocks named alike"
# The last segment ends with the run: its processes' leaks are the whole run's, and
# leaked (they ended); a segment before says live at the end.
expect "the last segment's leaks" \
    "$(jq -c '[.processes[] | {pid, ended, leaked_bytes, leaked_blocks}]' "$WORK/seg$last.json")" \
    "$(jq -c --slurpfile s "$WORK/seg$last.json" \
        '[.processes[] | select(.pid as $p | $s[0].processes | map(.pid) | index($p)) | {pid, ended, leaked_bytes, leaked_blocks}]' \
        "$WORK/whole.json")"
# Those of the first kept segment that run on into the next were running at its end:
# not ended there. (One may end in it: on a busy machine rec_agg's child ran into the
# last 25 ms, and its first segment rightly says it ended.)
expect "the first kept segment's processes that run on" \
    "$(jq -c --slurpfile nx "$WORK/seg$((first + 1)).json" \
        '[.processes[] | select(.pid as $p | $nx[0].processes | map(.pid) | index($p)) | .ended] | unique' \
        "$WORK/seg$first.json")" '[false]'

# A recorder killed mid-run: the trace and the segments it kept read (up to their last
# flushed chunk: a second), the oldest ones removed as they went, those left holding
# D on disk. The kill comes once the whole run's trace has a chunk past its header
# (a flush) and segment 5 (800 ms) has begun.
K=$WORK/killed.mscr
"$MEMSCRIBE" record -q --keep-last 400ms --aggregate=10ms -o "$K" -- "$PROG" 4000 &
rec=$!
for _ in $(seq 1 3000); do
    [ -e "$K.last/seg-000005.mscr" ] && [ "$(stat -c %s "$K" 2>/dev/null || echo 0)" -gt 4096 ] && break
    kill -0 "$rec" 2>/dev/null || fail "the recorder of rec_agg 4000 ended before its kill"
    sleep 0.02
done
[ -e "$K.last/seg-000005.mscr" ] || fail "no segment 5 within 60 s"
prog=$(pgrep -P "$rec" || true)
kill -KILL "$rec"
wait "$rec" 2>/dev/null || true
[ -z "$prog" ] || kill -KILL "$prog" 2>/dev/null || true
mapfile -t ksegs < <(find "$K.last" -name 'seg-*.mscr' | sort)
# 400 ms in segments of 200 ms: the two that hold D and the one begun
[ "${#ksegs[@]}" -le 3 ] || fail "more than 3 segments after the kill: ${ksegs[*]}"
for f in "$K" "${ksegs[@]}"; do
    "$MEMSCRIBE" report "$f" >"$WORK/killed.out" 2>&1 || fail "$f after the kill: $(cat "$WORK/killed.out")"
done
kfrom=$("$MEMSCRIBE" dump --header "${ksegs[0]}" 2>/dev/null | sed -n 's/^# keep-last .* from_ns=\([0-9]*\)$/\1/p')
kto=0
for f in "${ksegs[@]}"; do
    t=$("$MEMSCRIBE" dump "$f" 2>/dev/null | tail -1 | cut -d' ' -f1) || true
    [ -z "$t" ] || [ "$(ns "$t")" -le "$kto" ] || kto=$(ns "$t")
    t=$("$MEMSCRIBE" dump --header "$f" 2>/dev/null | sed -n 's/^# keep-last .* from_ns=\([0-9]*\)$/\1/p') || true
    [ "$t" -le "$kto" ] || kto=$t
done
[ $((kto - kfrom)) -ge 400000000 ] || fail "the segments left after the kill hold $((kto - kfrom)) ns, not 400 ms"
echo "ok: a killed recorder left $(basename -a "${ksegs[@]}" | tr '\n' ' ')readable, holding $((kto - kfrom)) ns"

# Refusals: usage errors, exit 2, before anything runs.
for bad in "--keep-last 1s --max-size 1M" "--keep-last 1s --sample 4K" "--keep-last 10ms --aggregate=1s" \
    "--keep-last x"; do
    code=0
    # shellcheck disable=SC2086 # the options are words
    "$MEMSCRIBE" record -q $bad -o "$WORK/bad.mscr" -- true 2>"$WORK/bad.err" || code=$?
    expect "exit of record $bad" "$code" 2
done
code=0
"$MEMSCRIBE" record -q --keep-last 1s -- true 2>"$WORK/bad.err" || code=$?
expect "exit of --keep-last without -o" "$code" 2
echo "ok: record --keep-last"
