#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# memscribe serve's pprof paths (docs/metrics.md, "pprof"): go tool pprof
# reads /debug/pprof/heap as it reads a Go service's, and its samples sum
# to report's totals (alloc_objects: allocations, alloc_space: bytes
# allocated, inuse_space: heap in use at the end) on
# tests/programs/rec_agg; /debug/pprof/allocs through the bearer header is
# the profile `memscribe export --to pprof` writes, byte for byte (one
# producer, not a second writer), with alloc_space its default as Go's;
# ?seconds=2 (go tool pprof -seconds 2) is the delta of the trace's last
# 2 s: what a program allocated, and how its heap in use changed, in its
# last phase, as `window --from end-2s` counts them and as the program
# makes them; without the token, 401.
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
# usage: serve_trace TRACE: memscribe serve on TRACE (SERVER), its address
# in base and its token in token.
serve_trace() {
    rm -f "$WORK/url"
    "$MEMSCRIBE" serve --url-file "$WORK/url" "$1" >/dev/null 2>"$WORK/serve.err" &
    SERVER=$!
    for _ in $(seq 300); do [ -s "$WORK/url" ] && break; sleep 0.1; done
    [ -s "$WORK/url" ] || fail "serve wrote no address: $(cat "$WORK/serve.err")"
    url=$(cat "$WORK/url")
    base=${url%%/\?token=*} token=${url##*token=}
}
# usage: sums RAW: go tool pprof -raw's samples summed by column
# (alloc_objects alloc_space inuse_objects inuse_space; a delta's may be
# negative).
sums() {
    awk '/^Samples:/ { on = 1; next } on && /^ *-?[0-9]+ +-?[0-9]+ +-?[0-9]+ +-?[0-9]+:/ {
        sub(":", "", $4); a += $1; b += $2; c += $3; d += $4 } /^Locations/ { on = 0 }
        END { print a + 0, b + 0, c + 0, d + 0 }' "$1"
}
serve_trace "$T"

# go tool pprof on the URL: the raw profile's samples summed by column.
PPROF_TMPDIR=$WORK HOME=$WORK timeout 120 go tool pprof -raw "$base/debug/pprof/heap?token=$token" \
    >"$WORK/raw" 2>"$WORK/pprof.err" || fail "go tool pprof: $(cat "$WORK/pprof.err")"
got=$(sums "$WORK/raw")
want=$("$MEMSCRIBE" report --format=json "$T" |
    jq -r '(.total // .processes[0]) | "\(.allocations) \(.allocated_bytes) \(.leaked_blocks) \(.leaked_bytes)"')
expect "go tool pprof's samples (alloc_objects alloc_space inuse_objects inuse_space) against report" "$got" "$want"
grep -q '^alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes\[dflt\]' "$WORK/raw" ||
    fail "the sample types: $(grep -m1 alloc_objects "$WORK/raw")"

# The bearer header's route, and the one producer.
curl -sf -H "Authorization: Bearer $token" "$base/debug/pprof/allocs" -o "$WORK/allocs.pb.gz" ||
    fail "curl /debug/pprof/allocs with the bearer header"
"$MEMSCRIBE" export --to pprof --sample-index alloc_space -o "$WORK/export.pb.gz" "$T" \
    2>/dev/null || fail "export --to pprof"
cmp -s <(gzip -dc "$WORK/allocs.pb.gz") <(gzip -dc "$WORK/export.pb.gz") ||
    fail "/debug/pprof/allocs differs from export --to pprof --sample-index alloc_space"
PPROF_TMPDIR=$WORK HOME=$WORK go tool pprof -raw "$WORK/allocs.pb.gz" 2>/dev/null |
    grep -q '^alloc_objects/count alloc_space/bytes\[dflt\] inuse_objects/count inuse_space/bytes$' ||
    fail "/debug/pprof/allocs: alloc_space is not the default sample type"
echo "ok: /debug/pprof/allocs is export --to pprof's profile, alloc_space its default"
expect "without the token" "$(curl -s -o /dev/null -w '%{http_code}' "$base/debug/pprof/heap")" 401
kill "$SERVER"
wait "$SERVER" 2>/dev/null || true
SERVER=""

# ?seconds=2: a program holds A (100,000 bytes) for 5 s, then in its last
# moments allocates B (300,000, kept), C (40,000, freed at once) and frees
# A: the last 2 s allocated 2 blocks, 340,000 bytes, and the heap in use
# grew by 0 blocks and 200,000 bytes.
cat >"$WORK/last.c" <<'C'
#include <stdlib.h>
#include <unistd.h>
__attribute__((noinline)) void *hold_a(void) { return malloc(100000); }
__attribute__((noinline)) void *last_b(void) { return malloc(300000); }
__attribute__((noinline)) void *temp_c(void) { return malloc(40000); }
int main(void)
{
    void *a = hold_a();
    sleep(5);
    void *b = last_b(), *c = temp_c();
    free(c);
    free(a);
    __asm__ volatile("" : : "g"(b) : "memory");
    _exit(0);
}
C
cc -g -O0 -o "$WORK/last" "$WORK/last.c" || fail "cc last.c"
L=$WORK/last.mscr
"$MEMSCRIBE" record -q -o "$L" -- "$WORK/last" 2>"$WORK/err" || fail "record last: $(cat "$WORK/err")"
serve_trace "$L"
PPROF_TMPDIR=$WORK HOME=$WORK timeout 120 go tool pprof -seconds 2 -raw \
    "$base/debug/pprof/heap?token=$token" >"$WORK/delta" 2>"$WORK/pprof.err" ||
    fail "go tool pprof -seconds 2: $(cat "$WORK/pprof.err")"
expect "the last 2 s (alloc_objects alloc_space inuse_objects inuse_space) as the program made them" \
    "$(sums "$WORK/delta")" "2 340000 0 200000"
want=$("$MEMSCRIBE" window --from end-2s --to end --format=json "$L" | jq -r '[.processes[] |
    [.aifi + .aifo, .aifi_bytes + .aifo_bytes, .aifo - .aofi, .aifo_bytes - .aofi_bytes]] |
    transpose | map(add) | "\(.[0]) \(.[1]) \(.[2]) \(.[3])"')
expect "the last 2 s against window --from end-2s --to end" "$(sums "$WORK/delta")" "$want"
grep -q 'memscribe: the window .* of the trace: alloc_\* allocated inside it' "$WORK/delta" ||
    fail "the delta's comment: $(grep -m1 'memscribe' "$WORK/delta")"
echo "ok: ?seconds=2 is the trace's last 2 s, as window counts them"
echo "ok: the pprof paths"
