#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The .debs (docs/install.md, "Debian packages"), made by CPack from this
# build: lintian reports no error; memscribe holds the command, the
# collectors, their $PLATFORM links, the man pages and the completion, its
# Depends found by dpkg-shlibdeps; memscribe-windows (where mingw-w64 built
# the Windows parts) holds the launcher and DLL per architecture; and the
# unpacked tree records a program as an installed one does.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" --go-on install-deb MEMSCRIBE MS_BUILD MS_PROGRAMS
need lintian
need dpkg-shlibdeps
cpack --config "$MS_BUILD/CPackConfig.cmake" -B "$WORK/pk" >"$WORK/cpack.log" 2>&1 ||
    { cat "$WORK/cpack.log" >&2; fail "cpack failed"; finish ""; }
deb=$(ls "$WORK"/pk/memscribe_*.deb)
[ -f "$deb" ] || { fail "no memscribe_*.deb"; finish ""; }
lintian --fail-on error "$WORK"/pk/*.deb >"$WORK/lintian.txt" 2>&1 ||
    fail "lintian: $(grep '^E:' "$WORK/lintian.txt" || cat "$WORK/lintian.txt")"
grep '^[EW]:' "$WORK/lintian.txt" || true

dpkg-deb -c "$deb" | awk '{ print $6, $7, $8 }' | sed 's|^\./|/|' >"$WORK/contents"
for f in /usr/bin/memscribe /usr/lib/memscribe/libmemscribe.so /usr/lib/memscribe/memscribe-replay \
         /usr/share/man/man1/memscribe.1.gz /usr/share/man/man1/memscribe-record.1.gz \
         /usr/share/bash-completion/completions/memscribe /usr/share/doc/memscribe/copyright; do
    grep -q "^$f " "$WORK/contents" || grep -qx "$f" "$WORK/contents" || fail "memscribe.deb lacks $f"
done
if [ -f "$MS_BUILD/lib/memscribe/i386/libmemscribe.so" ]; then
    grep -qx "/usr/lib/memscribe/x86_64 -> ." "$WORK/contents" || fail "memscribe.deb lacks the link x86_64 -> ."
    grep -qx "/usr/lib/memscribe/i686 -> i386" "$WORK/contents" || fail "memscribe.deb lacks the link i686 -> i386"
fi
! grep -q "^/usr/lib/memscribe/windows" "$WORK/contents" || fail "memscribe.deb holds the Windows parts"
depends=$(dpkg-deb -f "$deb" Depends)
for lib in libc6 libzstd1 libdw1 libmicrohttpd12; do
    [[ $depends == *"$lib "* || $depends == *"$lib," || $depends == *"$lib" ]] || fail "Depends lacks $lib: '$depends'"
done
echo "Depends: $depends"

if [ -f "$MS_BUILD/windows/x86_64/memscribe.exe" ]; then
    win=$(ls "$WORK"/pk/memscribe-windows_*.deb)
    dpkg-deb -c "$win" | awk '{ print $6 }' | sed 's|^\./|/|' >"$WORK/win"
    for a in x86_64 i686; do
        [ -f "$MS_BUILD/windows/$a/memscribe.exe" ] || continue
        for f in memscribe.exe memscribe_collector.dll; do
            grep -qx "/usr/lib/memscribe/windows/$a/$f" "$WORK/win" || fail "memscribe-windows lacks $a/$f"
        done
    done
    expect "memscribe-windows Depends" "$(dpkg-deb -f "$win" Depends)" "memscribe (= $(dpkg-deb -f "$deb" Version))"
fi

# Unpacked, it records as installed (bin/../lib/memscribe).
dpkg-deb -x "$deb" "$WORK/root"
"$WORK/root/usr/bin/memscribe" record -q -o "$WORK/t.mscr" -- "$MS_PROGRAMS/col_calls" >/dev/null 2>"$WORK/rec.err" ||
    fail "the unpacked memscribe record failed: $(cat "$WORK/rec.err")"
grep -q "peak heap in use" <("$WORK/root/usr/bin/memscribe" report "$WORK/t.mscr") || fail "the unpacked memscribe report"
finish "packages: lintian without error, the layout and Depends as installed"
