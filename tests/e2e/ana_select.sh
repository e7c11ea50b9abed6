#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Selections and times that miss the trace are said, not answered with
# nothing (tests/programs/ana_heapcheck.c): --pid or --thread that match no
# process or thread exit 1 in every command that takes them; a time past
# the end is used as the end with a warning; frag and vmem take peak, the
# same moment as report's peak. Needs MEMSCRIBE, MS_PROGRAMS.
# shellcheck source=tests/e2e/ana_lib.sh
source "$(dirname "$0")/ana_lib.sh"
record ana_heapcheck
T=$WORK/t.mscr
"$MEMSCRIBE" report --format=json "$T" >"$WORK/r.json"
pid=$(jq '.processes[0].pid' "$WORK/r.json")
peak_ns=$(jq '.processes[0].peak_ns' "$WORK/r.json")
end_ns=$(jq '.at_ns' <("$MEMSCRIBE" leaks --format=json "$T"))
# No pid or tid of this run is 4 million and 1 (pid_max is at most 4 Mi).
none=4194305

for c in report leaks window timeline histogram tree frag vmem "flamegraph --folded" \
    "plot timeline -o $WORK/p.svg" "html -o $WORK/p.html"; do
    read -ra cmd <<<"$c"
    run 1 "${cmd[@]}" --pid "$none" "$T"
    grep -q "t.mscr: no process of --pid is in the trace" "$WORK/err" ||
        fail "$c --pid $none: $(cat "$WORK/err")"
    run 1 "${cmd[@]}" --thread "$none" "$T"
    grep -q "t.mscr: no thread of --thread is in the trace" "$WORK/err" ||
        fail "$c --thread $none: $(cat "$WORK/err")"
    # The main thread's tid is the pid: a thread of another process is none.
    run 0 "${cmd[@]}" --thread "$pid" "$T"
    run 1 "${cmd[@]}" --pid "$none,$((pid + 1))" --thread "$pid" "$T"
    echo "ok: $c: a selection of nothing exits 1"
done
run 1 report --pid "$pid" --thread "$none" "$T"
grep -q "no thread of --thread is in the trace (in the processes of --pid)" "$WORK/err" ||
    fail "--pid with a foreign --thread: $(cat "$WORK/err")"

# A time past the end: the end, said on stderr.
run 0 leaks --at 1000s --format=json "$T"
expect "leaks --at 1000s: the end" "$(jq .at_ns "$WORK/out")" "$end_ns"
grep -q "leaks: --at is past the end of the trace" "$WORK/err" ||
    fail "leaks --at 1000s: no warning: $(cat "$WORK/err")"
run 0 window --from end-1000s --to 1000s --format=json "$T"
grep -q "window: --from is before the start of the trace" "$WORK/err" ||
    fail "window --from end-1000s: no warning: $(cat "$WORK/err")"
grep -q "window: --to is past the end of the trace" "$WORK/err" ||
    fail "window --to 1000s: no warning: $(cat "$WORK/err")"
run 0 leaks --at end --format=json "$T"
[ ! -s "$WORK/err" ] || fail "leaks --at end warned: $(cat "$WORK/err")"

# frag and vmem take peak: report's peak moment.
run 0 frag --at peak --format=json "$T"
expect "frag --at peak" "$(jq .at_ns "$WORK/out")" "$peak_ns"
run 0 vmem --to peak --format=json "$T"
expect "vmem --to peak" "$(jq .to_ns "$WORK/out")" "$peak_ns"
run 0 vmem --from peak --format=json "$T"
expect "vmem --from peak" "$(jq .from_ns "$WORK/out")" "$peak_ns"
echo "PASS"
