#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# memscribe source and the page's source panel (docs/serve.md, "Source"):
# the lines around a frame, from the file the trace's debug information
# names, exactly as the file holds them (sed is the oracle); and a crafted
# trace whose #line names /etc/shadow, a link to it and a path through
# '..': nothing is shown that the trace's owner (user nobody) could not
# read, no link is followed, no '..' is walked, from the command and from
# the page (tests/e2e/serve_source.py) alike.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" --go-on serve-source MEMSCRIBE MS_BUILD MS_SOURCE
source "$MS_SOURCE/tests/e2e/html_chrome.sh"
need chromium
need chromedriver
need cc
need jq
PY=/usr/bin/python3 # Debian's, with python3-selenium
"$PY" -c 'import selenium' 2>/dev/null || fail "python3-selenium is not installed: run scripts/setup.sh --test"
SERVER=""
trap '[ -z "$SERVER" ] || kill "$SERVER" 2>/dev/null; rm -rf "$WORK"' EXIT

# A program of our own, built with its debug information: its source
# lines are what every check compares with.
SRC=$WORK/leaky.c
cat >"$SRC" <<'C'
#include <stdlib.h>
#include <string.h>

static char *keep;

__attribute__((noinline)) char *make_block(size_t n)
{
    char *p = malloc(n);
    memset(p, 1, n);
    return p;
}

int main(void)
{
    keep = make_block(1000);
    free(make_block(50));
    return keep[0] - 1;
}
C
cc -g -O0 -o "$WORK/leaky" "$SRC" || fail "cc leaky.c"
"$MEMSCRIBE" record -q -o "$WORK/leaky.mscr" -- "$WORK/leaky" >/dev/null 2>"$WORK/err" ||
    fail "record leaky: $(cat "$WORK/err")"
T=$WORK/leaky.mscr

# The command: the frame's line marked, its neighbours as sed prints them.
"$MEMSCRIBE" source "$T" 'make_block (leaky.c:8)' --context 2 >"$WORK/text" 2>"$WORK/err" ||
    fail "source text: $(cat "$WORK/err")"
expect "text: the file" "$(sed -n 's/^file: //p' "$WORK/text")" "$SRC, line 8 of 18"
expect "text: the marked line" "$(grep '^>' "$WORK/text")" ">  8      char *p = malloc(n);"
expect "text: the lines" "$(sed -n '/^[> ] *[0-9]/s/^[> ] *[0-9]*  //p' "$WORK/text")" "$(sed -n 6,10p "$SRC")"
"$MEMSCRIBE" source --format=json --frame 'main (leaky.c:16)' --context 3 "$T" >"$WORK/json" 2>"$WORK/err" ||
    fail "source json: $(cat "$WORK/err")"
expect "json: where" "$(jq -r '[.source, .line, .first_line, .file_lines, .changed] | @tsv' "$WORK/json")" \
    "$SRC	16	13	18	false"
expect "json: the lines" "$(jq -r '.lines[]' "$WORK/json")" "$(sed -n 13,18p "$SRC")"
"$MEMSCRIBE" source --format=json --context 0 "$T" 'main (leaky.c:15)' >"$WORK/json" 2>&1 ||
    fail "source --context 0: $(cat "$WORK/json")"
expect "--context 0" "$(jq -c '[.first_line, .lines]' "$WORK/json")" '[15,["    keep = make_block(1000);"]]'
# Edited after the trace was written: said, lines still shown.
touch -d '+1 hour' "$SRC"
"$MEMSCRIBE" source --format=json "$T" 'main (leaky.c:15)' >"$WORK/json" 2>&1 || fail "source changed: $(cat "$WORK/json")"
expect "a file edited since" "$(jq .changed "$WORK/json")" true
grep -q '^(the file changed after the trace was written' <("$MEMSCRIBE" source "$T" 'main (leaky.c:15)') ||
    fail "text: no note that the file changed"
touch -d '-1 hour' "$SRC"

