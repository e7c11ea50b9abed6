#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Pools of the program's own (memscribe/annotate.h): tests/programs/col_pool.c
# (two pools, "nodes" carved from a malloc'd arena whose address its first
# node shares, "strings" destroyed with blocks in it) and col_pool_cxx.cc (a
# class's operator new/delete on a pool "Node") print the same traced and
# untraced, and the trace holds each pool as a heap with exactly the
# program's numbers: dump, report (text and JSON; the pools' calls apart from
# malloc's), leaks, window --by heap;
# with memscribe record and without the wrapper (LD_PRELOAD); timeline, html
# and every export read the trace.
source "$(dirname "$0")/record_lib.sh"

COL=$MS_BUILD/lib/memscribe/libmemscribe.so

# Run PROGRAM untraced and under record into $WORK/NAME.mscr: same stdout.
run_both() {
    local prog=$1 name=$2
    "$MS_PROGRAMS/$prog" >"$WORK/$name.plain" || fail "$prog untraced exited with $?"
    "$MEMSCRIBE" record -q -o "$WORK/$name.mscr" -- "$MS_PROGRAMS/$prog" >"$WORK/$name.out" ||
        fail "record of $prog exited with $?"
    cmp -s "$WORK/$name.plain" "$WORK/$name.out" ||
        fail "$prog printed '$(cat "$WORK/$name.out")' traced, '$(cat "$WORK/$name.plain")' untraced"
    ms_dump_ok "$WORK/$name.mscr"
}

# 1. C: the pools' events, exactly.
run_both col_pool c
"$MEMSCRIBE" dump --header "$WORK/c.mscr" >"$WORK/c.dump"
[ "$(grep -c ' malloc .*pool=' "$WORK/c.dump")" = 15 ] || fail "not 15 pool mallocs"
[ "$(grep -c ' free .*pool=' "$WORK/c.dump")" = 9 ] || fail "not 9 pool frees"
[ "$(grep -c ' free .*heap-destroyed' "$WORK/c.dump")" = 3 ] || fail "not 3 frees by the destroy"
[ "$(grep -c ' realloc .*pool=' "$WORK/c.dump")" = 1 ] || fail "not 1 pool realloc"
grep -q '^# pool image=0 pool=0x[0-9a-f]* name="nodes"$' "$WORK/c.dump" || fail "no pool nodes in the header"
grep -q '^# pool image=0 pool=0x[0-9a-f]* name="strings"$' "$WORK/c.dump" || fail "no pool strings"
# The first node has the arena's address, and each is its own block: the
# node's free ends the node (48 bytes), the arena's free the arena.
arena=$(awk '$5 == "malloc" && $7 == "size=65536" { sub("addr=", "", $6); print $6 }' "$WORK/c.dump")
[ -n "$arena" ] || fail "no arena of 65536 bytes"
grep -q " malloc addr=$arena size=48 pool=" "$WORK/c.dump" || fail "no node at the arena's address $arena"
grep -q " free addr=$arena size=48 pool=" "$WORK/c.dump" || fail "the node's free does not end the node"
grep -q " free addr=$arena size=65536 stack=" "$WORK/c.dump" || fail "the arena's free does not end the arena"

# 2. report: each heap's numbers.
"$MEMSCRIBE" report "$WORK/c.mscr" >"$WORK/c.report" || fail "report exited with $?"
sed -n 's/ at [0-9.]*s,/ at T,/; s/^    \(malloc\|nodes\|strings\): /\1: /p' "$WORK/c.report" >"$WORK/have"
cat >"$WORK/want" <<'END'
malloc: 2 allocations (69632 bytes), peak 69632 bytes (68.00 KiB) in 2 blocks at T, leaked 0 bytes (0 B) in 0 blocks, 0 temporary
nodes: 12 allocations (576 bytes), peak 480 bytes (480 B) in 10 blocks at T, leaked 288 bytes (288 B) in 6 blocks, 0 temporary
strings: 4 allocations (1000 bytes), peak 700 bytes (700 B) in 3 blocks at T, leaked 0 bytes (0 B) in 0 blocks, 1 temporary
END
diff -u "$WORK/want" "$WORK/have" >"$WORK/diff" || fail "report's heaps differ: $(cat "$WORK/diff")"
"$MEMSCRIBE" report --format json "$WORK/c.mscr" >"$WORK/c.json" || fail "report --format json failed"
python3 - "$WORK/c.json" <<'END' || fail "report's JSON heaps differ"
import json, sys
p = json.load(open(sys.argv[1]))["processes"][0]
h = {x["name"]: x for x in p["heaps"]}
assert sorted(h) == ["malloc", "nodes", "strings"], sorted(h)
assert (h["nodes"]["allocations"], h["nodes"]["leaked_bytes"], h["nodes"]["leaked_blocks"]) == (12, 288, 6)
assert (h["strings"]["freed_by_destroy"], h["strings"]["peak_bytes"]) == (3, 700)
assert (h["malloc"]["pool"], h["nodes"]["pool"]) == (False, True)
# Calls: malloc's are the two arenas'; the pools' are counted apart (a pool
# block is announced, not a malloc call), and the destroy's frees are none.
want = {"malloc": 2, "free": 2, "pool_create": 2, "pool_destroy": 1, "pool_alloc": 15,
        "pool_realloc": 1, "pool_free": 6}
