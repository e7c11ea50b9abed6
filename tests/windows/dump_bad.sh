#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# win_dump on bad input: exit 1 with a message naming the file and the
# problem; usage errors exit 2. Usage: dump_bad.sh WIN_DUMP TMPDIR
set -uo pipefail
dump=$1 tmp=$2
mkdir -p "$tmp"
fail=0

# expect CODE PATTERN FILE...: win_dump FILE exits CODE and says PATTERN
expect() {
    local code=$1 pattern=$2
    shift 2
    local out rc
    out=$("$dump" "$@" 2>&1)
    rc=$?
    if [ $rc -ne "$code" ] || ! grep -q -- "$pattern" <<<"$out"; then
        echo "dump_bad: win_dump $*: exit $rc, said: $out (want exit $code, '$pattern')"
        fail=1
    fi
}

head16() { printf 'MSWINEV1\001\000\000\000\020\000\000\000'; }

: >"$tmp/empty"
printf 'NOTMSWIN\001\000\000\000\020\000\000\000' >"$tmp/magic"
{ head16; printf 'abc'; } >"$tmp/short"
# a record head claiming 8 bytes: less than the 104-byte head
{ head16; printf '\001\000\000\000\010\000\000\000'; head -c 96 /dev/zero; } >"$tmp/size"
# a head alone: valid, no events
head16 >"$tmp/none"

expect 2 "usage"
expect 1 "$tmp/missing: No such file" "$tmp/missing"
expect 1 "$tmp/empty: not a memscribe Windows event file" "$tmp/empty"
expect 1 "$tmp/magic: not a memscribe Windows event file" "$tmp/magic"
expect 1 "$tmp/short: corrupt record at byte 16" "$tmp/short"
expect 1 "$tmp/size: corrupt record at byte 16" "$tmp/size"
expect 0 "" "$tmp/none"
exit $fail
