#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Labels that say what the numbers are (issue 40, item 6): flamegraph
# --help defines temporary by the rule its numbers use; histogram's bars
# (text) and plot histogram's axes say they are log-scaled; vmem and frag
# print times in seconds, as every other command; report's run time says
# when the process ran, on the clock of its "peak ... at" (a process
# started late peaked after its run time); window --tree lists no node of
# stacks with nothing in the window. Needs MEMSCRIBE, MS_BUILD, MS_SOURCE.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" --go-on ana-labels MEMSCRIBE MS_BUILD MS_SOURCE
G=$MS_SOURCE/tests/golden

# flamegraph --help: temporary is heaptrack's rule, nothing else by the
# thread in between (not "before the thread allocated again").
"$MEMSCRIBE" flamegraph --help >"$WORK/fg.help"
grep -q "allocated again" "$WORK/fg.help" && fail "flamegraph --help: the loose rule: $(grep -A1 temporary "$WORK/fg.help")"
tr -s ' \n' ' ' <"$WORK/fg.help" | grep -q "freed before their thread allocated or freed anything else" ||
    fail "flamegraph --help does not define temporary by the strict rule"

# histogram: the bars are log2(count) + 1 '#'.
"$MEMSCRIBE" histogram "$G/v1_5.mscr" >"$WORK/hist" 2>/dev/null || fail "histogram exited with $?"
grep -q "^bars: log scale" "$WORK/hist" || fail "histogram does not say its bars are log-scaled: $(head -3 "$WORK/hist")"
"$MEMSCRIBE" plot histogram "$G/v1_5.mscr" -o "$WORK/hist.svg" 2>/dev/null || fail "plot histogram exited with $?"
[ "$(grep -c 'log scale</text>' "$WORK/hist.svg")" = 3 ] || fail "plot histogram: not three axes saying 'log scale'"

# vmem and frag: times in seconds (0.000096s), not ns (96000).
sec='[0-9]+\.[0-9]{6}s'
"$MEMSCRIBE" vmem "$G/v1_5.mscr" >"$WORK/vmem" 2>/dev/null || fail "vmem exited with $?"
grep -q "times in ns" "$WORK/vmem" && fail "vmem: $(head -1 "$WORK/vmem")"
awk '/^lifetimes/ { on = 1; next } on && /^  [0-9]/ { print $3, $4 } /^$/ { on = 0 }' "$WORK/vmem" >"$WORK/vmem.times"
[ -s "$WORK/vmem.times" ] || fail "vmem: no lifetimes read"
grep -Evq "^$sec ($sec|-)$" "$WORK/vmem.times" && fail "vmem: commit and decommit not in seconds: $(head -2 "$WORK/vmem.times")"
awk '/^totals over time/ { on = 1; next } on && /^  [0-9]/ { print $2 }' "$WORK/vmem" >"$WORK/vmem.t"
[ -s "$WORK/vmem.t" ] && ! grep -Evq "^$sec$" "$WORK/vmem.t" || fail "vmem: totals' times not in seconds"
"$MEMSCRIBE" vmem --format=json "$G/v1_5.mscr" 2>/dev/null | jq -e '.lifetimes[0].commit_ns | type == "number"' >/dev/null ||
    fail "vmem JSON: commit_ns is not a number of ns"
"$MEMSCRIBE" frag "$G/v1_5.mscr" >"$WORK/frag" 2>/dev/null || fail "frag exited with $?"
grep -q "times in ns" "$WORK/frag" && fail "frag: $(head -1 "$WORK/frag")"
awk '/largest free gap over time/ { on = 1; getline; next } on && NF == 0 { on = 0 } on { print $1 }' "$WORK/frag" >"$WORK/frag.t"
[ -s "$WORK/frag.t" ] && ! grep -Evq "^$sec$" "$WORK/frag.t" || fail "frag: times over time not in seconds: $(head -2 "$WORK/frag.t")"

# report: run time with its span; every process's peak lies in it. The
# pipeline's programs start 0.1 s into the trace and run for less.
"$MEMSCRIBE" record -q -o "$WORK/pipe.mscr" -- sh -c 'sleep 0.1; ls / | sort | wc -l' >/dev/null ||
    fail "record the pipeline: exit $?"
"$MEMSCRIBE" report "$WORK/pipe.mscr" >"$WORK/pipe.report" || fail "report exited with $?"
awk -v sec='^[0-9]+[.][0-9]+s$' '
    /^  run time:/ { ran = $3; from = $4; to = $6; sub(/^\(/, "", from)
        if (from !~ sec || to !~ sec) { print "no span on: " $0; bad = 1 } }
    /^  peak heap in use:/ && from ~ sec { at = $NF; n++
        if (at + 0 < from + 0 || at + 0 > to + 0) { print "peak at " at " outside " from " to " to; bad = 1 } }
    END { if (!n) { print "no process with a span"; bad = 1 } exit bad }' "$WORK/pipe.report" >"$WORK/span" ||
    fail "report: $(cat "$WORK/span")"

# window --tree: a stack whose blocks were all allocated before the window
# and outlive it has no row and no node (the demo's start-up blocks).
# The window runs from the demo's second 10 MB allocation to its fourth (spikes
# and leaked nodes in it), found in the trace: fixed times fell before the first
# spike or after the last when a loaded machine slowed the start.
"$MEMSCRIBE" record -q -o "$WORK/demo.mscr" -- "$MS_BUILD/examples/memtest_demo" >/dev/null || fail "record demo: exit $?"
read -r wfrom wto < <("$MEMSCRIBE" dump "$WORK/demo.mscr" 2>/dev/null |
    awk '$5 == "malloc" && / size=10000000 / { t[++n] = $1 } END { print t[2], t[4] }')
[ -n "${wto:-}" ] || fail "the demo's trace has fewer than four 10 MB allocations"
"$MEMSCRIBE" window --tree --top 0 --from "${wfrom}s" --to "${wto}s" "$WORK/demo.mscr" >"$WORK/wtree" 2>/dev/null ||
    fail "window --tree exited with $?"
awk '/^impacting size/ { on = 1; next } on && $1 == 0 && $2 == 0 && $3 == 0 && $4 == 0 && $5 == 0 { print; n++ }
    END { exit n > 0 }' "$WORK/wtree" >"$WORK/zero" || fail "window --tree: all-zero nodes: $(head -3 "$WORK/zero")"
# Its nodes: main and the two calls that allocate in the window.
expect "window --tree's nodes" \
    "$(awk '/^impacting size/ { on = 1; next } on { sub(/^ *[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +/, ""); print }' "$WORK/wtree" | sort | tr '\n' ';')" \
    "(anonymous namespace)::InnerLoopOperation();(anonymous namespace)::TransientSpike();main;"
finish "ok: flamegraph --help, histogram, plot histogram, vmem, frag, report's run time and window --tree say what they show"
