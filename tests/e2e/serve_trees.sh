#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The page's call trees (docs/serve.md, "Call trees") in headless Chromium,
# against `memscribe tree` and `window --tree` of the same question
# (tests/e2e/serve_trees.py): on the demo (one process, a deep C++ tree)
# and on a `make -j2` of two C files (a tree of processes: each program a
# first-level node). A screenshot of each in the build's artifacts.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" --go-on serve-trees MEMSCRIBE MS_BUILD MS_SOURCE
source "$MS_SOURCE/tests/e2e/html_chrome.sh"
need chromium
need chromedriver
need make
need cc
PY=/usr/bin/python3 # Debian's, with python3-selenium
"$PY" -c 'import selenium' 2>/dev/null || fail "python3-selenium is not installed: run scripts/setup.sh --test"

SERVER=""
trap '[ -z "$SERVER" ] || kill "$SERVER" 2>/dev/null; rm -rf "$WORK"' EXIT

# usage: trees NAME TRACE: serve TRACE and drive its trees.
trees() {
    local end=$((SECONDS + 60))
    rm -f "$WORK/url"
    "$MEMSCRIBE" serve --url-file "$WORK/url" "$2" >/dev/null 2>"$WORK/serve.err" &
    SERVER=$!
    while [ ! -s "$WORK/url" ] && ((SECONDS < end)) && kill -0 "$SERVER" 2>/dev/null; do sleep 0.1; done
    [ -s "$WORK/url" ] || fail "serve $2 wrote no address in 60 s: $(cat "$WORK/serve.err")"
    "$PY" "$MS_SOURCE/tests/e2e/serve_trees.py" "$(cat "$WORK/url")" "$MEMSCRIBE" "$2" \
        "$ART/serve-trees-$1.png" || fail "$1: the page's trees differ from the commands' (above)"
    kill "$SERVER"
    wait "$SERVER" || true
    SERVER=""
}

record_demo "$WORK/demo.mscr"
trees demo "$WORK/demo.mscr"

mkdir "$WORK/proj"
for i in 1 2; do
    printf '#include <stdlib.h>\nint f%d(int x) { char *p = malloc(100 + x); free(p); return x; }\n' "$i" \
        >"$WORK/proj/f$i.c"
done
# shellcheck disable=SC2016 # make's own $ variables
printf 'all: f1.o f2.o\n%%.o: %%.c\n\tcc -O1 -c $< -o $@\n' >"$WORK/proj/Makefile"
"$MEMSCRIBE" record -q -o "$WORK/make.mscr" -- make -s -C "$WORK/proj" -j2 >/dev/null 2>"$WORK/err" ||
    fail "record make: $(cat "$WORK/err")"
trees make "$WORK/make.mscr"
finish "the page's trees showed the commands' numbers"
