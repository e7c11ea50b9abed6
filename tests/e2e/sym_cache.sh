#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The symbol cache (MEMSCRIBE_SYMBOL_CACHE; docs/symbols.md, "The symbol
# cache"): report, tree, leaks and the page's data are the same, byte for
# byte, without it, when it is filled and when it is read, on a C++ program
# with inlined frames (tests/programs/ana_interest) and a threaded one; with
# the program's file gone, the cache still names its frames, which reading
# the files no longer can (the cache is what is read); memscribe serve
# keeps one for its queries, in memory: it holds records after a query,
# and /metrics answers as `memscribe metrics` does.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" sym-cache MEMSCRIBE MS_PROGRAMS
need curl
SERVER=""
trap '[ -z "$SERVER" ] || kill "$SERVER" 2>/dev/null; rm -rf "$WORK"' EXIT

# usage: outputs TRACE PREFIX: every output compared, into $WORK/PREFIX.*
outputs() {
    local t=$1 p=$WORK/$2
    "$MEMSCRIBE" report "$t" >"$p.report" 2>"$p.err" || fail "report: $(cat "$p.err")"
    "$MEMSCRIBE" tree --format=json --depth 0 "$t" >"$p.tree" 2>"$p.err" || fail "tree: $(cat "$p.err")"
    "$MEMSCRIBE" leaks --all-frames "$t" >"$p.leaks" 2>"$p.err" || fail "leaks: $(cat "$p.err")"
    "$MEMSCRIBE" html -o "$p.html" "$t" 2>"$p.err" || fail "html: $(cat "$p.err")"
    # the page's data, without the time it was made
    sed -n '/id="ms-data"/,/<\/script>/p' "$p.html" >"$p.data"
}
# usage: same A B WHAT: the outputs of prefixes A and B equal
same() {
    for k in report tree leaks data; do
        cmp -s "$WORK/$1.$k" "$WORK/$2.$k" ||
            fail "$3: $k differs: $(diff "$WORK/$1.$k" "$WORK/$2.$k" | head -5)"
    done
}

cp "$MS_PROGRAMS/ana_interest" "$WORK/prog"
"$MEMSCRIBE" record -q -o "$WORK/t.mscr" -- "$WORK/prog" >/dev/null 2>"$WORK/err" ||
    fail "record: $(cat "$WORK/err")"
"$MEMSCRIBE" record -q -o "$WORK/th.mscr" -- "$MS_PROGRAMS/ana_threads" >/dev/null 2>"$WORK/err" ||
    fail "record ana_threads: $(cat "$WORK/err")"
for t in t th; do
    outputs "$WORK/$t.mscr" "$t-none"
    MEMSCRIBE_SYMBOL_CACHE=$WORK/cache outputs "$WORK/$t.mscr" "$t-fill"
    MEMSCRIBE_SYMBOL_CACHE=$WORK/cache outputs "$WORK/$t.mscr" "$t-read"
    same "$t-none" "$t-fill" "$t: filling the cache"
    same "$t-none" "$t-read" "$t: reading the cache"
done
[ "$(stat -c %s "$WORK/cache")" -gt 1000 ] || fail "the cache holds $(stat -c %s "$WORK/cache") bytes"
grep -q 'load_catalog' "$WORK/t-none.report" || fail "the report names no function of the program"
echo "ok: report, tree, leaks and the page's data equal without the cache, filling it and reading it"

# The program's file gone: its frames are module+offset without the cache,
# and named with it.
rm "$WORK/prog"
"$MEMSCRIBE" report "$WORK/t.mscr" >"$WORK/gone" 2>&1 || fail "report without the program"
! grep -q 'load_catalog' "$WORK/gone" || fail "the report names the program's functions without its file"
MEMSCRIBE_SYMBOL_CACHE=$WORK/cache "$MEMSCRIBE" report "$WORK/t.mscr" >"$WORK/gone.cached" 2>&1 ||
    fail "report from the cache"
cmp -s "$WORK/gone.cached" "$WORK/t-none.report" ||
    fail "from the cache, without the program: $(diff "$WORK/gone.cached" "$WORK/t-none.report" | head -5)"
echo "ok: with the program's file gone, the cache names its frames as its file did"

# A file that is not a cache is refused, said once, and left as it was.
echo "dear diary" >"$WORK/diary"
MEMSCRIBE_SYMBOL_CACHE=$WORK/diary "$MEMSCRIBE" report "$WORK/th.mscr" >"$WORK/diary.out" 2>&1 ||
    fail "report with a diary as its cache"
expect "the diary" "$(cat "$WORK/diary")" "dear diary"
expect "the note on the diary" "$(grep -c "the symbol cache $WORK/diary is not used: not a symbol cache" "$WORK/diary.out")" 1
echo "ok: a file that is not a cache: refused, said once, untouched"

# serve's cache: a file in memory, with records after a query.
rm -f "$WORK/url"
"$MEMSCRIBE" serve --url-file "$WORK/url" "$WORK/th.mscr" >/dev/null 2>"$WORK/serve.err" &
SERVER=$!
for _ in $(seq 300); do [ -s "$WORK/url" ] && break; sleep 0.1; done
[ -s "$WORK/url" ] || fail "serve wrote no address: $(cat "$WORK/serve.err")"
url=$(cat "$WORK/url")
base=${url%%/\?token=*} token=${url##*token=}
memfd=""
for fd in /proc/"$SERVER"/fd/*; do
    case $(readlink "$fd") in /memfd:memscribe-symbols*) memfd=$fd ;; esac
done
[ -n "$memfd" ] || fail "serve has no symbol cache in memory"
curl -sf -H "Authorization: Bearer $token" "$base/metrics" -o "$WORK/scraped" || fail "curl /metrics"
"$MEMSCRIBE" metrics "$WORK/th.mscr" >"$WORK/metrics" 2>"$WORK/err" || fail "metrics: $(cat "$WORK/err")"
cmp -s "$WORK/scraped" "$WORK/metrics" || fail "/metrics against memscribe metrics: $(diff "$WORK/scraped" "$WORK/metrics" | head -5)"
[ "$(stat -L -c %s "$memfd")" -gt 16 ] || fail "serve's cache is empty after a query"
echo "ok: serve's cache in memory holds $(stat -L -c %s "$memfd") bytes after /metrics, which equals memscribe metrics"
# It ends with the server, nothing left behind (under ASan: no leak said).
kill "$SERVER"
wait "$SERVER" || true
SERVER=""
if grep -E 'Sanitizer|runtime error' "$WORK/serve.err" >"$WORK/hits"; then
    fail "serve's end: $(head -5 "$WORK/hits")"
fi
echo "ok: serve ended cleanly"
