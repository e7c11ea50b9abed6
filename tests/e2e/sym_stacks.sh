#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Symbolized stacks end to end: record sym_chain, then check every case's
# stack in `memscribe dump --stacks` frame by frame (function, file, the
# line marked "@sym:" in the source): static functions, inlined functions,
# C++ template and operator new (cut from the top), a qsort comparator
# through libc, a signal handler, a dlopen'd library dlclose'd before the
# end. Then --raw, --all-frames, --sysroot, --debug-dir and a changed
# binary. Needs MEMSCRIBE, MS_PROGRAMS, MS_SOURCE (set by ctest).
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" sym MEMSCRIBE MS_PROGRAMS MS_SOURCE
SRC=$MS_SOURCE/tests/programs
PROG=$MS_PROGRAMS/sym_chain

"$MEMSCRIBE" record -q -o "$WORK/t.mscr" -- "$PROG" >/dev/null 2>"$WORK/record.err" ||
    fail "record exited with $?: $(cat "$WORK/record.err")"

# The symbolized stack of the (only) malloc of SIZE, one line per frame,
# with the address and +offset taken off and physical frame numbers
# replaced by "n": "[n] sym_chain!run_static() (sym_chain.cc:28)".
# usage: stack_of DUMP SIZE
stack_of() {
    local id
    id=$(awk -v size="$2" '$5 == "malloc" && $0 ~ (" size=" size " ") {
             for (i = 6; i <= NF; i++) if ($i ~ /^stack=/) { sub(/^stack=/, "", $i); print $i } }' "$1")
    [ -n "$id" ] || fail "no malloc of size $2 in the trace"
    [ "$(echo "$id" | wc -l)" = 1 ] || fail "more than one malloc of size $2"
    awk -v id="$id" '
        $1 == "stack" { on = ($2 == id); next }
        $1 == "#" || $1 !~ /^\[/ { on = 0 }
        on {
            idx = ($1 == "[i]") ? "[i]" : "[n]"
            fn = $3; sub(/\+0x[0-9a-f]+$/, "", fn)
            line = idx " " fn
            for (i = 4; i <= NF; i++) line = line " " $i
            # A demangled name holds spaces: put back what the +0x cut split.
            gsub(/\+0x[0-9a-f]+ \(/, " (", line)
            sub(/\+0x[0-9a-f]+$/, "", line)
            print line
        }' "$1"
}

# Expected frames on stdin, one per line: "[n]|[i] MODULE!FUNCTION FILE
# MARKER" or "libc FUNCTION" (one or more libc frames, one of them named
# FUNCTION). Stops at main. usage: check CASE ACTUAL
check() {
    local want="$WORK/want.$1" kind fn file marker n
    : >"$want"
    while read -r kind rest; do
        if [ "$kind" = libc ]; then
            echo "libc $rest" >>"$want"
            continue
        fi
        marker=${rest##* }
        rest=${rest% *}
        file=${rest##* }
        fn=${rest% *}
        n=$(grep -n "@sym:$marker\\b" "$SRC/$file" | head -1 | cut -d: -f1)
        [ -n "$n" ] || fail "no marker @sym:$marker in $file"
        echo "$kind $fn ($file:$n)" >>"$want"
    done
    awk -v case="$1" '
        NR == FNR { want[++nw] = $0; next }
        { got[++ng] = $0 }
        END {
            g = 1
            for (w = 1; w <= nw; w++) {
                if (want[w] ~ /^libc /) {
                    name = substr(want[w], 6); named = 0; first = g
                    while (g <= ng && got[g] ~ /^\[.\] libc\.so\.6!/) {
                        if (index(got[g], "!" name " ") || got[g] ~ ("!" name "$")) named = 1
                        g++
                    }
                    if (g == first || !named) { printf "case %s: expected libc frames with %s at frame %d\n", case, name, first; bad = 1; break }
                    continue
                }
                if (g > ng || got[g] != want[w]) {
                    printf "case %s frame %d\n  expected: %s\n  got:      %s\n", case, g, want[w], (g <= ng ? got[g] : "(end of stack)")
                    bad = 1; break
                }
                g++
            }
            if (bad) { print "whole stack:"; for (i = 1; i <= ng; i++) print "  " got[i] }
            exit bad
        }' "$want" "$2" || fail "case $1: the stack is not the expected one (above)"
}

"$MEMSCRIBE" dump --stacks "$WORK/t.mscr" >"$WORK/dump.txt" 2>"$WORK/dump.err" ||
    fail "dump --stacks failed: $(cat "$WORK/dump.err")"
grep -q "^# note:" "$WORK/dump.txt" && fail "unexpected notes: $(grep '^# note:' "$WORK/dump.txt")"

stack_of "$WORK/dump.txt" 77001 >"$WORK/s1"
check static "$WORK/s1" <<'X'
[n] sym_chain!static_leaf(unsigned long) sym_chain.cc static-malloc
[n] sym_chain!run_static() sym_chain.cc static-call
[n] sym_chain!main sym_chain.cc main-static
X
stack_of "$WORK/dump.txt" 77002 >"$WORK/s2"
check inline "$WORK/s2" <<'X'
[i] sym_chain!inl_inner sym_chain.cc inline-malloc
[i] sym_chain!inl_outer sym_chain.cc inline-inner-call
[n] sym_chain!run_inline() sym_chain.cc inline-outer-call
[n] sym_chain!main sym_chain.cc main-inline
X
stack_of "$WORK/dump.txt" 77003 >"$WORK/s3"
check cpp "$WORK/s3" <<'X'
[n] sym_chain!char* ns::make_block<ns::Widget>(unsigned long) sym_chain.cc cpp-new
[n] sym_chain!ns::Widget::build(int) sym_chain.cc cpp-make
[n] sym_chain!run_cpp() sym_chain.cc cpp-build
[n] sym_chain!main sym_chain.cc main-cpp
X
stack_of "$WORK/dump.txt" 77004 >"$WORK/s4"
check qsort "$WORK/s4" <<'X'
[n] sym_chain!by_value(void const*, void const*) sym_chain.cc qsort-malloc
libc qsort_r
[n] sym_chain!run_qsort() sym_chain.cc qsort-call
[n] sym_chain!main sym_chain.cc main-qsort
X
stack_of "$WORK/dump.txt" 77005 >"$WORK/s5"
check signal "$WORK/s5" <<'X'
[n] sym_chain!on_signal(int) sym_chain.cc signal-malloc
libc raise
[n] sym_chain!run_signal() sym_chain.cc signal-raise
[n] sym_chain!main sym_chain.cc main-signal
X
stack_of "$WORK/dump.txt" 77006 >"$WORK/s6"
check plugin "$WORK/s6" <<'X'
[n] libsym_plugin.so!plugin_inner sym_plugin.c plugin-malloc
[n] libsym_plugin.so!sym_plugin_alloc sym_plugin.c plugin-call
[n] sym_chain!run_plugin() sym_chain.cc plugin-main-call
[n] sym_chain!main sym_chain.cc main-plugin
X

# --all-frames keeps operator new (libstdc++) on top of the C++ case.
"$MEMSCRIBE" dump --stacks --all-frames "$WORK/t.mscr" >"$WORK/all.txt"
stack_of "$WORK/all.txt" 77003 | head -1 | grep -q '^\[n\] libstdc++\.so\.6!operator new' ||
    fail "--all-frames: operator new is not the first frame: $(stack_of "$WORK/all.txt" 77003 | head -2)"

# --raw: module+offset only.
"$MEMSCRIBE" dump --stacks --raw "$WORK/t.mscr" >"$WORK/raw.txt"
stack_of "$WORK/raw.txt" 77001 | head -1 | grep -qx '\[n\] sym_chain' ||
    fail "--raw: $(stack_of "$WORK/raw.txt" 77001 | head -1)"
grep -q '^  \[0\] [0-9a-f]\{12\} sym_chain+0x[0-9a-f]*$' "$WORK/raw.txt" || fail "--raw: no 'sym_chain+0x' frame"

# A trace read elsewhere: an empty sysroot finds no binary (a note, and
# module+offset), the binary under the sysroot or in --debug-dir gives the
# same stacks as at home.
mkdir -p "$WORK/empty" "$WORK/root$(dirname "$PROG")" "$WORK/dbg"
cp "$PROG" "$WORK/root$PROG"
cp "$PROG" "$WORK/dbg/"
# usage: noted NAME WHAT NOTE OPTION...: dump --stacks with the options into
# $WORK/NAME.txt says "# note: $PROG: NOTE", and still names stack 77001's
# first frame (never a wrong name).
noted() {
    local name=$1 what=$2 note=$3
    shift 3
    "$MEMSCRIBE" dump --stacks "$@" "$WORK/t.mscr" >"$WORK/$name.txt"
    grep -qF "# note: $PROG: $note" "$WORK/$name.txt" || fail "$what: no note '$note'"
    stack_of "$WORK/$name.txt" 77001 | head -1 | grep -qx '\[n\] sym_chain' ||
        fail "$what: $(stack_of "$WORK/$name.txt" 77001 | head -1)"
}
noted empty "empty sysroot" "No such file or directory; frames show module+offset" \
    --sysroot "$WORK/empty"
for how in "--sysroot $WORK/root" "--sysroot $WORK/empty --debug-dir $WORK/dbg"; do
    # shellcheck disable=SC2086
    "$MEMSCRIBE" dump --stacks $how "$WORK/t.mscr" >"$WORK/moved.txt"
    stack_of "$WORK/moved.txt" 77002 >"$WORK/m2"
    head -3 "$WORK/m2" | cmp -s - <(head -3 "$WORK/s2") || fail "$how: stacks differ: $(head -3 "$WORK/m2")"
done

# A changed binary at the recorded path: a note, and never a wrong name.
cp "$MS_PROGRAMS/libsym_plugin.so" "$WORK/root$PROG"
noted changed "changed binary" "build id differs from the recorded one" --sysroot "$WORK/root"
echo "ok: 6 cases symbolized frame by frame; raw, all-frames, sysroot, debug-dir, changed binary"
