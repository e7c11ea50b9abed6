#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Another user (nobody) who plants the file a root command will write, in
# a shared directory (mode 1777, as /tmp), gets nothing: a symbolic link at
# the name is not followed (a root-only file stays as it was), a file made
# first (mode 0666) is not written into (root's trace, argv included, does
# not land in a file nobody owns and reads), and the command says what it
# refused. So for every file memscribe writes: record -o, MEMSCRIBE_OUTPUT
# with its predictable %p, MEMSCRIBE_WINE_EVENTS, export (and SQLite),
# html, plot, flamegraph, frag --svg, replay --svg and --script, the
# snapshot directory and record --keep-last's folder FILE.last (a directory
# nobody made there is refused too, naming its owner) (win_trace, a host
# tool, opens its output the same way: tests/unit/test_util_outfile.c). Devices, FIFOs and /dev/stdout keep
# working, one's own file is replaced, a trace is whole under its name after
# a SIGKILL, and nobody cannot read root's trace (docs/record-programs.md, "Other
# users").
source "$(dirname "$0")/lib.sh" --go-on record_planted MEMSCRIBE MS_PROGRAMS MS_BUILD
P=$MS_PROGRAMS

need_nobody
S=$WORK/shared
mkdir -m 1777 "$S"
# Root's files that a planted link points at.
printf 'root only\n' >"$WORK/secret"
chmod 600 "$WORK/secret"

# usage: plant KIND NAME: nobody makes $S/NAME a symbolic link to root's
# secret (link), an empty file of mode 0666 (file), or an empty directory of
# mode 0777 (dir).
plant() {
    rm -rf "${S:?}/$2"
    case $1 in
    link) "${NOBODY[@]}" ln -s "$WORK/secret" "$S/$2" ;;
    file) "${NOBODY[@]}" sh -c "umask 0; : >'$S/$2'" ;;
    dir) "${NOBODY[@]}" sh -c "umask 0; mkdir '$S/$2'" ;;
    esac || fail "nobody could not plant $S/$2"
}
# usage: untouched KIND NAME: the planted thing, and root's secret, are as
# nobody left them.
untouched() {
    cmp -s "$WORK/secret" <(printf 'root only\n') || fail "$2: root's secret was written through the link"
    if [ "$1" = file ]; then
        [ ! -s "$S/$2" ] || fail "$2: root wrote into the file nobody made: $(head -c 80 "$S/$2" | tr -c '[:print:]' .)"
        [ "$(stat -c %U "$S/$2")" = nobody ] || fail "$2: nobody's file was replaced"
    fi
    if [ "$1" = dir ]; then
        [ -z "$(ls -A "$S/$2")" ] || fail "$2: root wrote into the directory nobody made: $(ls -A "$S/$2")"
        [ "$(stat -c %U "$S/$2")" = nobody ] || fail "$2: nobody's directory was replaced"
    fi
}
# usage: refused WHAT KIND NAME CMD...: root's CMD, writing $S/NAME that
# nobody planted as KIND, exits 1 and says what it refused.
refused() {
    local what=$1 kind=$2 name=$3 rc=0 want
    shift 3
    plant "$kind" "$name"
    "$@" >"$WORK/out" 2>"$WORK/err" || rc=$?
    want="refused: an existing file of user nobody"
    [ "$kind" = link ] && want="refused: a symbolic link of user nobody"
    [ "$kind" = dir ] && want="refused: an existing directory of user nobody"
    [ "$rc" = 1 ] || fail "$what ($kind): exited with $rc, not 1: $(cat "$WORK/err")"
    grep -q "$want" "$WORK/err" || fail "$what ($kind): says '$(cat "$WORK/err")', not '$want'"
    untouched "$kind" "$name"
}

