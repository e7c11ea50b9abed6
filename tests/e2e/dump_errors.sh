#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# memscribe dump on bad input: a clear message that names the file and the
# problem, exit 1; usage errors exit 2; --help exits 0.
set -uo pipefail
: "${MEMSCRIBE:?}" "${MS_SOURCE:?}"
golden=$MS_SOURCE/tests/golden/v1.mscr
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

# expect STATUS PATTERN ARGS...: run dump, check the exit status and that
# stderr matches PATTERN (an extended regular expression).
expect() {
    local want=$1 pattern=$2
    shift 2
    "$MEMSCRIBE" dump "$@" >"$tmp/out" 2>"$tmp/err"
    local got=$?
    if [ "$got" -ne "$want" ] || ! grep -Eq -- "$pattern" "$tmp/err"; then
        echo "FAIL: dump $*: exit $got (want $want), stderr:"
        cat "$tmp/err"
        fails=$((fails + 1))
    fi
}

expect 1 "^memscribe: dump: $tmp/missing.mscr: No such file or directory$" "$tmp/missing.mscr"
echo "hello, world" >"$tmp/text.mscr"
expect 1 "text.mscr: offset 0: not a memscribe trace" "$tmp/text.mscr"
: >"$tmp/empty.mscr"
expect 1 "empty.mscr: offset 0: not a memscribe trace \(0 bytes, too short\)" "$tmp/empty.mscr"
head -c 40 "$golden" >"$tmp/short.mscr"
expect 1 "short.mscr: offset 0: truncated inside the file header" "$tmp/short.mscr"
mkdir "$tmp/mscr.d"
expect 1 "mscr.d: offset 0: not a regular file" "$tmp/mscr.d"

# Corrupt: a flipped byte inside the 4th block (the second chunk): bad CRC,
# with the block's offset; the first chunk's events are printed before.
off=64
for _ in 1 2 3; do
    size=$(od -A n -t u4 -j $((off + 8)) -N 4 "$golden" | tr -d ' ')
    off=$((off + 24 + size))
done
cp "$golden" "$tmp/flip.mscr"
printf '\x55' | dd of="$tmp/flip.mscr" bs=1 seek=$((off + 30)) conv=notrunc status=none
expect 1 "^memscribe: dump: .*flip.mscr: offset $off: bad CRC" "$tmp/flip.mscr"
if [ "$(wc -l <"$tmp/out")" -ne 3 ]; then
    echo "FAIL: want the first chunk's 3 events before the corrupt one"
    fails=$((fails + 1))
fi

# Corrupt header and a damaged trailer.
cp "$golden" "$tmp/hdr.mscr"
printf '\x77' | dd of="$tmp/hdr.mscr" bs=1 seek=40 conv=notrunc status=none
expect 1 "hdr.mscr: offset 0: bad header CRC" "$tmp/hdr.mscr"
cp "$golden" "$tmp/trl.mscr"
size=$(stat -c %s "$golden")
printf '\x01' | dd of="$tmp/trl.mscr" bs=1 seek=$((size - 20)) conv=notrunc status=none
expect 1 "trl.mscr: offset $((size - 32)): bad trailer CRC" "$tmp/trl.mscr"

# Truncated is not an error: exit 0, one note on stderr.
head -c $((size - 10)) "$golden" >"$tmp/cut.mscr"
expect 0 "^memscribe: dump: .*cut.mscr: trace is incomplete" "$tmp/cut.mscr"

# Usage errors.
expect 2 "no trace file given"
expect 2 "more than one trace file given" "$golden" "$golden"
expect 2 "unknown or incomplete option '--bogus'" --bogus "$golden"
expect 2 "unknown --format 'json'" --format json "$golden"
expect 2 "--pid wants a process id, not 'abc'" --pid abc "$golden"
expect 2 "unknown or incomplete option '--pid'" "$golden" --pid

# --help: usage on stdout, exit 0.
if ! "$MEMSCRIBE" dump --help >"$tmp/help" 2>"$tmp/err" || ! grep -q "usage: memscribe dump" "$tmp/help" || [ -s "$tmp/err" ]; then
    echo "FAIL: dump --help"
    fails=$((fails + 1))
fi

[ "$fails" -eq 0 ] && echo "dump_errors: ok"
exit $((fails != 0))
