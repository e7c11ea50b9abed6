#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `cmake --install` into a temporary root (docs/install.md): the command,
# the collectors in the layout the recorder looks for ($PLATFORM links
# included), the replay worker, the completion, and a man page per command
# that `man -l` renders without a warning, NAME first; then the installed
# memscribe records a program through the installed collector.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" --go-on install-man MEMSCRIBE MS_BUILD MS_PROGRAMS
need man
root=$WORK/root
DESTDIR=$root cmake --install "$MS_BUILD" --prefix /usr >"$WORK/install.log" 2>&1 ||
    { cat "$WORK/install.log" >&2; fail "cmake --install failed"; finish ""; }
u=$root/usr

for f in bin/memscribe lib/memscribe/libmemscribe.so lib/memscribe/libmemscribe-attach.so \
         lib/memscribe/memscribe-replay share/bash-completion/completions/memscribe \
         share/doc/memscribe/record.md; do
    [ -f "$u/$f" ] || fail "not installed: /usr/$f"
done
if [ -f "$MS_BUILD/lib/memscribe/i386/libmemscribe.so" ]; then
    [ -f "$u/lib/memscribe/i386/libmemscribe.so" ] || fail "not installed: the i386 collector"
    for p in x86_64 haswell xeon_phi; do expect "link $p" "$(readlink "$u/lib/memscribe/$p")" .; done
    for p in i686 i586; do expect "link $p" "$(readlink "$u/lib/memscribe/$p")" i386; done
fi
expect "collector mode" "$(stat -c %a "$u/lib/memscribe/libmemscribe.so")" 644

mapfile -t cmds < <("$MEMSCRIBE" --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { exit }')
[ "${#cmds[@]}" -gt 10 ] || fail "memscribe --help lists ${#cmds[@]} commands"
pages=(memscribe)
for c in "${cmds[@]}"; do pages+=("memscribe-$c"); done
for p in "${pages[@]}"; do
    page=$u/share/man/man1/$p.1.gz
    [ -f "$page" ] || { fail "no man page $p"; continue; }
    MANWIDTH=80 man -l "$page" >"$WORK/$p.txt" 2>"$WORK/$p.err" || fail "man -l $p failed"
    [ ! -s "$WORK/$p.err" ] || fail "man -l $p warns: $(head -3 "$WORK/$p.err")"
    # NAME, then "PAGE - summary"; the options of the command's --help.
    awk 'NR > 1 && NF { print; exit }' "$WORK/$p.txt" | grep -q '^NAME' || fail "$p: NAME is not its first section"
    grep -qE "^ +$p +- +[A-Za-z]" "$WORK/$p.txt" || fail "$p: no '$p - summary' line"
    [ "$p" = memscribe ] || grep -q -- "--help" "$WORK/$p.txt" || fail "$p: its options are missing"
done
grep -q "memscribe-record(1)" "$WORK/memscribe.txt" || fail "memscribe(1) does not point to memscribe-record(1)"
# memscribe(1) lists every command as a term of its own (help2man reads a
# term only where two spaces follow it in --help).
for c in "${cmds[@]}"; do
    grep -qE "^ {7}$c( |$)" "$WORK/memscribe.txt" || fail "memscribe(1) does not list $c as a term"
done
expect "man pages" "$(find "$u/share/man/man1" -name 'memscribe*.1.gz' | wc -l)" "${#pages[@]}"

# The installed binary finds the installed collector (<bin>/../lib/memscribe).
"$u/bin/memscribe" record -q -o "$WORK/t.mscr" -- "$MS_PROGRAMS/col_calls" >/dev/null 2>"$WORK/rec.err" ||
    fail "installed memscribe record failed: $(cat "$WORK/rec.err")"
n=$("$u/bin/memscribe" dump "$WORK/t.mscr" | grep -c ' malloc ')
[ "$n" -gt 0 ] || fail "the installed recorder's trace has no malloc"
finish "installed: ${#pages[@]} man pages render, the collectors and links in place, a trace of $n mallocs"
