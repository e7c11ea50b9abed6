#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Symbols from a PDB (docs/windows.md, "Symbols"): win_prog_pdb.c built by
# clang with lld writing a PDB, recorded under wine64, and `memscribe leaks`
# must name each allocation site's function, file and line exactly
# (check_pdb.py), with the PDB found at the CodeView path, in a symbol
# store named by _NT_SYMBOL_PATH (srv*), in a plain _NT_SYMBOL_PATH
# directory and in a --debug-dir; a truncated, a garbage and another
# build's PDB are each named in a note and not used.
# Usage: run_pdb.sh WINE WINDIR PREFIX OUTDIR MEMSCRIBE
set -euo pipefail
wine=$1 windir=$2 prefix=$3 out=$4 memscribe=$5
here=$(cd "$(dirname "$0")" && pwd)
export WINEPREFIX=$prefix
rm -rf "$out"
mkdir -p "$out/bin" "$out/other"
# clang's mingw driver wants libgcc from mingw-w64's gcc; -gcodeview alone
# emits no debug info, -g with it makes CodeView instead of DWARF
libgcc=$(dirname "$(x86_64-w64-mingw32-gcc -print-libgcc-file-name)")
build() { # OUTPUT.exe PDB [cflags...]
    local exe=$1 pdb=$2
    shift 2
    clang --target=x86_64-w64-mingw32 -g -gcodeview -O1 "$@" -fuse-ld=lld -L"$libgcc" \
        -Wl,--pdb="$pdb" "$here/win_prog_pdb.c" -o "$exe"
}
build "$out/bin/win_prog_pdb.exe" "$out/bin/win_prog_pdb.pdb"
build "$out/other/win_prog_pdb.exe" "$out/other/win_prog_pdb.pdb" -DPDB_OTHER_BUILD
WINEDEBUG=-all "$wine" "$windir/memscribe.exe" record -o "$out/pdb.mswin" -t "$out/pdb.mscr" -- \
    "$out/bin/win_prog_pdb.exe" >"$out/run.out" 2>"$out/run.log"
grep -q '^win_prog_pdb: ' "$out/run.out"
python3 "$here/check_pdb.py" "$here/win_prog_pdb.c" "$out" "$memscribe"
# Inline sites: win_prog_inline.c at -O2, its allocating function forced
# inline into another forced inline into inl_caller, recorded by
# `memscribe record` on Linux: the leak's stack names each inlined function
# at its line, as DWARF's inline chains do (docs/windows.md, "Symbols")
clang --target=x86_64-w64-mingw32 -g -gcodeview -O2 -fuse-ld=lld -L"$libgcc" \
    -Wl,--pdb="$out/bin/win_prog_inline.pdb" "$here/win_prog_inline.c" -o "$out/bin/win_prog_inline.exe"
line() { grep -n "INL-$1" "$here/win_prog_inline.c" | cut -d: -f1; }
MEMSCRIBE_WINE=$wine MEMSCRIBE_WINDOWS_DIR=$windir WINEDEBUG=-all "$memscribe" record -q \
    -o "$out/inline.mscr" -- "$out/bin/win_prog_inline.exe" >"$out/inline.out"
grep -q '^win_prog_inline: ' "$out/inline.out"
want="inl_inner (win_prog_inline.c:$(line inner)) < inl_outer (win_prog_inline.c:$(line outer))"
want+=" < inl_caller (win_prog_inline.c:$(line caller)) < main (win_prog_inline.c:$(line main))"
"$memscribe" leaks --top 0 "$out/inline.mscr" 2>/dev/null >"$out/inline.leaks"
if ! grep -E "^[0-9]+ +5000 +1  " "$out/inline.leaks" | grep -qF "  $want"; then
    echo "run_pdb: the 5000-byte leak's stack is not: $want"
    grep -E " 5000 " "$out/inline.leaks"
    exit 1
fi
