#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# memscribe serve against other local users and rough clients (docs/serve.md,
# "Other users"): as user nobody (when run as root), 200 half-open
# connections leave the owner's page answering within 1 s, and neither the
# address file (0600) nor any process shows the token; 60 concurrent
# queries are all answered (queued, not refused); a GET with a body is
# refused at once; refusals are counted, not a line each
# (tests/e2e/serve_guard.py); extreme parameters (interval=1ns, counts out of
# bounds, reversed and huge times) answered 400 or within their caps of
# points and bytes, of a finished trace and of one growing under record
# --live. And record --live's server goes within 1 s
# of a SIGKILL of its recorder. Needs MEMSCRIBE, MS_BUILD, MS_SOURCE.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" serve-guard MEMSCRIBE MS_BUILD MS_SOURCE
need setpriv
T=$WORK/demo.mscr
"$MEMSCRIBE" record -q -o "$T" -- "$MS_BUILD/examples/memtest_demo" >/dev/null 2>"$WORK/rec.err" ||
    fail "record: $(cat "$WORK/rec.err")"
other=()
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
    other=(nobody)
    chmod 711 "$WORK" # nobody reaches nothing in it but what the test names
fi
# A large finished trace: python3's JSON round trip of 200,000 objects, every
# object from malloc (PYTHONMALLOC=malloc): 7.3 M heap calls.
PYTHONMALLOC=malloc "$MEMSCRIBE" record -q -o "$WORK/large.mscr" -- /usr/bin/python3 -c \
    'import json; json.loads(json.dumps([{"a": i, "b": str(i)} for i in range(200000)]))' \
    2>"$WORK/rec.err" || fail "record: $(cat "$WORK/rec.err")"
LARGE_TRACE=$WORK/large.mscr python3 "$MS_SOURCE/tests/e2e/serve_guard.py" "$MEMSCRIBE" "$T" \
    "$WORK" "${other[@]}" || fail "serve did not hold (above)"

# record --live, its recorder SIGKILLed: the server goes with it.
"$MEMSCRIBE" record --live --live-url-file "$WORK/live.url" -o "$WORK/live.mscr" -- sleep 60 \
    >/dev/null 2>"$WORK/live.err" &
rec=$!
for _ in $(seq 100); do
    [ -s "$WORK/live.url" ] && break
    sleep 0.1
done
[ -s "$WORK/live.url" ] || fail "record --live wrote no address in 10 s: $(cat "$WORK/live.err")"
server=$(pgrep -f -- "serve .*--parent $rec " || true)
[ -n "$server" ] || fail "no server of recorder $rec: $(pgrep -af 'memscribe serve')"
program=$(pgrep -P "$rec" -x sleep || true)
kill -KILL "$rec"
wait "$rec" 2>/dev/null || true
[ -z "$program" ] || kill "$program" 2>/dev/null || true # runs on untraced otherwise
# Gone: no such process, or a zombie no one reaped yet (its parent died).
gone=''
for i in $(seq 10); do
    state=$(sed -n 's/^[0-9]* (.*) \([A-Z]\).*/\1/p' "/proc/$server/stat" 2>/dev/null || true)
    [ -n "$state" ] && [ "$state" != Z ] || { gone=$((i * 100)); break; }
    sleep 0.1
done
[ -n "$gone" ] || { kill "$server"; fail "the server of a SIGKILLed recorder still runs after 1 s"; }
echo "ok: the server of a SIGKILLed recorder was gone within $gone ms"
