#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# memscribe.exe passes the program's arguments on exactly (spaces, quotes,
# backslashes: quoted the way CommandLineToArgvW reads them back), and
# usage errors exit 2. Usage: launcher_args.sh WINE WINDIR PREFIX OUTDIR
set -uo pipefail
wine=$1 windir=$2 prefix=$3 out=$4
export WINEPREFIX=$prefix WINEDEBUG=-all
mkdir -p "$out"
args=("plain" "two words" 'a"quote' 'trail\' 'back\\"slash' "" 'tab	in')
"$wine" "$windir/memscribe.exe" record -o "$out/args.mswin" -- \
    "$windir/win_prog_known.exe" argv "${args[@]}" >"$out/args.out" 2>"$out/args.err"
rc=$?
fail=0
if [ $rc -ne 0 ]; then
    echo "launcher_args: exit $rc: $(cat "$out/args.err")"
    fail=1
fi
printf 'ARG %s\n' "${args[@]}" >"$out/args.want"
tr -d '\r' <"$out/args.out" >"$out/args.got"
if ! diff -u "$out/args.want" "$out/args.got"; then
    echo "launcher_args: the program got other arguments"
    fail=1
fi
"$wine" "$windir/memscribe.exe" record -o "$out/x.mswin" >/dev/null 2>&1
rc=$?
if [ $rc -ne 2 ]; then
    echo "launcher_args: no program: exit $rc, want 2"
    fail=1
fi
"$wine" "$windir/memscribe.exe" record -o "$out/x.mswin" -- "$windir/no_such.exe" \
    >/dev/null 2>"$out/nosuch.err"
rc=$?
if [ $rc -ne 1 ] || ! grep -q "cannot start the program" "$out/nosuch.err"; then
    echo "launcher_args: missing program: exit $rc, said: $(cat "$out/nosuch.err")"
    fail=1
fi
exit $fail
