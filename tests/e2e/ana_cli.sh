#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The contract of the analysis commands (report, leaks, window, timeline,
# histogram, tree): --help on stdout with exit 0; usage errors exit 2 with a
# message on stderr; a missing or garbage file exits 1 naming the file; a
# truncated trace is read up to its last whole chunk and flagged
# incomplete; every --format parses (JSON with jq); html, plot and
# flamegraph write a named file, not markup, to a terminal. Needs MEMSCRIBE,
# MS_PROGRAMS.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" ana-cli MEMSCRIBE MS_PROGRAMS
T=$WORK/t.mscr
CMDS=(report leaks window timeline histogram tree)

# usage: run WANT_STATUS CMD...: runs, leaves $WORK/out and $WORK/err.
run() {
    local want=$1 st=0
    shift
    "$MEMSCRIBE" "$@" >"$WORK/out" 2>"$WORK/err" || st=$?
    [ "$st" = "$want" ] || fail "memscribe $*: exit $st, want $want; stderr: $(cat "$WORK/err")"
}

"$MEMSCRIBE" record -o "$T" -- "$MS_PROGRAMS/ana_heapcheck" >/dev/null 2>"$WORK/rec.err" ||
    fail "record: $(cat "$WORK/rec.err")"
for c in "${CMDS[@]}"; do
    run 0 "$c" --help
    grep -q "usage: memscribe $c" "$WORK/out" || fail "$c --help: no usage on stdout"
    [ ! -s "$WORK/err" ] || fail "$c --help wrote to stderr"
    run 2 "$c"
    grep -q "no trace file given" "$WORK/err" || fail "$c without a file: $(cat "$WORK/err")"
    run 2 "$c" --no-such-option "$T"
    grep -q "unknown or incomplete option" "$WORK/err" || fail "$c: bad option: $(cat "$WORK/err")"
    run 2 "$c" --format=xml "$T"
    run 2 "$c" --pid x "$T"
    run 2 "$c" "$T" "$T"
    run 1 "$c" "$WORK/missing.mscr"
    grep -q "missing.mscr" "$WORK/err" || fail "$c: the error does not name the file"
    for f in text csv json; do
        run 0 "$c" --format=$f "$T"
        [ -s "$WORK/out" ] || fail "$c --format=$f: no output"
    done
    jq -e . "$WORK/out" >/dev/null || fail "$c --format=json is not JSON"
    echo "ok: $c"
done
run 2 window --from 2s --to 1s "$T"
run 2 window --from soon "$T"
run 2 window --tree --by thread "$T"
run 2 leaks --at yesterday "$T"
run 2 timeline --interval 0 "$T"
run 2 tree --sort height "$T"
# Each keyword option's refusal names it once, with its two dashes.
for c in "tree --sort" "top --sort" "window --sort" "window --by" "vmem --by"; do
    # shellcheck disable=SC2086 # the command and its option
    run 2 $c bogus "$T"
    grep -q "^memscribe: ${c%% *}: ${c#* } wants .*, not 'bogus'" "$WORK/err" ||
        fail "$c bogus: $(cat "$WORK/err")"
done
run 2 report --top many "$T"

# Garbage is refused with the file's name.
head -c 4096 /dev/urandom >"$WORK/garbage.mscr"
run 1 report "$WORK/garbage.mscr"
grep -q "garbage.mscr" "$WORK/err" || fail "garbage: the error does not name the file"

# A trace cut short is read up to its last whole chunk and said to be so.
size=$(stat -c %s "$T")
head -c $((size * 2 / 3)) "$T" >"$WORK/cut.mscr"
st=0
"$MEMSCRIBE" report --format=json "$WORK/cut.mscr" >"$WORK/out" 2>"$WORK/err" || st=$?
if [ "$st" = 0 ]; then
    # Said once: in report's notes, not on stderr too (leaks, whose output
    # has no notes, says it on stderr).
    grep -q "incomplete" "$WORK/err" && fail "cut trace: report says it on stderr too"
    [ "$(jq .incomplete "$WORK/out")" = true ] || fail "cut trace: JSON says complete"
    jq -e '.trace_notes | any(test("the trace is incomplete"))' "$WORK/out" >/dev/null ||
        fail "cut trace: no note in the JSON"
    "$MEMSCRIBE" leaks "$WORK/cut.mscr" >/dev/null 2>"$WORK/err" || true
    grep -q "incomplete" "$WORK/err" || fail "cut trace: leaks gives no warning on stderr"
    echo "ok: a cut trace is read and flagged incomplete"
else
    [ "$st" = 1 ] && grep -q "cut.mscr" "$WORK/err" || fail "cut trace: exit $st: $(cat "$WORK/err")"
    echo "ok: a cut trace is refused with its name: $(cat "$WORK/err")"
fi

# Pages and pictures are not markup for a terminal: with standard output on
# one (script(1) gives a pseudo-terminal), html, plot and flamegraph write a
# file named after the trace and say so; into a pipe they write as before.
mkdir "$WORK/tty"
for c in "html:t.html" "plot timeline:t-timeline.svg" "plot histogram:t-histogram.svg" \
    "flamegraph:t-flame.svg"; do
    (cd "$WORK/tty" && script -qec "'$MEMSCRIBE' ${c%%:*} '$T'" /dev/null >"$WORK/out" 2>&1) ||
        fail "${c%%:*} on a terminal: $(cat "$WORK/out")"
    f=$WORK/tty/${c#*:}
    [ -s "$f" ] || fail "${c%%:*} on a terminal wrote no ${c#*:}: $(cat "$WORK/out")"
    grep -q "wrote ${c#*:}" "$WORK/out" || fail "${c%%:*} does not say where it wrote"
    ! grep -q "<svg\|<html" "$WORK/out" || fail "${c%%:*} put markup on the terminal"
    # The same bytes into a pipe (but for html's script nonce, new each run).
    read -ra cmd <<<"${c%%:*}"
    "$MEMSCRIBE" "${cmd[@]}" "$T" | cmp -s - "$f" || [ "${cmd[0]}" = html ] ||
        fail "${c%%:*} into a pipe differs from its file"
done
echo "ok: html, plot and flamegraph on a terminal write a named file"
echo "PASS"
