#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# pprof export read by `go tool pprof -top` (a strict profile.proto parser):
# the four sample types add up to memscribe's numbers.
source "$(dirname "$0")/export_lib.sh"
need go
export HOME=$T GOCACHE=$T/gocache GOFLAGS=-mod=mod GOTOOLCHAIN=local

# "Total samples = N" of one sample type (-unit=B: no kB or MB rounding).
total() { # profile sample-type
    go tool pprof -top -unit=B -sample_index="$2" "$1" >"$T/pp.out" 2>"$T/pp.err" ||
        fail "go tool pprof failed on $1: $(cat "$T/pp.err")"
    grep -v "^Main binary filename not available.$" "$T/pp.err" | grep -q . &&
        fail "go tool pprof complained: $(cat "$T/pp.err")"
    sed -n 's/.*Total samples = \([0-9]*\)B* *$/\1/p' "$T/pp.out"
}

syn=$(synth)
"$M" export --to pprof "$syn" -o "$T/syn.pb.gz"
expect_eq alloc_objects "$(total "$T/syn.pb.gz" alloc_objects)" 9
expect_eq alloc_space "$(total "$T/syn.pb.gz" alloc_space)" 2296
expect_eq inuse_objects "$(total "$T/syn.pb.gz" inuse_objects)" 2
expect_eq inuse_space "$(total "$T/syn.pb.gz" inuse_space)" 182
grep -q "Type: inuse_space" "$T/pp.out" || fail "default sample type"
grep -q " 150B 82.42% 82.42% *150B 82.42%  0x1100$" "$T/pp.out" || fail "top row: $(cat "$T/pp.out")"

recorded
"$M" export --to pprof "$T/prog.mscr" -o "$T/prog.pb.gz"
expect_eq alloc_objects "$(total "$T/prog.pb.gz" alloc_objects)" "$REPORT_ALLOCS"
expect_eq alloc_space "$(total "$T/prog.pb.gz" alloc_space)" "$REPORT_BYTES"
expect_eq inuse_objects "$(total "$T/prog.pb.gz" inuse_objects)" "$REPORT_LEAKED_BLOCKS"
expect_eq inuse_space "$(total "$T/prog.pb.gz" inuse_space)" "$REPORT_LEAKED"
grep -q "File: export_prog" "$T/pp.out" || fail "no main mapping"
grep -q " churn$" <(go tool pprof -top -sample_index=alloc_objects "$T/prog.pb.gz" 2>/dev/null) ||
    fail "no churn function"
echo "export_pprof: ok"
