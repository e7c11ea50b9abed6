#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# memscribe serve on a finished trace (the demo, and a process tree of
# make): the page in headless Chromium driven by Selenium shows the
# numbers of report, of window for a window dragged with the mouse, and of
# leaks --at for a moment on the slider (tests/e2e/serve_page.py). And the
# server's rules (docs/serve.md, "Safety"): it listens on 127.0.0.1, every
# request needs the token, a parameter that is not a number or a time is
# refused (400), anything but the page and its queries is not there (404),
# only GET; a file that is not a trace is refused at start (exit 1).
# Three parts, each a test of its own (tests/serve.cmake): PART is "demo"
# (the rules, the demo's page, gzip, top), "chunks" (traces of many small
# chunks, with totals and without; a crafted summary) or "traces" (a
# process tree, a flight recorder's trace, a Windows trace, a text file).
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" --go-on serve-page MEMSCRIBE MS_BUILD MS_SOURCE
# shellcheck source=tests/e2e/html_chrome.sh
source "$MS_SOURCE/tests/e2e/html_chrome.sh"
need chromium
need chromedriver
need curl
need jq
PY=/usr/bin/python3 # Debian's, with python3-selenium
"$PY" -c 'import selenium' 2>/dev/null || fail "python3-selenium is not installed: run scripts/setup.sh --test"

SERVER=""
trap '[ -z "$SERVER" ] || kill "$SERVER" 2>/dev/null; rm -rf "$WORK"' EXIT

# usage: serve TRACE: start the server on TRACE; sets URL, BASE, TOKEN once
# it has written its address (to --url-file, after it listens): up to 60 s.
serve() {
    local end=$((SECONDS + 60))
    rm -f "$WORK/url"
    "$MEMSCRIBE" serve --url-file "$WORK/url" "$1" >"$WORK/serve.out" 2>"$WORK/serve.err" &
    SERVER=$!
    while [ ! -s "$WORK/url" ] && ((SECONDS < end)) && kill -0 "$SERVER" 2>/dev/null; do sleep 0.1; done
    [ -s "$WORK/url" ] || fail "serve $1 wrote no address in 60 s: $(cat "$WORK/serve.err")"
    URL=$(cat "$WORK/url")
    BASE=${URL%%/\?*}
    TOKEN=${URL##*token=}
    expect "serve printed its address on stdout" "$(cat "$WORK/serve.out")" "$URL"
}
stop() {
    kill "$SERVER"
    wait "$SERVER" || true
    SERVER=""
}
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }

part_demo() {
    T=$WORK/demo.mscr
    record_demo "$T"
    serve "$T"
    case $URL in http://127.0.0.1:*/\?token=????????????????????????????????) echo "ok: $URL" ;;
    *) fail "the address is not 127.0.0.1 with a 32-digit token: $URL" ;; esac
    expect "no token" "$(code "$BASE/")" 401
    other=${TOKEN%?}0
    [ "$other" != "$TOKEN" ] || other=${TOKEN%?}1
    expect "a wrong token" "$(code "$BASE/?token=$other")" 403
    expect "a wrong bearer token" "$(code -H "Authorization: Bearer $other" "$BASE/metrics")" 403
    expect "a query without the token" "$(code "$BASE/api/report")" 401
    expect "the token as a bearer" "$(code -H "Authorization: Bearer $TOKEN" "$BASE/api/status")" 200
    expect "the page" "$(code "$URL")" 200
    expect "a parameter that is an option" "$(code "$BASE/api/window?token=$TOKEN&from=-o")" 400
    expect "a parameter that is a path" "$(code "$BASE/api/leaks?token=$TOKEN&at=..%2Fetc")" 400
    expect "a name with a control character" "$(code "$BASE/api/tree?token=$TOKEN&focus=a%0Ab")" 400
    # A name is one word of argv (--focus=NAME): one that looks like an option or a path is a
    # function nobody called, not an option or a file.
    expect "a name that looks like an option" "$(code "$BASE/api/tree?token=$TOKEN&focus=-o%20x")" 200
    expect "an unknown query" "$(code "$BASE/api/dump?token=$TOKEN")" 404
    expect "a path" "$(code "$BASE/etc/passwd?token=$TOKEN")" 404
    expect "POST" "$(code -X POST -d x "$BASE/api/report?token=$TOKEN")" 405
    # The command refuses it (exit status 2): the asker's to change, 400.
    expect "a time the command refuses" "$(code "$BASE/api/leaks?token=$TOKEN&at=zz")" 400
    # The page's first question, report, is asked with --verify: once it passed,
    # window and leaks come from the trace's index (docs/serve.md, "Scale"), and
    # the page below must still show the commands' numbers, which the commands
    # give replaying the trace.
    expect "the index before report" "$(curl -s "$BASE/api/status?token=$TOKEN" | jq .index)" false
    "$PY" "$MS_SOURCE/tests/e2e/serve_page.py" "$URL" "$MEMSCRIBE" "$T" "$ART/serve-demo.png" ||
        fail "demo: the page shows other numbers than the commands (above)"
    expect "the index checked by report" "$(curl -s "$BASE/api/status?token=$TOKEN" | jq .index)" true
    # Answers are kept gzipped (docs/serve.md, "Scale"): sent so to a client that
    # takes gzip (the browser above), inflated for one that does not; the same
    # bytes as the command's either way.
    "$MEMSCRIBE" report --format=json "$T" >"$WORK/report.json"
    curl -s -D "$WORK/gz.head" -H 'Accept-Encoding: gzip' "$BASE/api/report?token=$TOKEN" >"$WORK/gz.body"
    grep -qi '^content-encoding: gzip' "$WORK/gz.head" || fail "gzip asked, not sent: $(cat "$WORK/gz.head")"
    gzip -dc "$WORK/gz.body" | cmp -s - "$WORK/report.json" || fail "the gzipped answer is not report's"
    curl -s -D "$WORK/plain.head" "$BASE/api/report?token=$TOKEN" >"$WORK/plain.body"
    grep -qi '^content-encoding' "$WORK/plain.head" && fail "gzip sent unasked: $(cat "$WORK/plain.head")"
    cmp -s "$WORK/plain.body" "$WORK/report.json" || fail "the plain answer is not report's"
    curl -s -D "$WORK/q0.head" -H 'Accept-Encoding: gzip;q=0, identity' "$BASE/api/report?token=$TOKEN" \
        >"$WORK/q0.body"
    grep -qi '^content-encoding' "$WORK/q0.head" && fail "gzip sent against q=0"
    cmp -s "$WORK/q0.body" "$WORK/report.json" || fail "the answer for q=0 is not report's"
    echo "ok: answers gzipped for gzip clients, plain for others, report's bytes both"
    stop

    # top, once, on the same trace: its figures are report's.
    "$MEMSCRIBE" top --once --sort allocations --top 5 "$T" >"$WORK/top" 2>"$WORK/err" ||
        fail "top exited with $?: $(cat "$WORK/err")"
    "$MEMSCRIBE" report --format=json --top 5 "$T" >"$WORK/rep.json"
    expect "top: allocations" "$(sed -n 's/^allocations \([0-9]*\) .*/\1/p' "$WORK/top")" \
        "$(jq .total.allocations "$WORK/rep.json")"
    expect "top: peak" "$(sed -n 's/^peak \([0-9]*\) B .*/\1/p' "$WORK/top")" "$(jq .total.peak_bytes "$WORK/rep.json")"
    expect "top: live at the end" "$(sed -n 's/.*live at the trace.s end \([0-9]*\) B .*/\1/p' "$WORK/top")" \
        "$(jq .total.leaked_bytes "$WORK/rep.json")"
    expect "top: the sites by allocations" "$(awk '/CALL SITE/ { on = 1; next } on { print substr($0, 27, 10) + 0 }' "$WORK/top" | tr '\n' ' ')" \
        "$(jq -r '[.processes[0].top.allocations[].allocations] | join(" ")' "$WORK/rep.json") "
}