assert p["calls"] == want, p["calls"]
END
grep -q '^  calls:              malloc 2, free 2, pool_create 2, pool_destroy 1, pool_alloc 15, pool_realloc 1, pool_free 6$' \
    "$WORK/c.report" || fail "report's calls: $(grep calls: "$WORK/c.report")"

# 3. leaks: the nodes pool's, and nothing of malloc's.
"$MEMSCRIBE" leaks "$WORK/c.mscr" >"$WORK/c.leaks" || fail "leaks exited with $?"
grep -q '^pid [0-9]* col_pool: 288 bytes in 6 blocks$' "$WORK/c.leaks" || fail "leaks: $(cat "$WORK/c.leaks")"
grep -q '^  by heap: nodes 288 bytes in 6 blocks$' "$WORK/c.leaks" || fail "leaks by heap: $(cat "$WORK/c.leaks")"

# 4. window --by heap: a row per heap and impacting type.
"$MEMSCRIBE" window --by heap "$WORK/c.mscr" >"$WORK/c.window" || fail "window exited with $?"
awk '$1 ~ /^[0-9]+$/ { $1 = "PID"; print }' "$WORK/c.window" | sort >"$WORK/have"
sort >"$WORK/want" <<'END'
PID Impacting 6 288 288 nodes
PID Transient 2 69632 0 malloc
PID Transient 4 1000 0 strings
PID Transient 6 288 0 nodes
END
diff -u "$WORK/want" "$WORK/have" >"$WORK/diff" || fail "window --by heap differs: $(cat "$WORK/diff")"

# 5. Every other reader of the trace reads it.
"$MEMSCRIBE" timeline "$WORK/c.mscr" >/dev/null || fail "timeline failed"
"$MEMSCRIBE" html -o "$WORK/c.html" "$WORK/c.mscr" || fail "html failed"
for f in massif heaptrack dhat pprof folded sqlite csv; do
    "$MEMSCRIBE" export --to "$f" -o "$WORK/c.$f" "$WORK/c.mscr" || fail "export --to $f failed"
done
# pprof labels each pool's samples "heap" with the pool's name: the in-use
# space at the end is the nodes pool's 288 bytes (go tool pprof -tags).
if command -v go >/dev/null; then
    (
        export HOME=$WORK GOCACHE=$WORK/gocache GOFLAGS=-mod=mod GOTOOLCHAIN=local
        go tool pprof -tags -sample_index=inuse_space "$WORK/c.pprof" >"$WORK/tags" 2>"$WORK/tags.err"
    ) || fail "go tool pprof -tags failed: $(cat "$WORK/tags.err")"
    grep -q '^ *288\.0B (  100%): nodes$' "$WORK/tags" || fail "pprof heap labels: $(cat "$WORK/tags")"
fi

# 6. C++: a class's pool.
run_both col_pool_cxx cxx
"$MEMSCRIBE" leaks "$WORK/cxx.mscr" >"$WORK/cxx.leaks" || fail "leaks exited with $?"
grep -q '^  by heap: .*Node 96 bytes in 3 blocks$' "$WORK/cxx.leaks" || fail "C++ leaks: $(cat "$WORK/cxx.leaks")"
"$MEMSCRIBE" report "$WORK/cxx.mscr" >"$WORK/cxx.report" || fail "report exited with $?"
grep -q '^    Node: 5 allocations (160 bytes), peak 160 bytes (160 B) in 5 blocks at [0-9.]*s, leaked 96 bytes (96 B) in 3 blocks, 0 temporary$' \
    "$WORK/cxx.report" || fail "C++ report: $(grep -A4 heaps "$WORK/cxx.report")"

# 7. Without the wrapper: the collector's own recorder, the same pools.
env LD_PRELOAD="$COL" MEMSCRIBE_OUTPUT="$WORK/n.mscr" "$MS_PROGRAMS/col_pool" >"$WORK/n.out" ||
    fail "col_pool under LD_PRELOAD exited with $?"
cmp -s "$WORK/c.plain" "$WORK/n.out" || fail "col_pool under LD_PRELOAD printed $(cat "$WORK/n.out")"
for _ in $(seq 1 600); do
    "$MEMSCRIBE" leaks "$WORK/n.mscr" >"$WORK/n.leaks" 2>"$WORK/n.err" && [ ! -s "$WORK/n.err" ] && break
    sleep 0.1
done
grep -q '^  by heap: nodes 288 bytes in 6 blocks$' "$WORK/n.leaks" || fail "no-wrapper leaks: $(cat "$WORK/n.leaks" "$WORK/n.err")"
echo "ok: pools in C and C++, recorded and preloaded: dump, report, leaks, window --by heap"
