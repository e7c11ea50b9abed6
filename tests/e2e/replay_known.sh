#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# memscribe replay on known sequences (tests/programs/rpl_known.c): under
# glibc, jemalloc, tcmalloc and mimalloc the worker makes the same number
# of calls and ends with the same live blocks and bytes as the trace; four
# threads freeing each other's blocks replay without deadlock; a fork
# child's frees of its parent's blocks are counted and left out; the
# outputs (text, JSON, CSV, SVG) and bad input. Needs MEMSCRIBE, MS_PROGRAMS.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" replay-known MEMSCRIBE MS_PROGRAMS

record() {
    "$MEMSCRIBE" record -o "$WORK/$1.mscr" -- "$MS_PROGRAMS/rpl_known" "$1" >/dev/null 2>"$WORK/$1.err" ||
        fail "record $1: $(cat "$WORK/$1.err")"
}
ALL="glibc jemalloc tcmalloc mimalloc"

# Every call of the family once, 1000 malloc/free pairs: 2015 calls,
# 5 blocks of 100 + 5000 + 160 + 512 + 1000 bytes live at the end.
record seq
"$MEMSCRIBE" replay --allocator all --repeat 1 --format=json "$WORK/seq.mscr" >"$WORK/seq.json"
expect "seq: calls in the trace" "$(jq .calls "$WORK/seq.json")" 2015
expect "seq: heap at end" "$(jq .heap_end "$WORK/seq.json")" 6772
expect "seq: blocks at end" "$(jq .blocks_end "$WORK/seq.json")" 5
expect "seq: allocators" "$(jq -r '[.allocators[].allocator] | join(" ")' "$WORK/seq.json")" "$ALL"
# A high-water mark is never below an RSS the same run reports (samples,
# at the peak, at the end): it read below RSS@end under jemalloc on cc1.
expect "seq: peak RSS below another RSS" "$(jq '[.allocators as $a | range($a | length) as $k |
    ([.samples[].rss[$k], $a[$k].rss_at_end, $a[$k].rss_at_peak] | max) > $a[$k].peak_rss] | any' \
    "$WORK/seq.json")" false
for a in $ALL; do
    r() { jq ".allocators[] | select(.allocator == \"$a\") | .$1" "$WORK/seq.json"; }
    expect "seq $a: calls made" "$(r calls)" 2015
    expect "seq $a: failed" "$(r failed)" 0
    expect "seq $a: live blocks" "$(r live_blocks)" 5
    expect "seq $a: live bytes" "$(r live_bytes)" 6772
    [ "$(r peak_rss)" -gt 0 ] || fail "seq $a: no peak RSS"
done
expect "seq: jemalloc's library" \
    "$(jq -r '.allocators[] | select(.allocator == "jemalloc") | .library' "$WORK/seq.json" | grep -c libjemalloc)" 1
expect "seq: jemalloc lacks" \
    "$(jq -r '.allocators[] | select(.allocator == "jemalloc") | .emulated' "$WORK/seq.json")" "reallocarray pvalloc"
expect "seq: glibc lacks" \
    "$(jq -r '.allocators[] | select(.allocator == "glibc") | .emulated' "$WORK/seq.json")" ""

# Four threads, each freeing the next one's 2000 blocks: the calls and the
# live set match the trace and memscribe report's leaks under every
# allocator, and the run ends (no deadlock: ctest's timeout would fail it).
record threads
"$MEMSCRIBE" replay --allocator all --repeat 1 --format=json "$WORK/threads.mscr" >"$WORK/t.json"
"$MEMSCRIBE" report --format=json "$WORK/threads.mscr" >"$WORK/t-report.json"
calls=$("$MEMSCRIBE" dump "$WORK/threads.mscr" |
    grep -cE ' (malloc|calloc|realloc|reallocarray|free|memalign|posix_memalign|aligned_alloc|valloc|pvalloc) ')
expect "threads: calls in the trace" "$(jq .calls "$WORK/t.json")" "$calls"
# Every thread of the trace made heap calls (the collector may record a
# thread's teardown as a thread of its own: the trace's count, not 5).
expect "threads: threads" "$(jq .threads "$WORK/t.json")" \
    "$("$MEMSCRIBE" dump --header "$WORK/threads.mscr" | grep -c '^# thread [0-9]')"
expect "threads: heap at end = leaked" "$(jq .heap_end "$WORK/t.json")" \
    "$(jq '.processes[0].leaked_bytes' "$WORK/t-report.json")"
for a in $ALL; do
    r() { jq ".allocators[] | select(.allocator == \"$a\") | .$1" "$WORK/t.json"; }
    expect "threads $a: calls made" "$(r calls)" "$calls"
    expect "threads $a: live bytes" "$(r live_bytes)" "$(jq .heap_end "$WORK/t.json")"
    expect "threads $a: live blocks" "$(r live_blocks)" "$(jq .blocks_end "$WORK/t.json")"
done
jq -e '.allocators[0].live_bytes >= 10000' "$WORK/t.json" >/dev/null || fail "threads: the 4 leaks are not live"

# The fork child frees three blocks its parent allocated: said, counted,
# not replayed; its own malloc and free are.
record fork
child=$("$MEMSCRIBE" dump "$WORK/fork.mscr" | awk '/how=fork/ { print $2 }')
"$MEMSCRIBE" replay --pid "$child" --repeat 1 "$WORK/fork.mscr" >"$WORK/fork.txt"
grep -q "not replayed: 3 frees of blocks this process did not allocate" "$WORK/fork.txt" ||
    fail "fork: no note of the unknown frees: $(cat "$WORK/fork.txt")"
