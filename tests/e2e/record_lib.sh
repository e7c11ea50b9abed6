# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# Shared by the record_*.sh tests: run `memscribe record`, pick events out
# of `memscribe dump`, compare them with what a test program expected.
# Needs MEMSCRIBE, MS_PROGRAMS (set by ctest, tests/CMakeLists.txt).
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" record MEMSCRIBE MS_PROGRAMS

# usage: heap_totals FROM KINDS FILE: from report's JSON in FILE, each
# process's heap totals as one sorted JSON list, to compare a sampled trace's
# counted totals with an unsampled trace's: FROM is "." (what the events
# give) or ".exact" (what the counters give); KINDS, a JSON list of call
# names, keeps those calls ("" keeps every call, "[]" none).
heap_totals() {
    jq -S --argjson k "${2:-null}" "[.processes[] | $1 | {calls: (.calls |
        if \$k then with_entries(select(.key as \$n | \$k | index(\$n))) else . end),
        allocations, allocated_bytes, frees, temporary, temporary_bytes}]" "$3"
}

# Heap and virtual-memory events of one pid, as "KIND key=value..." with the
# time, pid, tid, serial, stack and ends fields taken off.
# usage: ms_calls TRACE PID
ms_calls() {
    "$MEMSCRIBE" dump "$1" | awk -v pid="$2" '
        $1 ~ /^#/ { next }
        $2 != pid { next }
        $5 ~ /^(malloc|calloc|realloc|reallocarray|free|memalign|posix_memalign|aligned_alloc|valloc|pvalloc|mmap|munmap|mremap|mprotect|brk|sbrk)$/ {
            out = $5
            for (i = 6; i <= NF; i++)
                if ($i !~ /^(stack|ends)=/) out = out " " $i
            print out
        }'
}

# The calls between the marker blocks (malloc+free of 99901 and the
# malloc of 99902), from ms_calls output on stdin.
ms_between_marks() {
    awk '
        /^malloc .* size=99901$/ { state = 1; next }
        state == 1 && /^free / { state = 2; next }
        state == 2 && /^malloc .* size=99902$/ { state = 3; next }
        state == 2 { print }'
}

# Compare expected lines with actual ones: same count, same kind, and each
# line the same tokens, where an expected "k=v" also matches "k=v(...)".
# usage: ms_compare EXPECTED ACTUAL
ms_compare() {
    awk '
        NR == FNR { want[++ne] = $0; next }
        { act[++na] = $0 }
        END {
            bad = 0
            if (ne != na) { printf "expected %d events, the trace has %d\n", ne, na; bad = 1 }
            n = ne < na ? ne : na
            for (i = 1; i <= n; i++) {
                ke = split(want[i], w, " "); ka = split(act[i], a, " ")
                ok = ke == ka
                for (j = 1; ok && j <= ke; j++)
                    if (a[j] != w[j] && index(a[j], w[j] "(") != 1) ok = 0
                if (!ok) { printf "event %d\n  expected: %s\n  in trace: %s\n", i, want[i], act[i]; bad = 1 }
            }
            exit bad
        }' "$1" "$2" || fail "the trace does not hold the expected calls (above)"
}

# The dump must read the whole trace without complaint.
ms_dump_ok() {
    "$MEMSCRIBE" dump "$1" >"$WORK/dump.txt" 2>"$WORK/dump.err" ||
        fail "dump of $1 failed: $(cat "$WORK/dump.err")"
}

# Record tests/programs/PROGRAM (it prints the calls it makes between its
# marker blocks) into $WORK/t.mscr and check the trace holds exactly those
# calls of its first process. Leaves $WORK/calls (all of them) and
# $WORK/dump.txt. usage: ms_record_marked PROGRAM
ms_record_marked() {
    "$MEMSCRIBE" record -q -o "$WORK/t.mscr" -- "$MS_PROGRAMS/$1" >"$WORK/expected" ||
        fail "record exited with $?"
    ms_dump_ok "$WORK/t.mscr"
    local pid
    pid=$(awk '$5 == "process_start" { print $2; exit }' "$WORK/dump.txt")
    ms_calls "$WORK/t.mscr" "$pid" >"$WORK/calls"
    ms_between_marks <"$WORK/calls" >"$WORK/actual"
    ms_compare "$WORK/expected" "$WORK/actual"
}