part_chunks() {

    # The demo recorded with --totals in chunks of 4 events (MEMSCRIBE_CHUNK_EVENTS): more
    # than 100 chunks, so the page draws the whole run from the chunks' totals (timeline
    # --index, a row per chunk), asks report and leaks from them, then checks them by report
    # replayed.
    MEMSCRIBE_CHUNK_EVENTS=4 "$MEMSCRIBE" record -q --totals -o "$WORK/small.mscr" -- \
        "$MS_BUILD/examples/memtest_demo" >"$WORK/out" 2>"$WORK/err" || fail "record --totals: $(cat "$WORK/err")"
    serve "$WORK/small.mscr"
    expect "small chunks: totals" "$(curl -s "$BASE/api/status?token=$TOKEN" | jq -c '[.totals, .chunks > 100]')" \
        "[true,true]"
    "$PY" "$MS_SOURCE/tests/e2e/serve_page.py" "$URL" "$MEMSCRIBE" "$WORK/small.mscr" "$ART/serve-totals.png" ||
        fail "small chunks: the page shows other numbers than the commands (above)"
    stop
    grep -q "no chunk totals" "$WORK/serve.err" && fail "small chunks: a hint about totals: $(cat "$WORK/serve.err")"
    # As many chunks without --totals: serve says at its start that the first view replays them
    # and how it could come from totals.
    MEMSCRIBE_CHUNK_EVENTS=4 "$MEMSCRIBE" record -q -o "$WORK/plain.mscr" -- \
        "$MS_BUILD/examples/memtest_demo" >"$WORK/out" 2>"$WORK/err" || fail "record: $(cat "$WORK/err")"
    serve "$WORK/plain.mscr"
    stop
    if grep -q "chunks and no chunk totals: the page's first view replays every event; recorded with \`record --totals\`" \
        "$WORK/serve.err"; then
        echo "ok: without totals, a hint at the start"
    else
        fail "without totals: no hint: $(cat "$WORK/serve.err")"
    fi

    # A trace whose chunk summary does not match its events (a crafted malloc the
    # summary leaves out): report fails saying so, and the index is never used.
    serve "$MS_SOURCE/tests/fuzz/corpus/crafted-ok"
    curl -s "$BASE/api/report?token=$TOKEN" >"$WORK/body"
    grep -q "summary does not match its events" "$WORK/body" || fail "crafted: report said $(cat "$WORK/body")"
    expect "crafted: the index" "$(curl -s "$BASE/api/status?token=$TOKEN" | jq .index)" false
    stop
}

part_traces() {
    # A process tree: make running a shell and two commands, sh four times in all (a
    # program of four processes).
    need make
    cat >"$WORK/Makefile" <<'MK'
all: a b
a:
	@sh -c 'echo a' >/dev/null
b:
	@sh -c 'echo b' >/dev/null
MK
    "$MEMSCRIBE" record -q -o "$WORK/make.mscr" -- make -s -C "$WORK" -j2 >/dev/null 2>"$WORK/err" ||
        fail "record make: $(cat "$WORK/err")"
    serve "$WORK/make.mscr"
    "$PY" "$MS_SOURCE/tests/e2e/serve_page.py" "$URL" "$MEMSCRIBE" "$WORK/make.mscr" "$ART/serve-make.png" ||
        fail "make: the page shows other numbers than the commands (above)"
    stop

    # The demo recorded with --keep-last: the whole run aggregated (its notes say so, and
    # what --keep-last kept), every figure still the commands'.
    "$MEMSCRIBE" record -q --keep-last 400ms --aggregate=10ms -o "$WORK/kl.mscr" -- \
        "$MS_BUILD/examples/memtest_demo" >"$WORK/out" 2>"$WORK/err" || fail "record --keep-last: $(cat "$WORK/err")"
    serve "$WORK/kl.mscr"
    "$PY" "$MS_SOURCE/tests/e2e/serve_page.py" "$URL" "$MEMSCRIBE" "$WORK/kl.mscr" "$ART/serve-keep-last.png" ||
        fail "keep-last: the page shows other numbers than the commands (above)"
    stop

    # A Windows trace (the golden one): its commit lifetimes (VirtualAlloc's) in the window.
    serve "$MS_SOURCE/tests/golden/v1_2_windows.mscr"
    "$PY" "$MS_SOURCE/tests/e2e/serve_page.py" "$URL" "$MEMSCRIBE" "$MS_SOURCE/tests/golden/v1_2_windows.mscr" \
        "$ART/serve-windows.png" || fail "windows: the page shows other numbers than the commands (above)"
    stop

    echo "not a trace" >"$WORK/text"
    "$MEMSCRIBE" serve "$WORK/text" >/dev/null 2>"$WORK/err" && fail "serve took a text file"
    grep -q "text" "$WORK/err" || fail "the error does not name the file: $(cat "$WORK/err")"
}

case ${1:-} in
demo | chunks | traces) "part_$1" ;;
*) fail "usage: serve_page.sh demo|chunks|traces" ;;
esac
finish "the page showed the commands' numbers (${1:-})"