"$MEMSCRIBE" replay --pid "$child" --repeat 1 --format=json "$WORK/fork.mscr" >"$WORK/fork.json"
expect "fork: unknown frees" "$(jq .unknown_frees "$WORK/fork.json")" 3
expect "fork: calls" "$(jq .calls "$WORK/fork.json")" 2
expect "fork: calls made" "$(jq '.allocators[0].calls' "$WORK/fork.json")" 2
expect "fork: live" "$(jq '.allocators[0].live_blocks' "$WORK/fork.json")" 0

# Text, CSV and the SVG (a well-formed picture with one line per allocator).
"$MEMSCRIBE" replay --allocator glibc --allocator mimalloc --repeat 1 --svg "$WORK/r.svg" \
    "$WORK/seq.mscr" >"$WORK/seq.txt"
grep -q "each new block gets its first byte written" "$WORK/seq.txt" || fail "text: no touch note"
expect "text rows" "$(grep -cE '^(glibc|mimalloc) ' "$WORK/seq.txt")" 2
xmllint --noout "$WORK/r.svg" || fail "SVG is not well-formed"
expect "SVG lines" "$(grep -c 'class="s-line' "$WORK/r.svg")" 2
grep -q ">mimalloc<" "$WORK/r.svg" || fail "SVG: no mimalloc legend"
"$MEMSCRIBE" replay --repeat 1 --format=csv "$WORK/seq.mscr" >"$WORK/seq.csv"
expect "CSV lines" "$(wc -l <"$WORK/seq.csv")" 2
expect "CSV calls" "$(awk -F, 'NR == 2 { print $13 }' "$WORK/seq.csv")" 2015

# Calls that succeeded in the trace and fail in the replay (1,000 live
# blocks of 2^40 bytes, made possible in the recording by
# librpl_huge.so): the text table shows the failed column and leaves the
# overheads blank (they were about -1 PiB), JSON gives null, exit 1.
"$MEMSCRIBE" record -q -o "$WORK/huge.mscr" -- "$MS_PROGRAMS/rpl_known_huge" hold 1000 $((1 << 40)) ||
    fail "record hold: exit $?"
rc=0
"$MEMSCRIBE" replay --repeat 1 "$WORK/huge.mscr" >"$WORK/huge.txt" 2>"$WORK/huge.err" || rc=$?
expect "huge: exit" "$rc" 1
grep -q "calls that succeeded in the trace failed" "$WORK/huge.err" || fail "huge: stderr: $(cat "$WORK/huge.err")"
expect "huge: failed column (last)" "$(awk '$1 == "allocator" { h = $NF } $1 == "glibc" { print h, $NF }' "$WORK/huge.txt")" "failed 1000"
grep -q "^glibc: 1000 calls failed that succeeded in the trace" "$WORK/huge.txt" || fail "huge: no line on the failed calls"
grep -q -- "-1[0-9]\{15\}" "$WORK/huge.txt" && fail "huge: an overhead of about -1 PiB is printed"
"$MEMSCRIBE" replay --repeat 1 --format=json "$WORK/huge.mscr" >"$WORK/huge.json" 2>/dev/null || true
expect "huge: JSON overhead at peak" "$(jq '.allocators[0].overhead_at_peak' "$WORK/huge.json")" null
expect "huge: JSON failed" "$(jq '.allocators[0].failed' "$WORK/huge.json")" 1000
# --touch pages is bounded: 8 live blocks of 64 MiB under a 128 MiB limit,
# the first two written in full, six at their first byte.
"$MEMSCRIBE" record -q -o "$WORK/hold.mscr" -- "$MS_PROGRAMS/rpl_known" hold 8 $((64 << 20)) ||
    fail "record hold 8: exit $?"
"$MEMSCRIBE" replay --repeat 1 --touch pages --touch-limit 128M --format=json "$WORK/hold.mscr" >"$WORK/hold.json" ||
    fail "hold: replay exit $?"
expect "hold: blocks written in part" "$(jq '.allocators[0].partly_written' "$WORK/hold.json")" 6
expect "hold: touch limit" "$(jq '.touch_limit' "$WORK/hold.json")" $((128 << 20))
rss=$(jq '.allocators[0].peak_rss' "$WORK/hold.json")
[ "$rss" -lt $((256 << 20)) ] || fail "hold: peak RSS $rss under a 128 MiB limit"

# Bad input: a file that is not a trace, an unknown allocator name, a
# missing .so, a pid not in the trace.
echo "not a trace" >"$WORK/bad.mscr"
set +e
"$MEMSCRIBE" replay "$WORK/bad.mscr" 2>"$WORK/e1"
expect "bad trace: exit" $? 1
"$MEMSCRIBE" replay --allocator nosuch "$WORK/seq.mscr" 2>"$WORK/e2"
expect "unknown allocator: exit" $? 2
"$MEMSCRIBE" replay --allocator "$WORK/none.so" "$WORK/seq.mscr" 2>"$WORK/e3"
expect "missing .so: exit" $? 1
"$MEMSCRIBE" replay --pid 1 "$WORK/seq.mscr" 2>"$WORK/e4"
expect "unknown pid: exit" $? 1
"$MEMSCRIBE" replay --touch pages --touch-limit lots "$WORK/seq.mscr" 2>"$WORK/e5"
expect "bad --touch-limit: exit" $? 2
set -e
grep -q "bad.mscr" "$WORK/e1" || fail "bad trace: message does not name the file: $(cat "$WORK/e1")"
grep -q "nosuch" "$WORK/e2" || fail "unknown allocator: message: $(cat "$WORK/e2")"
grep -q "none.so" "$WORK/e3" || fail "missing .so: message: $(cat "$WORK/e3")"
grep -q "no process 1" "$WORK/e4" || fail "unknown pid: message: $(cat "$WORK/e4")"
echo "PASS"