"$MEMSCRIBE" record -q -o "$WORK/t.mscr" -- "$P/col_calls" >/dev/null || fail "record of col_calls failed"
for kind in link file; do
    refused "record -o" $kind r.mscr "$MEMSCRIBE" record -q -o "$S/r.mscr" -- "$P/col_calls" --secret-arg
    refused "record --snapshot-every" $kind snap \
        "$MEMSCRIBE" record -q --snapshot-every 1s -o "$S/snap" -- "$P/col_calls"
    # --keep-last's folder FILE.last (made 0700 beside FILE), after FILE: which
    # is then taken back
    refused "record --keep-last" $kind k.mscr.last \
        "$MEMSCRIBE" record -q --keep-last 1s -o "$S/k.mscr" -- "$P/col_calls"
    [ ! -e "$S/k.mscr" ] || fail "record --keep-last ($kind): the trace was left behind"
    refused "export" $kind e.txt "$MEMSCRIBE" export --to folded -o "$S/e.txt" "$WORK/t.mscr"
    refused "export --to sqlite" $kind e.db "$MEMSCRIBE" export --to sqlite -o "$S/e.db" "$WORK/t.mscr"
    refused "html" $kind h.html "$MEMSCRIBE" html -o "$S/h.html" "$WORK/t.mscr"
    refused "plot" $kind p.svg "$MEMSCRIBE" plot timeline -o "$S/p.svg" "$WORK/t.mscr"
    refused "flamegraph" $kind f.svg "$MEMSCRIBE" flamegraph -o "$S/f.svg" "$WORK/t.mscr"
    refused "frag --svg" $kind m.svg "$MEMSCRIBE" frag --svg "$S/m.svg" "$WORK/t.mscr"
    refused "replay --script" $kind r.ops "$MEMSCRIBE" replay --script "$S/r.ops" "$WORK/t.mscr"
    refused "replay --svg" $kind r.svg "$MEMSCRIBE" replay --repeat 1 --svg "$S/r.svg" "$WORK/t.mscr"
    # A Windows program (where the Windows tests run: mingw-w64 built it,
    # wine64 is there): the event file is made before Wine is started.
    exe=$MS_BUILD/windows/x86_64/memtest_demo_win.exe
    if [ -f "$exe" ] && [ -x /usr/lib/wine/wine64 ]; then
        refused "MEMSCRIBE_WINE_EVENTS" $kind ev.mswin \
            env WINEPREFIX="$WORK/wineprefix" MEMSCRIBE_WINE_EVENTS="$S/ev.mswin" "$MEMSCRIBE" record -q -o "$WORK/w.mscr" -- "$exe"
    fi
done
# A directory nobody made where memscribe makes its own (0700, its files in it).
for what in "record --snapshot-every|snap|--snapshot-every 1s -o $S/snap" \
    "record --keep-last|k.mscr.last|--keep-last 1s -o $S/k.mscr"; do
    IFS='|' read -r name dir opts <<<"$what"
    # shellcheck disable=SC2086 # the options are words
    refused "$name" dir "$dir" "$MEMSCRIBE" record -q $opts -- "$P/col_calls"
done
echo "ok: record, export, html, plot, flamegraph, frag and replay refuse what nobody planted"

# MEMSCRIBE_OUTPUT=...%p: nobody knows the pid before the program runs (here
# a shell that waits, then execs it); the program then runs untraced and
# says why, once, on its stderr.
for kind in link file; do
    rm -f "$WORK/go"
    (
        while [ ! -e "$WORK/go" ]; do sleep 0.01; done
        exec env LD_PRELOAD="$MS_BUILD/lib/memscribe/libmemscribe.so" MEMSCRIBE_OUTPUT="$S/app.%p.mscr" \
            "$P/col_calls" --secret-arg
    ) >/dev/null 2>"$WORK/err" &
    pid=$!
    plant $kind "app.$pid.mscr"
    touch "$WORK/go"
    wait "$pid" || fail "MEMSCRIBE_OUTPUT ($kind): the program exited with $?"
    want="refused: an existing file of user nobody"
    [ "$kind" = link ] && want="refused: a symbolic link of user nobody"
    grep -q "cannot create $S/app.$pid.mscr: $want" "$WORK/err" ||
        fail "MEMSCRIBE_OUTPUT ($kind): the program's stderr says '$(cat "$WORK/err")'"
    grep -q "runs untraced" "$WORK/err" || fail "MEMSCRIBE_OUTPUT ($kind): no 'runs untraced' in '$(cat "$WORK/err")'"
    untouched $kind "app.$pid.mscr"
done
echo "ok: MEMSCRIBE_OUTPUT's %p name planted by nobody: refused, the program runs untraced"

