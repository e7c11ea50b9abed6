#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A named thread, allocation in a signal handler, dlopen/dlclose with a
# constructor that allocates, and a program that closes stdout and stderr.
source "$(dirname "$0")/record_lib.sh"

"$MEMSCRIBE" record -q -o "$WORK/t.mscr" -- "$MS_PROGRAMS/col_quirks" "$MS_PROGRAMS/libcol_plug.so" ||
    fail "record exited with $?"
ms_dump_ok "$WORK/t.mscr"
d="$WORK/dump.txt"
count() { grep -c " malloc .* size=$1 " "$d" || true; }
[ "$(count 9999)" = 3 ] || fail "malloc(9999) in the signal handler appears $(count 9999) times, not 3"
[ "$(count 8888)" = 2 ] || fail "malloc(8888) after closing stdout/stderr appears $(count 8888) times, not 2"
[ "$(count 6543)" = 1 ] || fail "the plugin constructor's malloc(6543) appears $(count 6543) times"
[ "$(count 7777)" = 1 ] || fail "malloc(7777) in the named thread appears $(count 7777) times"
tid=$(awk '$5 == "malloc" && / size=7777 / { print $3 }' "$d")
grep -q " $tid - thread_name name=\"quirky\"" "$d" || fail "no thread_name quirky for thread $tid"
load=$(grep -n " module_load .*libcol_plug.so" "$d" | head -1 || true)
[ -n "$load" ] || fail "no module_load for libcol_plug.so"
# shellcheck disable=SC2001 # a capture group, not a plain replacement
base=$(echo "$load" | sed 's/.* base=\(0x[0-9a-f]*\) .*/\1/')
[ "${load%%:*}" -lt "$(grep -n " malloc .* size=6543 " "$d" | cut -d: -f1)" ] ||
    fail "libcol_plug.so is announced after its constructor's malloc"
grep -q " module_unload base=$base" "$d" || fail "no module_unload for libcol_plug.so at $base"
echo "ok: thread name, signal handler, dlopen/dlclose, closed stdio"
