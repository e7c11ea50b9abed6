#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# fork without exec, fork+exec, posix_spawn, vfork+exec and a shell
# pipeline: every process's calls are in the trace, each exactly once.
source "$(dirname "$0")/record_lib.sh"

# count SIZE: mallocs of SIZE in the dump; pids SIZE: the pids making them.
count() { awk -v s="size=$1" '$5 == "malloc" && $NF != "" { for (i = 6; i <= NF; i++) if ($i == s) n++ } END { print n + 0 }' "$WORK/dump.txt"; }
pids() { awk -v s="size=$1" '$5 == "malloc" { for (i = 6; i <= NF; i++) if ($i == s) print $2 }' "$WORK/dump.txt" | sort -u; }

"$MEMSCRIBE" record -q -o "$WORK/t.mscr" -- "$MS_PROGRAMS/col_procs" all || fail "record exited with $?"
ms_dump_ok "$WORK/t.mscr"
root=$(awk '$5 == "process_start" && / how=initial / { print $2; exit }' "$WORK/dump.txt")
[ -n "$root" ] || fail "no initial process_start"
[ "$(count 2222)" = 1 ] || fail "the parent's malloc(2222) appears $(count 2222) times"
[ "$(pids 2222)" = "$root" ] || fail "malloc(2222) is not the parent's"
for size in 1111 3333 4444 5555; do
    [ "$(count $size)" = 3 ] || fail "malloc($size) appears $(count $size) times, not 3"
    p=$(pids $size)
    [ "$(echo "$p" | wc -l)" = 1 ] && [ "$p" != "$root" ] || fail "malloc($size) comes from pids '$p'"
done
fork_pid=$(pids 1111)
grep -q " $fork_pid $fork_pid - process_start ppid=$root how=fork " "$WORK/dump.txt" ||
    fail "the forked child $fork_pid has no process_start how=fork"
for size in 3333 4444 5555; do
    p=$(pids $size)
    grep -q " $p $p - process_start .* how=exec .*argv=\"[^\"]*leaf $size\"" "$WORK/dump.txt" ||
        fail "the exec'd child $p (leaf $size) has no process_start how=exec with its argv"
done
n=$(grep -c " process_exit " "$WORK/dump.txt")
[ "$n" = "$(grep -c " process_start " "$WORK/dump.txt")" ] || fail "process_start and process_exit counts differ"

"$MEMSCRIBE" record -q -o "$WORK/p.mscr" -- sh -c "'$MS_PROGRAMS/col_procs' leaf 6666 | '$MS_PROGRAMS/col_procs' leaf 7777" ||
    fail "record of a pipeline exited with $?"
ms_dump_ok "$WORK/p.mscr"
for size in 6666 7777; do
    [ "$(count $size)" = 3 ] || fail "pipeline: malloc($size) appears $(count $size) times, not 3"
done
[ "$(pids 6666)" != "$(pids 7777)" ] || fail "pipeline: both ends in one pid"
"$MEMSCRIBE" record -q -o "$WORK/f.mscr" -- "$MS_PROGRAMS/col_procs" forks 100 ||
    fail "record of 100 forks beside busy threads exited with $?"
ms_dump_ok "$WORK/f.mscr"
[ "$(count 4242)" = 300 ] || fail "forks: malloc(4242) appears $(count 4242) times, not 300"
[ "$(pids 4242 | wc -l)" = 100 ] || fail "forks: malloc(4242) comes from $(pids 4242 | wc -l) pids, not 100"
n=$(grep -c " process_start .* how=fork " "$WORK/dump.txt" || true)
[ "$n" = 100 ] || fail "forks: $n process_start how=fork, not 100"
# A fork while a thread of the program holds the loader's lock (inside
# dl_iterate_phdr): the child, which never needs that lock itself, must not
# wait for it in the collector. Not under MEMSCRIBE_UNWIND=verify, where
# libunwind's every walk takes the lock.
if [ "${MEMSCRIBE_UNWIND-}" != verify ]; then
    "$MEMSCRIBE" record -q -o "$WORK/l.mscr" -- "$MS_PROGRAMS/col_procs" loaderfork ||
        fail "record of a fork beside a thread inside dl_iterate_phdr exited with $? (7: the child hung)"
    ms_dump_ok "$WORK/l.mscr"
    [ "$(count 4343)" = 3 ] || fail "loaderfork: malloc(4343) appears $(count 4343) times, not 3"
    n=$(grep -c " process_start .* how=fork " "$WORK/dump.txt" || true)
    [ "$n" = 1 ] || fail "loaderfork: $n process_start how=fork, not 1"
fi
# --no-follow: the first image only; --depth: no stack deeper than asked.
"$MEMSCRIBE" record -q --no-follow --depth 3 -o "$WORK/n.mscr" -- "$MS_PROGRAMS/col_procs" all ||
    fail "record --no-follow exited with $?"
"$MEMSCRIBE" dump --stacks --raw "$WORK/n.mscr" >"$WORK/dump.txt" || fail "dump --stacks failed"
[ "$(grep -c " process_start " "$WORK/dump.txt")" = 1 ] || fail "--no-follow traced more than one image"
[ "$(count 2222)" = 1 ] || fail "--no-follow: the program's own malloc(2222) appears $(count 2222) times"
for size in 1111 3333 4444 5555; do
    [ "$(count $size)" = 0 ] || fail "--no-follow: a child's malloc($size) was traced"
done
deepest=$(awk '/^stack [0-9]+ / { for (i = 1; i <= NF; i++) if ($i ~ /^depth=/) { d = substr($i, 7) + 0; if (d > m) m = d } } END { print m + 0 }' "$WORK/dump.txt")
[ "$deepest" -ge 1 ] && [ "$deepest" -le 3 ] || fail "--depth 3: the deepest stack has $deepest frames"
echo "ok: fork, fork+exec, posix_spawn, vfork+exec, a pipeline, forks beside busy threads, a fork beside a thread in the loader, --no-follow, --depth"
