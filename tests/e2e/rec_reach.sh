#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# record --reach (docs/leaks.md, "Classes at exit"): tests/programs/rec_reach.c
# makes a block of each class memcheck tells apart, each of its own size,
# and prints the class it expects of each; memscribe's class of every such
# block must be that one, and valgrind's memcheck's too (where valgrind is
# installed: block for block, by size). The program's output and exit
# status are the same with the scan; a process that ptrace may not stop
# (strace traces it) gets no classes, and the trace says why.
# Without the wrapper, MEMSCRIBE_REACH=1 asks for the same scan.
# Needs MEMSCRIBE, MS_PROGRAMS, MS_BUILD.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" rec_reach MEMSCRIBE MS_PROGRAMS MS_BUILD
# shellcheck source=tests/e2e/reach_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/reach_lib.sh"
need jq
PROG=$MS_PROGRAMS/rec_reach

"$MEMSCRIBE" record --reach -q -o "$WORK/r.mscr" -- "$PROG" >"$WORK/out" || fail "record --reach failed"
# memscribe's class of each block of an expected size.
reach_check "$WORK/out" "$WORK/r.mscr" "record --reach"

# --reach-copy bounds the heap copied into the recorder: with nothing copied
# (0), or less than the blocks (1K), every block the search reaches is read
# from the stopped process instead, and the classes are the same.
for copy in 0 1K; do
    "$MEMSCRIBE" record --reach --reach-copy "$copy" -q -o "$WORK/c$copy.mscr" -- "$PROG" >"$WORK/cout" ||
        fail "record --reach --reach-copy $copy failed"
    reach_check "$WORK/cout" "$WORK/c$copy.mscr" "record --reach --reach-copy $copy"
done
rc=0
"$MEMSCRIBE" record --reach-copy 1M -- "$PROG" >/dev/null 2>"$WORK/err" || rc=$?
[ "$rc" = 2 ] && grep -q "reach-copy goes with --reach" "$WORK/err" ||
    fail "--reach-copy without --reach: exit $rc, $(cat "$WORK/err")"

# The per-process totals add the same blocks up.
"$MEMSCRIBE" leaks --format=json "$WORK/r.mscr" >"$WORK/leaks.json" || fail "leaks"
expect "definitely lost bytes" "$(jq '.processes[0].reach.definitely_lost_bytes' "$WORK/leaks.json")" 1003
expect "indirectly lost bytes" "$(jq '.processes[0].reach.indirectly_lost_bytes' "$WORK/leaks.json")" 2009
expect "scan status" "$(jq -r '.processes[0].reach.status' "$WORK/leaks.json")" scanned
# The same program ending by a raw exit_group through syscall(): scanned too.
REC_REACH_END=exit_group "$MEMSCRIBE" record --reach -q -o "$WORK/g.mscr" -- "$PROG" >"$WORK/gout" ||
    fail "record --reach (exit_group) failed"
"$MEMSCRIBE" leaks --format=json "$WORK/g.mscr" >"$WORK/gleaks.json" || fail "leaks (exit_group)"
expect "exit_group: scan status" "$(jq -r '.processes[0].reach.status' "$WORK/gleaks.json")" scanned
expect "exit_group: definitely lost bytes" \
    "$(jq '.processes[0].reach.definitely_lost_bytes' "$WORK/gleaks.json")" 1003
expect "exit_group: indirectly lost bytes" \
    "$(jq '.processes[0].reach.indirectly_lost_bytes' "$WORK/gleaks.json")" 2009
"$MEMSCRIBE" leaks "$WORK/r.mscr" >"$WORK/leaks.txt" || fail "leaks (text)"
grep -q '^classes at exit: definite: ' "$WORK/leaks.txt" || fail "no legend of the classes in leaks' text"

# report's totals and check's gates read the same classes.
"$MEMSCRIBE" report "$WORK/r.mscr" >"$WORK/report.txt" || fail "report"
grep -q '^  lost at exit: *3012 bytes in 3 blocks (definitely 1003 bytes in 1, indirectly 2009 bytes in 2)$' \
    "$WORK/report.txt" || fail "report's lost total: $(grep 'lost at exit' "$WORK/report.txt")"
