#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# memscribe check (docs/check.md) on two builds of one program
# (tests/programs/diff_prog.c): the new build leaks one more block (64
# bytes) and its peak buffer grew from 1000 to 1500 bytes. Exact numbers
# of each check; the new build fails a gate against its base, and passes
# it with the leak suppressed in LeakSanitizer's syntax (and in
# memscribe's own); percentages decided exactly at their edge; JUnit XML
# read by a real JUnit reader (junitparser), XML-escaped; exit statuses.
# Needs MEMSCRIBE, MS_PROGRAMS.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" check MEMSCRIBE MS_PROGRAMS
need jq
# Debian's python3-junitparser is for Debian's python3, which a python3
# earlier on PATH (pyenv's) may hide.
PY=
for py in python3 /usr/bin/python3; do
    if "$py" -c 'import junitparser' 2>/dev/null; then
        PY=$py
        break
    fi
done
[ -n "$PY" ] || fail "python3-junitparser is not installed: run scripts/setup.sh --test"
HERE=$(dirname "${BASH_SOURCE[0]}")
# A folder whose name XML must escape: the trace's path names the suite.
mkdir "$WORK/a&b<c>"
B=$WORK/base.mscr N="$WORK/a&b<c>/new.mscr"
"$MEMSCRIBE" record -o "$B" -- "$MS_PROGRAMS/diff_base/diff_prog" >/dev/null 2>&1 || fail "record diff_base"
"$MEMSCRIBE" record -o "$N" -- "$MS_PROGRAMS/diff_new/diff_prog" >/dev/null 2>&1 || fail "record diff_new"

# usage: status CMD...: the exit status of memscribe CMD... (output to $WORK/out, $WORK/err)
status() {
    local rc=0
    "$MEMSCRIBE" "$@" >"$WORK/out" 2>"$WORK/err" || rc=$?
    echo "$rc"
}

# Every number, exactly: base leaks 40 bytes in 1 block (leak_some), new
# 104 in 2 (leak_more's 64 too); the peak is make_buffer's buffer alone;
# 22 and 23 allocations; one temporary (make_buffer's: churn's blocks have
# another call of the thread between their malloc and free).
ALL=(--max-leaked 0 --max-leaked-blocks 0 --max-peak 64K --max-temporary 1 --max-allocations 22)
expect "base: exit" "$(status check --format=json "${ALL[@]}" "$B")" 1
v() { jq -c "[.checks[] | [.check, .value, .limit, .passed]]" "$WORK/out"; }
expect "base: values" "$(v)" \
    '[["max-leaked 0",40,0,false],["max-leaked-blocks 0",1,0,false],["max-peak 64K",1000,65536,true],["max-temporary 1",1,1,true],["max-allocations 22",22,22,true]]'
expect "base: measures" "$(jq -c '[.checks[].measure]' "$WORK/out")" \
    '["unsuppressed_leaked_bytes","unsuppressed_leaked_blocks","peak_bytes","temporary","allocations"]'
expect "base: passed" "$(jq .passed "$WORK/out")" false
expect "base: leaks listed" "$(jq -c '[.leaks[] | [.leaked_bytes, .leaked_blocks, .stack[0]]]' "$WORK/out")" \
    '[[40,1,"leak_some (diff_prog.c:54)"]]'
expect "new: exit" "$(status check --format=json "${ALL[@]}" "$N")" 1
expect "new: values" "$(jq -c '[.checks[].value]' "$WORK/out")" '[104,2,1500,1,23]'
expect "new: largest leak first" "$(jq -c '[.leaks[] | .leaked_bytes]' "$WORK/out")" '[64,40]'
expect "passing limits: exit" \
    "$(status check --max-leaked 104 --max-leaked-blocks 2 --max-peak 1500 --max-allocations 23 "$N")" 0
grep -q "^check: all 4 checks passed" "$WORK/out" || fail "text: no 'all passed' line"
# RSS is sampled while the program runs: a run this short may end before
# the first sample, and then the check fails saying so.
rss=$("$MEMSCRIBE" report --format=json "$N" | jq .total.peak_rss_bytes)
if [ "$rss" = null ]; then
    expect "peak-rss: exit (no sample)" "$(status check --format=json --max-peak-rss 1G "$N")" 1
    expect "peak-rss: message" "$(jq -r '.checks[0].message' "$WORK/out")" "peak RSS: not recorded in the trace"
else
    expect "peak-rss: exit" "$(status check --format=json --max-peak-rss 1G "$N")" 0
    expect "peak-rss: report's" "$(jq '.checks[0].value' "$WORK/out")" "$rss"
fi

