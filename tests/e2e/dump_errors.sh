#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# memscribe dump on bad input: a clear message that names the file and the
# problem, exit 1; usage errors exit 2; --help exits 0.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" --go-on dump-errors MEMSCRIBE MS_SOURCE
golden=$MS_SOURCE/tests/golden/v1.mscr

# expect_dump STATUS PATTERN ARGS...: run dump, check the exit status and that
# stderr matches PATTERN (an extended regular expression).
expect_dump() {
    local want=$1 pattern=$2
    shift 2
    "$MEMSCRIBE" dump "$@" >"$WORK/out" 2>"$WORK/err"
    local got=$?
    if [ "$got" -ne "$want" ] || ! grep -Eq -- "$pattern" "$WORK/err"; then
        fail "dump $*: exit $got (want $want), stderr:"
        cat "$WORK/err"
    fi
}

expect_dump 1 "^memscribe: dump: $WORK/missing.mscr: No such file or directory$" "$WORK/missing.mscr"
echo "hello, world" >"$WORK/text.mscr"
expect_dump 1 "text.mscr: offset 0: not a memscribe trace" "$WORK/text.mscr"
: >"$WORK/empty.mscr"
expect_dump 1 "empty.mscr: offset 0: not a memscribe trace \(0 bytes, too short\)" "$WORK/empty.mscr"
head -c 40 "$golden" >"$WORK/short.mscr"
expect_dump 1 "short.mscr: offset 0: truncated inside the file header" "$WORK/short.mscr"
mkdir "$WORK/mscr.d"
expect_dump 1 "mscr.d: offset 0: not a regular file" "$WORK/mscr.d"

# Corrupt: a flipped byte inside the 4th block (the second chunk): bad CRC,
# with the block's offset; the first chunk's events are printed before.
off=64
for _ in 1 2 3; do
    size=$(od -A n -t u4 -j $((off + 8)) -N 4 "$golden" | tr -d ' ')
    off=$((off + 24 + size))
done
cp "$golden" "$WORK/flip.mscr"
printf '\x55' | dd of="$WORK/flip.mscr" bs=1 seek=$((off + 30)) conv=notrunc status=none
expect_dump 1 "^memscribe: dump: .*flip.mscr: offset $off: bad CRC" "$WORK/flip.mscr"
if [ "$(wc -l <"$WORK/out")" -ne 3 ]; then
    fail "want the first chunk's 3 events before the corrupt one"
fi

# Corrupt header and a damaged trailer.
cp "$golden" "$WORK/hdr.mscr"
printf '\x77' | dd of="$WORK/hdr.mscr" bs=1 seek=40 conv=notrunc status=none
expect_dump 1 "hdr.mscr: offset 0: bad header CRC" "$WORK/hdr.mscr"
cp "$golden" "$WORK/trl.mscr"
size=$(stat -c %s "$golden")
printf '\x01' | dd of="$WORK/trl.mscr" bs=1 seek=$((size - 20)) conv=notrunc status=none
expect_dump 1 "trl.mscr: offset $((size - 32)): bad trailer CRC" "$WORK/trl.mscr"

# Truncated is not an error: exit 0, one note on stderr.
head -c $((size - 10)) "$golden" >"$WORK/cut.mscr"
expect_dump 0 "^memscribe: dump: .*cut.mscr: trace is incomplete" "$WORK/cut.mscr"

# Usage errors.
expect_dump 2 "no trace file given"
expect_dump 2 "more than one trace file given" "$golden" "$golden"
expect_dump 2 "unknown or incomplete option '--bogus'" --bogus "$golden"
expect_dump 2 "unknown --format 'json'" --format json "$golden"
expect_dump 2 "--pid wants a process id, not 'abc'" --pid abc "$golden"
expect_dump 2 "unknown or incomplete option '--pid'" "$golden" --pid

# --help: usage on stdout, exit 0.
if ! "$MEMSCRIBE" dump --help >"$WORK/help" 2>"$WORK/err" || ! grep -q "usage: memscribe dump" "$WORK/help" || [ -s "$WORK/err" ]; then
    fail "dump --help"
fi

finish "dump_errors: ok"