rc=0
"$MEMSCRIBE" check --max-definitely-lost 1003 --max-lost-blocks 3 "$WORK/r.mscr" >/dev/null || rc=$?
expect "check at the limits" "$rc" 0
rc=0
"$MEMSCRIBE" check --max-definitely-lost 1002 "$WORK/r.mscr" >"$WORK/check.txt" || rc=$?
expect "check a byte under the limit" "$rc" 1
grep -q '^FAIL  max-definitely-lost 1002 *unsuppressed definitely lost: 1003 bytes (1003 bytes definitely lost, 0 bytes suppressed; limit 1002 bytes)$' \
    "$WORK/check.txt" || fail "check's line: $(cat "$WORK/check.txt")"

# The failed class check lists the sites with lost or possibly lost blocks,
# most lost first, with each class's bytes (JSON: the leaks table's keys).
"$MEMSCRIBE" check --max-definitely-lost 0 --format=json "$WORK/r.mscr" >"$WORK/check.json" || true
expect "the failed class check's sites (leaked definite indirect possible)" \
    "$(jq -r '.leaks[] | "\(.leaked_bytes) \(.definitely_lost_bytes) \(.indirectly_lost_bytes) \(.possibly_lost_bytes)"' \
        "$WORK/check.json" | tr '\n' ',')" "1005 0 1005 0,1004 0 1004 0,1003 1003 0 0,1007 0 0 1007,1006 0 0 1006,"

# valgrind's memcheck on the same program: one loss record per size.
if command -v valgrind >/dev/null; then
    vg_classes "$PROG" "$WORK/vg_got"
    diff -u "$WORK/vg_got" "$WORK/got" >&2 || fail "memscribe's classes differ from memcheck's"
fi

# Without the wrapper (the collector starts record --serve): the same classes.
env LD_PRELOAD="$MS_BUILD/lib/memscribe/libmemscribe.so" MEMSCRIBE_OUTPUT="$WORK/nw.mscr" \
    MEMSCRIBE_REACH=1 "$PROG" >/dev/null || fail "the program without the wrapper failed"
# The recorder finishes the trace after the program's end (as record_lib.sh's ms_wait_trace).
for _ in $(seq 1 600); do
    "$MEMSCRIBE" dump "$WORK/nw.mscr" >/dev/null 2>"$WORK/nw.err" && [ ! -s "$WORK/nw.err" ] && break
    sleep 0.1
done
"$MEMSCRIBE" leaks --all --top 0 --format=json "$WORK/nw.mscr" |
    jq -r '.blocks[] | select(.size > 1000 and .size < 1013) | "EXPECT \(.size) \(.class)"' |
    sort >"$WORK/nw_got" || fail "leaks --all of the trace without the wrapper"
diff -u "$WORK/expect" "$WORK/nw_got" >&2 || fail "classes without the wrapper differ"

# The program's output and exit status are its own with the scan on.
"$PROG" >"$WORK/plain" || fail "the program alone failed"
diff -u "$WORK/plain" "$WORK/out" >&2 || fail "the output changed under record --reach"
rc=0
"$MEMSCRIBE" record --reach -q -o "$WORK/s.mscr" -- sh -c 'echo hi; exit 3' >"$WORK/sh_out" || rc=$?
expect "exit status under --reach" "$rc" 3
expect "output under --reach" "$(cat "$WORK/sh_out")" hi

# Where ptrace is refused (strace traces the program), no classes, and why.
if command -v strace >/dev/null; then
    "$MEMSCRIBE" record --reach -q -o "$WORK/st.mscr" -- strace -o /dev/null "$PROG" \
        >/dev/null 2>"$WORK/st_err" || fail "record --reach of a program under strace failed"
    grep -q 'no leak classes at its exit: ptrace refused' "$WORK/st_err" ||
        fail "no word of the refused scan: $(cat "$WORK/st_err")"
    "$MEMSCRIBE" leaks --format=json "$WORK/st.mscr" >"$WORK/st.json" || fail "leaks of the strace trace"
    expect "status of the refused scan" \
        "$(jq -r '[.processes[] | select(.exe | endswith("rec_reach")) | .reach.status][0]' "$WORK/st.json")" \
        unavailable
fi
