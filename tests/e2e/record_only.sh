#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# record --only GLOB: only the matching processes of the tree are in the
# trace, with the calls an unfiltered trace has for them; the others run
# untraced, pass the collector on, and are neither waited for nor named.
source "$(dirname "$0")/record_lib.sh"

# dumph TRACE: its dump with the header's '#' lines, in $WORK/dump.txt.
dumph() { "$MEMSCRIBE" dump --header "$1" >"$WORK/dump.txt" 2>"$WORK/dump.err" || fail "dump of $1 failed: $(cat "$WORK/dump.err")"; }

# count SIZE: mallocs of SIZE in the dump; starts: process_start lines.
count() { awk -v s="size=$1" '$5 == "malloc" { for (i = 6; i <= NF; i++) if ($i == s) n++ } END { print n + 0 }' "$WORK/dump.txt"; }
starts() { grep -c " process_start " "$WORK/dump.txt" || true; }

# Copies, not links: the executable's own file name is what matches.
cp "$MS_PROGRAMS/col_procs" "$WORK/hog_a"
cp "$MS_PROGRAMS/col_procs" "$WORK/other"
cd "$WORK" || exit 1

# sh (untraced) forks and execs hog_a (traced) and other (untraced).
rc=0
"$MEMSCRIBE" record -q --only 'hog*' -o "$WORK/g.mscr" -- \
    sh -c './hog_a leaf 6666; ./other leaf 7777; echo "out 42"; exit 3' \
    >"$WORK/out.txt" 2>"$WORK/err.txt" || rc=$?
[ "$rc" = 3 ] || fail "--only 'hog*': exit status $rc, not the program's 3"
[ "$(cat "$WORK/out.txt")" = "out 42" ] || fail "--only 'hog*': the program's output changed: $(cat "$WORK/out.txt")"
[ ! -s "$WORK/err.txt" ] || fail "--only 'hog*': record said: $(cat "$WORK/err.txt")"
dumph "$WORK/g.mscr"
[ "$(starts)" = 1 ] || fail "--only 'hog*': $(starts) processes traced, not 1"
grep -q '^# image 0 .* how=exec exe="[^"]*/hog_a"' "$WORK/dump.txt" || fail "--only 'hog*': the image is not hog_a"
grep -qx '# only "hog\*"' "$WORK/dump.txt" || fail "--only 'hog*': the trace does not say which --only"
[ "$(count 6666)" = 3 ] || fail "--only 'hog*': hog_a's malloc(6666) appears $(count 6666) times, not 3"
[ "$(count 7777)" = 0 ] || fail "--only 'hog*': the untraced other's malloc(7777) was traced"
n=$(grep -c " malloc " "$WORK/dump.txt")
"$MEMSCRIBE" record -q -o "$WORK/all.mscr" -- sh -c './hog_a leaf 6666' || fail "unfiltered record exited with $?"
"$MEMSCRIBE" dump --header "$WORK/all.mscr" >"$WORK/all.txt" || fail "dump of the unfiltered trace failed"
pid=$(awk '/^# image .*exe=".*\/hog_a"/ { sub("pid=", "", $4); print $4 }' "$WORK/all.txt")
m=$(awk -v p="$pid" '$2 == p && $5 == "malloc"' "$WORK/all.txt" | wc -l)
[ "$n" = "$m" ] || fail "--only 'hog*': hog_a made $n mallocs, $m in the unfiltered trace"
grep -q '^# only' "$WORK/all.txt" && fail "an unfiltered trace says --only"

# A dormant process that execs the matching program in the same pid, under
# a dormant parent that execs the dormant one: the environment survives.
"$MEMSCRIBE" record -q --only hog_a -o "$WORK/e.mscr" -- env sh -c 'exec ./hog_a leaf 5555' ||
    fail "--only hog_a through env and exec exited with $?"
dumph "$WORK/e.mscr"
[ "$(starts)" = 1 ] || fail "exec from a dormant image: $(starts) processes traced, not 1"
[ "$(count 5555)" = 3 ] || fail "exec from a dormant image: malloc(5555) appears $(count 5555) times"

# A link matches by argv[0]'s last part; the matching image's children
# (fork, exec of itself: "all") are its own executable and traced too.
ln -s hog_a link_b
"$MEMSCRIBE" record -q --only link_b -o "$WORK/l.mscr" -- sh -c './link_b leaf 4444; ./other leaf 3' ||
    fail "--only link_b exited with $?"
dumph "$WORK/l.mscr"
[ "$(starts)" = 1 ] && [ "$(count 4444)" = 3 ] || fail "--only link_b: $(starts) images, $(count 4444) malloc(4444)"
"$MEMSCRIBE" record -q --only hog_a -o "$WORK/a.mscr" -- sh -c './hog_a all' || fail "--only hog_a all exited with $?"
dumph "$WORK/a.mscr"
for size in 1111 3333 4444 5555; do
    [ "$(count $size)" = 3 ] || fail "--only hog_a all: malloc($size) appears $(count $size) times, not 3"
done

# Nothing matches: an empty trace, a clear message, the program's status.
rc=0
"$MEMSCRIBE" record --only nothing-here -o "$WORK/n.mscr" -- sh -c './hog_a leaf 1; exit 5' \
    2>"$WORK/err.txt" || rc=$?
[ "$rc" = 5 ] || fail "--only nothing-here: exit status $rc, not 5"
grep -q "record: --only 'nothing-here' matched no process of the tree; the trace is empty" "$WORK/err.txt" ||
    fail "--only nothing-here: no clear message: $(cat "$WORK/err.txt")"
dumph "$WORK/n.mscr"
[ "$(starts)" = 0 ] && [ "$(count 1)" = 0 ] || fail "--only nothing-here: the trace is not empty"
rc=0
"$MEMSCRIBE" record --only '' -- true 2>/dev/null || rc=$?
[ "$rc" = 2 ] || fail "--only '': exit status $rc, not 2 (usage)"
echo "ok: --only with sh -c, exec from a dormant image, a link, children of a match, no match"