# The gate: one more leaked block than the base fails it.
GATE=(--base "$B" --max-growth "leaked-blocks=0,leaked=0")
expect "gate: exit" "$(status check "${GATE[@]}" "$N")" 1
cat "$WORK/out"
grep -q "^FAIL  max-growth leaked-blocks=0 *unsuppressed leaked blocks: 2 against base 1, growth +1 (limit +0)$" "$WORK/out" ||
    fail "text: no failed leaked-blocks growth line"
grep -q "^FAIL  max-growth leaked=0 *unsuppressed leaked: 104 bytes against base 40 bytes, growth +64 bytes (limit +0 bytes)$" "$WORK/out" ||
    fail "text: no failed leaked growth line"
# Under each failed growth check, the sites that grew in its measure, as
# diff matches them (by function chain): leak_more alone, leak_some did
# not grow; one table per check (blocks, then bytes); the rows without
# libc's start-up (docs/symbols.md, "The frame of interest").
grep -q "^ *0 *64 *64  leak_more < main$" "$WORK/out" || fail "text: leak_more's growth not shown"
grep -q "^ *0 *1 *1  leak_more < main$" "$WORK/out" || fail "text: leak_more's block growth not shown"
expect "text: a table per failed growth check" "$(grep -c "^max-growth leaked.*: the sites that grew in " "$WORK/out")" 2
grep -q "leak_some" "$WORK/out" && fail "text: leak_some shown, though it did not grow"
grep -q "^check: 2 of 2 checks failed" "$WORK/out" || fail "text: no summary line"
expect "gate: JSON exit" "$(status check --format=json "${GATE[@]}" "$N")" 1
expect "gate: JSON grown" "$(jq -c '[.checks[] | select(.check == "max-growth leaked=0") | .grown[] |
    [.leaked_bytes_base, .leaked_bytes_new, .leaked_bytes_change, .site[0]]]' "$WORK/out")" \
    '[[0,64,64,"leak_more"]]'
expect "gate: JSON grown blocks" "$(jq -c '[.checks[] | select(.check == "max-growth leaked-blocks=0") | .grown[] |
    [.leaked_blocks_base, .leaked_blocks_new, .leaked_blocks_change, .site[0]]]' "$WORK/out")" \
    '[[0,1,1,"leak_more"]]'
expect "gate: JSON leaks" "$(jq .leaks "$WORK/out")" null
expect "gate: base against itself" "$(status check "${GATE[@]}" "$B")" 0

# ... and passes with the leak suppressed, in LeakSanitizer's syntax
# (a substring of a frame's function, file or module) ...
printf '# LeakSanitizer suppressions\n\n  leak:^leak_more$  \n' >"$WORK/lsan.supp"
expect "gate: LSan suppression" "$(status check "${GATE[@]}" --lsan-suppressions "$WORK/lsan.supp" "$N")" 0
grep -q "^PASS  max-growth leaked=0 *unsuppressed leaked: 40 bytes against base 40 bytes, growth +0 bytes" "$WORK/out" ||
    fail "text: suppressed leak still counted"
for rule in leak_mor 'leak_*re' '^leak_more' 'more$'; do
    echo "leak:$rule" >"$WORK/l.supp"
    expect "LSan rule $rule" "$(status check "${GATE[@]}" --lsan-suppressions "$WORK/l.supp" "$N")" 0
done
# Anchors bind; a module or file pattern matches every frame of its file.
for rule in '^eak_more' 'leak_more^' 'leak_mor$' 'libnothing.so'; do
    echo "leak:$rule" >"$WORK/l.supp"
    expect "LSan rule $rule misses" "$(status check "${GATE[@]}" --lsan-suppressions "$WORK/l.supp" "$N")" 1
done
echo "leak:diff_prog.c" >"$WORK/l.supp"
expect "LSan file rule: every leak" \
    "$(status check --max-leaked 0 --lsan-suppressions "$WORK/l.supp" "$N")" 0
echo "leak:diff_prog" >"$WORK/l.supp"
expect "LSan module rule: every leak" \
    "$(status check --max-leaked 0 --lsan-suppressions "$WORK/l.supp" "$N")" 0
# ... and in memscribe's own (a glob over the stack's text).
echo "leak:leak_more (*" >"$WORK/m.supp"
expect "gate: memscribe suppression" "$(status check "${GATE[@]}" --suppress "$WORK/m.supp" "$N")" 0
# leaks lists the suppressed row apart, as with memscribe's rules.
"$MEMSCRIBE" leaks --format=json --lsan-suppressions "$WORK/lsan.supp" "$N" >"$WORK/leaks.json"
expect "leaks: apart" "$(jq -c '[.suppressed[] | .stack[0]]' "$WORK/leaks.json")" '["leak_more (diff_prog.c:309)"]'
echo "suppress:x" >"$WORK/bad.supp"
expect "bad suppression file: exit" "$(status check --max-leaked 0 --lsan-suppressions "$WORK/bad.supp" "$N")" 1
grep -q "bad.supp:1: a rule is 'leak:PATTERN'" "$WORK/err" || fail "bad suppression file: message"