# Wait (60 s at most) until file $1 exists.
wait_file() {
    for _ in $(seq 1 3000); do
        [ -e "$1" ] && return 0
        sleep 0.02
    done
    fail "$1 did not appear within 60 s"
}
# Wait (30 s at most) until file $1 has a line matching $2 (grep -E).
wait_line() {
    for _ in $(seq 1 1500); do
        grep -Eq "$2" "$1" 2>/dev/null && return 0
        sleep 0.02
    done
    fail "no '$2' in $1 within 30 s: $(cat "$1")"
}
# The recorder finishes the file after the program: wait until it reads
# complete (dump says "incomplete" until then).
ms_wait_trace() {
    for _ in $(seq 1 600); do
        if "$MEMSCRIBE" dump "$1" >"$WORK/dump.txt" 2>"$WORK/dump.err" && [ ! -s "$WORK/dump.err" ]; then
            return 0
        fi
        sleep 0.1
    done
    fail "$1 was not finished within 60 s: $(cat "$WORK/dump.err")"
}

# record -p with tests/programs/rec_attach_target (its rounds: DIR/go.N,
# DIR/done.N). Start PROGRAM (default rec_attach_target) in directory $1
# for $2 rounds; sets $target. usage: ms_attach_target DIR ROUNDS [PROGRAM]
ms_attach_target() {
    mkdir -p "$1"
    "${3:-$MS_PROGRAMS/rec_attach_target}" "$1" "$2" >"$1/out" 2>&1 &
    target=$!
    wait_file "$1/ready.0"
}
# Attach to $target for round $2 into trace $1: attach, wait for the
# announcement, release the round, wait for it, detach by SIGINT (Ctrl-C).
# Not by --duration: a round that had not ended when it ran out (an
# emulated machine under load) was cut. usage: ms_attach_round TRACE ROUND DIR
ms_attach_round() {
    local dir=$3
    "$MEMSCRIBE" record -p "$target" -o "$1" 2>"$1.err" &
    local rec=$!
    wait_line "$1.err" "attached to process $target"
    touch "$dir/go.$2"
    wait_file "$dir/done.$2"
    kill -INT "$rec"
    local rc=0
    wait "$rec" || rc=$?
    [ "$rc" = 0 ] || fail "record -p exited with $rc: $(cat "$1.err")"
    grep -q "detached from process $target" "$1.err" || fail "no detach: $(cat "$1.err")"
}
# Heap calls of a trace as "kind size count" lines, sorted; frees are
# "free known" if the trace knows the block, "free unknown", "free null".
ms_heap_calls() {
    "$MEMSCRIBE" dump "$1" | awk '
        $5 == "free" { print "free " ($6 == "addr=0x0" ? "null" : $0 ~ / size=/ ? "known" : "unknown"); next }
        $5 == "realloc" { print "realloc " ($7 ~ /^size=/ ? $7 : $8) ; next }
        $5 ~ /^(malloc|calloc|memalign|posix_memalign|aligned_alloc|valloc|pvalloc|reallocarray)$/ {
            for (i = 6; i <= NF; i++) if ($i ~ /^size=/) print $5 " " $i
        }' | sort | uniq -c | awk '{ print $2, $3, $1 }'
}

# The system calls docs/record-collector.md's table "System calls the collector
# makes" names in its first column, one a line (tests/programs/col_seccomp
# allows them by name).
ms_doc_calls() {
    awk '/^### System calls the collector makes/ { on = 1; next }
        on && /^#/ { exit }
        on && /^\| `/ {
            gsub(/\\\|/, "")
            split($0, cell, "|")
            s = cell[2]
            while (match(s, /`[a-z0-9_]+`/)) {
                print substr(s, RSTART + 1, RLENGTH - 2)
                s = substr(s, RSTART + RLENGTH)
            }
        }' "$MS_SOURCE/docs/record-collector.md" | sort -u
}

# Heap calls of the sizes matching $2 (an awk regex: "200[1-3]"), as
# "kind size=N count;" sorted, on one line. usage: ms_heap_by_size TRACE RE
ms_heap_by_size() {
    "$MEMSCRIBE" dump "$1" | awk -v re="^size=($2)\$" '
        $5 == "malloc" || $5 == "free" {
            for (i = 6; i <= NF; i++)
                if ($i ~ re) print $5, $i
        }' | sort | uniq -c | awk '{ print $2, $3, $1 }' | tr '\n' ';'
}
