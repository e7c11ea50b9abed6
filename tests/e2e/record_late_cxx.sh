#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# C programs that load C++ after they started run traced as they run
# untraced: a C host whose C++ plugin's constructor and functions use every
# form of operator new and delete (col_cxx_host, col_cxx_plug.cc), under
# record, under the no-wrapper mode and attached to while it loads the
# plugin; ar and nm, which load bfd's LLVM gold plugin (and with it
# libLLVM and libstdc++); and a C program that reaches operator new and the
# other allocators' names where nothing defines them (col_cxx_none), whose
# calls our own definitions answer, keeping each contract. Each of these
# crashed when the collector resolved operator new once, at start.
source "$(dirname "$0")/record_lib.sh"
: "${MS_BUILD:?set by ctest}"

HOST=$MS_PROGRAMS/col_cxx_host
PLUG=$MS_PROGRAMS/libcol_cxx_plug.so
COLLECTOR=$MS_BUILD/lib/memscribe/libmemscribe.so

# The plugin's plain-sized calls reach malloc through libstdc++, each twice
# (its constructor, then col_cxx_plug_run), or once when attached (the
# constructor runs before the attach collector patches the new module:
# docs/record-attach.md, "What it cannot see"). usage: plugin_calls TRACE WHAT [N]
plugin_calls() {
    "$MEMSCRIBE" dump "$1" >"$WORK/dump.txt" 2>"$WORK/dump.err" ||
        fail "$2: dump failed: $(cat "$WORK/dump.err")"
    for size in 3001 3002 3003 3009 3010 3011; do
        n=$(grep -c " malloc .* size=$size " "$WORK/dump.txt" || true)
        [ "$n" = "${3:-2}" ] || fail "$2: the plugin's new of $size bytes appears $n times, not ${3:-2}"
    done
}

"$HOST" "$PLUG" >"$WORK/plain.out" || fail "untraced host exited with $?"
grep -q '^plugin counted ' "$WORK/plain.out" || fail "untraced host: $(cat "$WORK/plain.out")"

# record
"$MEMSCRIBE" record -q -o "$WORK/rec.mscr" -- "$HOST" "$PLUG" >"$WORK/rec.out" ||
    fail "record: the host exited with $?"
cmp -s "$WORK/plain.out" "$WORK/rec.out" || fail "record: output differs: $(cat "$WORK/rec.out")"
plugin_calls "$WORK/rec.mscr" record

# No wrapper: the collector preloaded, its own recorder.
LD_PRELOAD=$COLLECTOR MEMSCRIBE_OUTPUT=$WORK/nowrap.mscr "$HOST" "$PLUG" >"$WORK/nowrap.out" ||
    fail "no-wrapper mode: the host exited with $?"
cmp -s "$WORK/plain.out" "$WORK/nowrap.out" || fail "no-wrapper mode: output differs"
ms_wait_trace "$WORK/nowrap.mscr"
plugin_calls "$WORK/nowrap.mscr" "no-wrapper mode"

# Attached while it loads the plugin.
mkdir "$WORK/att"
"$HOST" "$PLUG" "$WORK/att" >"$WORK/att.out" &
host=$!
wait_file "$WORK/att/ready"
"$MEMSCRIBE" record -p "$host" -o "$WORK/att.mscr" 2>"$WORK/att.err" &
rec=$!
wait_line "$WORK/att.err" "attached to process $host"
touch "$WORK/att/go"
wait_file "$WORK/att/done"
kill -INT "$rec"
rc=0
wait "$rec" || rc=$?
[ "$rc" = 0 ] || fail "record -p exited with $rc: $(cat "$WORK/att.err")"
touch "$WORK/att/end"
rc=0
wait "$host" || rc=$?
[ "$rc" = 0 ] || fail "attach: the host exited with $rc"
cmp -s "$WORK/plain.out" "$WORK/att.out" || fail "attach: output differs: $(cat "$WORK/att.out")"
plugin_calls "$WORK/att.mscr" attach 1

# bfd tools with the LLVM gold plugin (clang's package installs it).
gold=/usr/lib/bfd-plugins/LLVMgold-14.so
[ -e "$gold" ] || fail "$gold is missing: scripts/setup.sh --test installs clang, which brings it"
cd "$WORK" || exit 1
printf 'int f(void) { return 1; }\n' >f.c
cc -c f.c -o f.o
ar rcs plain.a f.o
nm plain.a >nm.plain
"$MEMSCRIBE" record -q -o ar.mscr -- ar rcs traced.a f.o || fail "record -- ar exited with $?"
cmp -s plain.a traced.a || fail "ar wrote a different archive traced"
"$MEMSCRIBE" record -q -o nm.mscr -- nm traced.a >nm.traced || fail "record -- nm exited with $?"
cmp -s nm.plain nm.traced || fail "nm's output differs traced"
"$MEMSCRIBE" dump ar.mscr >ar.dump || fail "dump of ar's trace failed"
grep -q ' module_load .*/LLVMgold-14.so"' ar.dump || fail "ar's trace does not show the gold plugin loaded"

# Nothing defines them: ours answer.
"$MS_PROGRAMS/col_cxx_none" >"$WORK/none.out" || fail "col_cxx_none untraced exited with $?"
grep -q '^untraced: ' "$WORK/none.out" || fail "col_cxx_none untraced: $(cat "$WORK/none.out")"
ms_record_marked col_cxx_none
echo "ok: the C host and its C++ plugin under record, no wrapper and attach; ar and nm with LLVMgold; $(wc -l <"$WORK/expected") calls where nothing defines the names"
