#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# memscribe serve's pprof paths (docs/metrics.md, "pprof"): go tool pprof
# reads /debug/pprof/heap as it reads a Go service's, and its samples sum
# to report's totals (alloc_objects: allocations, alloc_space: bytes
# allocated, inuse_space: heap in use at the end) on
# tests/programs/rec_agg; /debug/pprof/allocs through the bearer header is
# the profile `memscribe export --to pprof` writes, byte for byte (one
# producer, not a second writer); without the token, 401.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" fleet-pprof MEMSCRIBE MS_PROGRAMS
need jq
need curl
need go
SERVER=""
trap '[ -z "$SERVER" ] || kill "$SERVER" 2>/dev/null; rm -rf "$WORK"' EXIT

T=$WORK/agg.mscr
"$MEMSCRIBE" record -q -o "$T" -- "$MS_PROGRAMS/rec_agg" 5 >/dev/null 2>"$WORK/err" ||
    fail "record rec_agg: $(cat "$WORK/err")"
"$MEMSCRIBE" serve --url-file "$WORK/url" "$T" >/dev/null 2>"$WORK/serve.err" &
SERVER=$!
for _ in $(seq 300); do [ -s "$WORK/url" ] && break; sleep 0.1; done
[ -s "$WORK/url" ] || fail "serve wrote no address: $(cat "$WORK/serve.err")"
url=$(cat "$WORK/url")
base=${url%%/\?token=*} token=${url##*token=}

# go tool pprof on the URL: the raw profile's samples summed by column.
PPROF_TMPDIR=$WORK HOME=$WORK timeout 120 go tool pprof -raw "$base/debug/pprof/heap?token=$token" \
    >"$WORK/raw" 2>"$WORK/pprof.err" || fail "go tool pprof: $(cat "$WORK/pprof.err")"
got=$(awk '/^Samples:/ { on = 1; next } on && /^ *[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+:/ {
        sub(":", "", $4); a += $1; b += $2; c += $3; d += $4 } /^Locations/ { on = 0 }
        END { print a, b, c, d }' "$WORK/raw")
want=$("$MEMSCRIBE" report --format=json "$T" |
    jq -r '(.total // .processes[0]) | "\(.allocations) \(.allocated_bytes) \(.leaked_blocks) \(.leaked_bytes)"')
expect "go tool pprof's samples (alloc_objects alloc_space inuse_objects inuse_space) against report" "$got" "$want"
grep -q '^alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes\[dflt\]' "$WORK/raw" ||
    fail "the sample types: $(grep -m1 alloc_objects "$WORK/raw")"

# The bearer header's route, and the one producer.
curl -sf -H "Authorization: Bearer $token" "$base/debug/pprof/allocs" -o "$WORK/allocs.pb.gz" ||
    fail "curl /debug/pprof/allocs with the bearer header"
"$MEMSCRIBE" export --to pprof -o "$WORK/export.pb.gz" "$T" 2>/dev/null || fail "export --to pprof"
cmp -s <(gzip -dc "$WORK/allocs.pb.gz") <(gzip -dc "$WORK/export.pb.gz") ||
    fail "/debug/pprof/allocs differs from export --to pprof"
echo "ok: /debug/pprof/allocs is export --to pprof's profile"
expect "without the token" "$(curl -s -o /dev/null -w '%{http_code}' "$base/debug/pprof/heap")" 401
echo "ok: the pprof paths"
