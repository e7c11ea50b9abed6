#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The page's views in headless Chromium against the commands' JSON of the
# same question: the call trees (tests/e2e/serve_trees.py: `memscribe tree`
# and `window --tree`) on the demo (one process, a deep C++ tree) and on a
# `make -j2` of two C files (a tree of processes: each program a
# first-level node); the process filter on that tree and the thread filter
# on tests/programs/ana_threads (tests/e2e/serve_filters.py: report, tree,
# histogram and leaks with --pid or --thread); memcheck's leak classes on
# tests/programs/rec_reach recorded with --reach (tests/e2e/serve_leaks.py).
# A screenshot of each in the build's artifacts.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" --go-on serve-views MEMSCRIBE MS_BUILD MS_SOURCE MS_PROGRAMS
source "$MS_SOURCE/tests/e2e/html_chrome.sh"
need chromium
need chromedriver
need make
need cc
need curl
PY=/usr/bin/python3 # Debian's, with python3-selenium
"$PY" -c 'import selenium' 2>/dev/null || fail "python3-selenium is not installed: run scripts/setup.sh --test"

SERVER=""
SERVE_ARGS=()
trap '[ -z "$SERVER" ] || kill "$SERVER" 2>/dev/null; rm -rf "$WORK"' EXIT

# usage: serve_start TRACE: memscribe serve TRACE (with SERVE_ARGS), its
# address in URL; serve_stop ends it.
serve_start() {
    local end=$((SECONDS + 60))
    rm -f "$WORK/url"
    "$MEMSCRIBE" serve "${SERVE_ARGS[@]}" --url-file "$WORK/url" "$1" >/dev/null 2>"$WORK/serve.err" &
    SERVER=$!
    while [ ! -s "$WORK/url" ] && ((SECONDS < end)) && kill -0 "$SERVER" 2>/dev/null; do sleep 0.1; done
    [ -s "$WORK/url" ] || fail "serve $1 wrote no address in 60 s: $(cat "$WORK/serve.err")"
    URL=$(cat "$WORK/url")
}
serve_stop() {
    kill "$SERVER"
    wait "$SERVER" || true
    SERVER=""
}

# usage: page SCRIPT NAME TRACE [ARGS]: serve TRACE and run
# tests/e2e/SCRIPT.py on its page (ARGS after its own).
page() {
    local script=$1 name=$2 trace=$3
    shift 3
    serve_start "$trace"
    "$PY" "$MS_SOURCE/tests/e2e/$script.py" "$URL" "$MEMSCRIBE" "$trace" "$ART/serve-$name.png" "$@" ||
        fail "$name: the page differs from the commands (above)"
    serve_stop
}

record_demo "$WORK/demo.mscr"
page serve_trees trees-demo "$WORK/demo.mscr"

mkdir "$WORK/proj"
for i in 1 2; do
    printf '#include <stdlib.h>\nint f%d(int x) { char *p = malloc(100 + x); free(p); return x; }\n' "$i" \
        >"$WORK/proj/f$i.c"
done
# shellcheck disable=SC2016 # make's own $ variables
printf 'all: f1.o f2.o\n%%.o: %%.c\n\tcc -O1 -c $< -o $@\n' >"$WORK/proj/Makefile"
"$MEMSCRIBE" record -q -o "$WORK/make.mscr" -- make -s -C "$WORK/proj" -j2 >/dev/null 2>"$WORK/err" ||
    fail "record make: $(cat "$WORK/err")"
page serve_trees trees-make "$WORK/make.mscr"
page serve_filters filter-pid "$WORK/make.mscr" pid
"$MEMSCRIBE" record -q -o "$WORK/threads.mscr" -- "$MS_PROGRAMS/ana_threads" >/dev/null 2>"$WORK/err" ||
    fail "record ana_threads: $(cat "$WORK/err")"
page serve_filters filter-thread "$WORK/threads.mscr" thread

# memcheck's classes at exit (record --reach) as the page draws them.
"$MEMSCRIBE" record -q --reach -o "$WORK/reach.mscr" -- "$MS_PROGRAMS/rec_reach" >/dev/null 2>"$WORK/err" ||
    fail "record --reach rec_reach: $(cat "$WORK/err")"
page serve_leaks leak-classes "$WORK/reach.mscr"

# Two builds of one program compared (serve --base).
for b in base new; do
    "$MEMSCRIBE" record -q -o "$WORK/diff_$b.mscr" -- "$MS_PROGRAMS/diff_$b/diff_prog" >/dev/null 2>"$WORK/err" ||
        fail "record diff_$b: $(cat "$WORK/err")"
done
SERVE_ARGS=(--base "$WORK/diff_base.mscr")
page serve_compare compare "$WORK/diff_new.mscr" "$WORK/diff_base.mscr"
SERVE_ARGS=()
serve_start "$WORK/diff_new.mscr"
expect "without --base: no comparison" "$(curl -s -o /dev/null -w '%{http_code}' "${URL/\/?token=/\/api\/diff?token=}")" 404
serve_stop
finish "the page's trees, filters and comparison showed the commands' numbers"