# What still works: /dev/null, /dev/stdout into a pipe and into a file, a
# FIFO of root's, and replacing one's own file (a hard link to it keeps
# the old one).
"$MEMSCRIBE" record -q -o /dev/null -- "$P/col_calls" >/dev/null || fail "record -o /dev/null failed"
[ -c /dev/null ] || fail "/dev/null is no longer a device"
# Through a link of the test's own to /proc/self/fd/1 first, then through
# the system's /dev/stdout, which is the same link where the system is
# whole: a root who once ran `gcc -c -o /dev/stdout >file` has a regular
# file there (binutils unlinks an "ordinary" output and makes a new one),
# and then every program's -o /dev/stdout writes into that file.
ln -s /proc/self/fd/1 "$WORK/stdout"
outs=("$WORK/stdout")
if [ "$(readlink /dev/stdout)" = /proc/self/fd/1 ]; then
    outs+=(/dev/stdout)
else
    echo "note: this system's /dev/stdout is not a link to /proc/self/fd/1 but" \
        "$(stat -c %F /dev/stdout 2>/dev/null || echo missing) (the machine's fault, not" \
        "memscribe's: restore it with ln -sf /proc/self/fd/1 /dev/stdout); tested through" \
        "$WORK/stdout only"
fi
for out in "${outs[@]}"; do
    "$MEMSCRIBE" export --to folded -o "$out" "$WORK/t.mscr" | cat >"$WORK/piped.txt" ||
        fail "export -o $out into a pipe failed"
    [ -s "$WORK/piped.txt" ] || fail "export -o $out wrote nothing into the pipe"
    "$MEMSCRIBE" export --to folded -o "$out" "$WORK/t.mscr" >"$WORK/redirected.txt" ||
        fail "export -o $out into a file failed"
    cmp -s "$WORK/piped.txt" "$WORK/redirected.txt" || fail "export -o $out into a file differs"
done
mkfifo "$WORK/fifo"
cat "$WORK/fifo" >"$WORK/from_fifo.mscr" &
"$MEMSCRIBE" record -q -o "$WORK/fifo" -- "$P/col_calls" >/dev/null || fail "record -o FIFO failed"
wait $!
"$MEMSCRIBE" dump "$WORK/from_fifo.mscr" >/dev/null 2>"$WORK/err" && [ ! -s "$WORK/err" ] ||
    fail "the trace through the FIFO does not read whole: $(cat "$WORK/err")"
cp "$WORK/t.mscr" "$WORK/mine.mscr"
ln "$WORK/mine.mscr" "$WORK/mine.link"
"$MEMSCRIBE" record -q -o "$WORK/mine.mscr" -- "$P/col_calls" >/dev/null || fail "record over my own file failed"
cmp -s "$WORK/t.mscr" "$WORK/mine.link" || fail "the hard link to my own file was written through"
"$MEMSCRIBE" dump "$WORK/mine.mscr" >/dev/null || fail "my replaced file does not read"
echo "ok: /dev/null, /dev/stdout, FIFOs and one's own files work"

# Whole under its name after a SIGKILL (no temporary name), made 0600, and
# not readable by nobody.
rm -f "$WORK/go"
"$MEMSCRIBE" record -q -o "$S/k.mscr" -- "$P/rec_intruder" wait "$WORK/go" 545454 &
rpid=$!
# Killed once the trace is on disk (the program waits for go), so that a
# slow start on a loaded machine cannot leave nothing to check; 30 s at most.
for _ in $(seq 1 600); do
    [ -s "$S/k.mscr" ] && break
    sleep 0.05
done
kill -9 "$rpid"
wait "$rpid" 2>/dev/null || true
touch "$WORK/go"
[ "$(stat -c %a "$S/k.mscr")" = 600 ] || fail "the trace is mode $(stat -c %a "$S/k.mscr"), not 600"
"$MEMSCRIBE" dump "$S/k.mscr" >/dev/null 2>"$WORK/err" || fail "the killed recording's trace does not read: $(cat "$WORK/err")"
grep -q "incomplete" "$WORK/err" || fail "the killed recording's trace does not say it is incomplete: $(cat "$WORK/err")"
! "${NOBODY[@]}" cat "$S/k.mscr" >/dev/null 2>&1 || fail "nobody can read root's trace"
finish "ok: a trace is whole under its name after a SIGKILL, and nobody cannot read it"