# usage: refused WHAT STATUS MESSAGE TRACE FRAME: source exits STATUS
# saying MESSAGE, and prints nothing.
refused() {
    local rc=0
    "$MEMSCRIBE" source "$4" "$5" >"$WORK/out" 2>"$WORK/err" || rc=$?
    expect "$1: exit status" "$rc" "$2"
    grep -qF -- "$3" "$WORK/err" || fail "$1: the message '$(cat "$WORK/err")' does not say '$3'"
    [ ! -s "$WORK/out" ] || fail "$1: printed $(head -c 200 "$WORK/out")"
}
refused "a function alone" 2 "'make_block' names no file and line" "$T" make_block
refused "no such frame" 1 "no frame of the trace reads 'nope (x.c:1)'" "$T" 'nope (x.c:1)'
cp -p "$SRC" "$SRC.orig"
printf 'a\nb\nc\n' >"$SRC"
refused "a line past the file's end" 1 "has 3 lines, the frame is at line 8" "$T" 'make_block (leaky.c:8)'
mv "$SRC.orig" "$SRC"
echo hello >"$WORK/not-a-trace"
refused "a file that is not a trace" 1 "not-a-trace" "$WORK/not-a-trace" 'f (a.c:1)'

# A crafted trace: its frames name /etc/shadow, a link to it, and a path
# through '..'.
mkdir "$WORK/d"
ln -s /etc/shadow "$WORK/d/link.c"
cat >"$WORK/crafted.c" <<C
#include <stdlib.h>
void *keep[3];
__attribute__((noinline)) void *a1(void)
{
#line 3 "/etc/shadow"
    return malloc(10);
}
__attribute__((noinline)) void *a2(void)
{
#line 2 "$WORK/d/link.c"
    return malloc(20);
}
__attribute__((noinline)) void *a3(void)
{
#line 7 "$WORK/d/../crafted.c"
    return malloc(30);
}
int main(void)
{
    keep[0] = a1();
    keep[1] = a2();
    keep[2] = a3();
    return 0;
}
C
cc -g -O0 -o "$WORK/crafted" "$WORK/crafted.c" || fail "cc crafted.c"
C=$WORK/crafted.mscr
"$MEMSCRIBE" record -q -o "$C" -- "$WORK/crafted" >/dev/null 2>"$WORK/err" || fail "record crafted: $(cat "$WORK/err")"
refused "a link" 1 "$WORK/d/link.c: a symbolic link or a file on the way: not followed" "$C" 'a2 (link.c:2)'
refused "a '..'" 1 "$WORK/d/../crafted.c: a '.' or '..' in the path" "$C" 'a3 (crafted.c:7)'
if [ "$(id -u)" = 0 ]; then
    chown nobody "$C"
    refused "a file the owner may not read" 1 "/etc/shadow: the trace's owner may not read it" "$C" 'a1 (shadow:3)'
    # user nobody asking for it (the crafter): not a byte either
    chmod 755 "$WORK" "$WORK/d"
    rc=0
    setpriv --reuid=nobody --regid=nogroup --clear-groups "$MEMSCRIBE" source "$C" 'a1 (shadow:3)' \
        >"$WORK/out" 2>"$WORK/err" || rc=$?
    expect "as nobody: exit status" "$rc" 1
    [ ! -s "$WORK/out" ] || fail "as nobody: printed $(head -c 100 "$WORK/out")"
    # (the system refuses first there: Permission denied)
    grep -qF "source: /etc/shadow: " "$WORK/err" || fail "as nobody: $(cat "$WORK/err")"
else
    echo "skipped: /etc/shadow under a trace of user nobody (needs root to give the trace away)"
fi

# The page: the same lines, and the same refusals.
serve() {
    local end=$((SECONDS + 60))
    rm -f "$WORK/url"
    "$MEMSCRIBE" serve --url-file "$WORK/url" "$1" >/dev/null 2>"$WORK/serve.err" &
    SERVER=$!
    while [ ! -s "$WORK/url" ] && ((SECONDS < end)) && kill -0 "$SERVER" 2>/dev/null; do sleep 0.1; done
    [ -s "$WORK/url" ] || fail "serve $1 wrote no address in 60 s: $(cat "$WORK/serve.err")"
    "$PY" "$MS_SOURCE/tests/e2e/serve_source.py" "$(cat "$WORK/url")" "$MEMSCRIBE" "$1" "$ART/serve-$2.png" "$2" ||
        fail "$2: the page differs from the command (above)"
    kill "$SERVER"
    wait "$SERVER" || true
    SERVER=""
}
serve "$T" source
[ "$(id -u)" != 0 ] || serve "$C" source-crafted
finish "serve source: the command and the page show the frames' lines, and refuse a crafted trace's files"