# Percentages, exact at the edge: the peak grew by 500 of 1000 (50 %), the
# allocations by 1 of 22 (4.5454...%).
pct() { status check --format=json --base "$B" --max-growth "$1" "$N"; }
expect "peak=50%" "$(pct peak=50%)" 0
expect "peak=50% allowed" "$(jq .checks[0].limit "$WORK/out")" 500
expect "peak=49.9999%" "$(pct peak=49.9999%)" 1
expect "allocations=4.545455%" "$(pct allocations=4.545455%)" 0
expect "allocations=4.545454%" "$(pct allocations=4.545454%)" 1
expect "allocations=4.545454%: numbers" "$(jq -c '.checks[0] | [.check, .value, .base, .change, .limit]' "$WORK/out")" \
    '["max-growth allocations=4.545454%",23,22,1,0]'
expect "absolute growth" "$(pct peak=500,allocations=1)" 0
expect "absolute growth, one short" "$(pct peak=499)" 1

# JUnit XML, read by junitparser: a testcase per check, failures with
# their numbers and the leaking stacks, the path escaped.
"$MEMSCRIBE" check --junit "$WORK/j.xml" "${GATE[@]}" --max-peak 64K "$N" >/dev/null && fail "junit run passed"
"$PY" "$HERE/check_junit.py" "$WORK/j.xml" >"$WORK/j.txt" || fail "junitparser could not read the XML"
cat "$WORK/j.txt"
expect "junit: totals" "$(sed -n 1p "$WORK/j.txt")" "suites 1 tests=3 failures=2 errors=0"
expect "junit: suite" "$(sed -n 2p "$WORK/j.txt")" "suite $N tests=3 failures=2 counted=3/2"
expect "junit: case 1" "$(sed -n 3p "$WORK/j.txt")" \
    "case memscribe.check|max-growth leaked-blocks=0|FAIL|unsuppressed leaked blocks: 2 against base 1, growth +1 (limit +0)"
grep -q "^   *0 *64 *64  leak_more < main$" "$WORK/j.txt" ||
    fail "junit: leak_more's growth not in the failure's text"
"$MEMSCRIBE" check --junit "$WORK/j2.xml" --max-leaked-blocks 1 "$N" >/dev/null && fail "junit 2 run passed"
"$PY" "$HERE/check_junit.py" "$WORK/j2.xml" >"$WORK/j2.txt" || fail "junitparser could not read the second XML"
grep -q "^ *64 *1  leak_more (diff_prog.c:309) < main (diff_prog.c:41)" "$WORK/j2.txt" ||
    fail "junit: leak_more's stack not in the failure's text"
grep -q "^case memscribe.check|max-peak 64K|PASS|$" "$WORK/j.txt" || fail "junit: passing case"
xmllint --noout "$WORK/j.xml" || fail "junit: not well-formed XML"

# Exit statuses: 2 for usage, 1 for a trace that cannot be read.
expect "no checks" "$(status check "$N")" 2
expect "growth without base" "$(status check --max-growth peak=5% "$N")" 2
expect "base without growth" "$(status check --base "$B" --max-leaked 0 "$N")" 2
expect "bad size" "$(status check --max-peak lots "$N")" 2
expect "percent on a plain limit" "$(status check --max-peak 5% "$N")" 2
expect "bad growth list" "$(status check --base "$B" --max-growth peak "$N")" 2
expect "unknown growth measure" "$(status check --base "$B" --max-growth heap=5% "$N")" 2
expect "csv" "$(status check --format=csv --max-leaked 0 "$N")" 2
expect "two traces" "$(status check --max-leaked 0 "$B" "$N")" 2
echo "not a trace" >"$WORK/junk.mscr"
expect "not a trace" "$(status check --max-leaked 0 "$WORK/junk.mscr")" 1
expect "base not a trace" "$(status check --base "$WORK/junk.mscr" --max-growth peak=0 "$N")" 1
# (Into a file: grep -q would close the pipe under a help longer than a
# pipe write, and pipefail would take memscribe's SIGPIPE for a failure.)
"$MEMSCRIBE" check --help >"$WORK/help" || fail "--help: exit $?"
grep -q "usage: memscribe check" "$WORK/help" || fail "--help"
echo "check: the gate fails one more leaked block, passes it suppressed, JUnit read back"
