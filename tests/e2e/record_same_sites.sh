#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# One source, the same numbers on every CPU (docs/platforms.md): a C
# program (col_calls), a multithreaded one (col_threads) and a C++ one that
# throws through allocating frames from 8 threads, longjmps and allocates in
# a signal handler (col_unwind), each recorded; their own call sites
# (own_sites.awk: the call site and its caller in the program's source, with
# allocations, bytes, temporaries and what is left at the end) must be
# tests/expected/sites-PROGRAM.txt, on x86-64 here and on AArch64 in
# scripts/cross-check.sh arm64. And every frame of every row is named
# (function, or file and line), but for the local functions of libstdc++
# (std::runtime_error's string, its emergency pool): Debian 12 ships it
# without them and has no detached debug file for it (libstdc++6-12-dbg is
# a debug build, not symbols), so an address is all anyone can show there.
# On AArch64 col_unwind also built with pointer authentication (its return
# addresses signed with the A key and BTI, -mbranch-protection=standard, and
# with the B key), where its CFI says DW_CFA_AARCH64_negate_ra_state: the
# same numbers (Debian 12's libunwind cannot walk those, so verify cannot).
# MS_SITES_WRITE=1 writes the expected files instead (after a change to
# the programs; review the diff).
source "$(dirname "$0")/record_lib.sh"
[ -n "${MS_SOURCE:-}" ] || fail "MS_SOURCE is not set (tests/CMakeLists.txt)"

# PROGRAM:SOURCE:EXPECTED, the built variants of a source held to its file.
programs=(col_calls:col_calls.c:col_calls col_threads:col_threads.c:col_threads
          col_unwind:col_unwind.cc:col_unwind)
for v in col_unwind_pac col_unwind_pacb; do
    [ ! -x "$MS_PROGRAMS/$v" ] || programs+=("$v:col_unwind.cc:col_unwind")
done
for p in "${programs[@]}"; do
    IFS=: read -r prog src expected <<<"$p"
    want=$MS_SOURCE/tests/expected/sites-$expected.txt
    "$MEMSCRIBE" record -q -o "$WORK/$prog.mscr" -- "$MS_PROGRAMS/$prog" >/dev/null 2>"$WORK/err" ||
        fail "$prog: record exited with $?: $(cat "$WORK/err")"
    "$MEMSCRIBE" report --format csv --top 0 "$WORK/$prog.mscr" >"$WORK/$prog.csv" 2>"$WORK/err" ||
        fail "$prog: report failed: $(cat "$WORK/err")"
    awk -v src="$src" -f "$MS_SOURCE/tests/e2e/own_sites.awk" "$WORK/$prog.csv" |
        LC_ALL=C sort -k6 >"$WORK/$prog.sites"
    if [ "${MS_SITES_WRITE:-0}" = 1 ]; then
        [ "$prog" = "$expected" ] || continue
        cp "$WORK/$prog.sites" "$want"
        echo "wrote $want"
        continue
    fi
    diff -u "$want" "$WORK/$prog.sites" >&2 ||
        fail "$prog: its own call sites' numbers are not $want's (above: - expected, + here on $(uname -m))"
    # Every frame named: an address (+0x...) is a frame the symbolizer could
    # not name, here or in the rows the runtime makes.
    awk 'NR > 1 { n = split($0, f, /[;,"]/); for (i = 1; i <= n; i++) print f[i] }' "$WORK/$prog.csv" |
        grep -E '\+0x[0-9a-f]+$' | grep -v '^libstdc++\.so\.6+' | sort -u >"$WORK/$prog.unnamed" || true
    [ ! -s "$WORK/$prog.unnamed" ] || fail "$prog: frames without a name: $(head -5 "$WORK/$prog.unnamed" | tr '\n' ' ')"
    echo "ok: $prog: $(wc -l <"$want") own call sites as expected, every frame named ($(uname -m))"
done
