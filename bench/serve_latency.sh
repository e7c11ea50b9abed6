#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# memscribe serve on a trace (bench/notes/serve.md, "serve"): the first view
# (the queries the page makes when it opens: status, then timeline and
# report at once, then leaks), a window query, a moment's leaks query, and the same window asked
# again (kept: the trace did not change); when the server's check of the
# trace's index (report --verify, the page's first query; docs/serve.md
# "Scale") has passed, counted from the server's start, and then from the
# index a moment's leaks (two
# moments not asked before), a window of 1/100 of the run and the first
# window again (moved by 1 ns); the server's own peak RSS and the
# peak RSS of the command a query runs (measured alone with GNU time);
# medians of RUNS fresh servers. With STORM (bench_storm), also the trace's
# size recorded with --live (flushed every 250 ms) and without.
#
# usage: bench/serve_latency.sh MEMSCRIBE TRACE [RUNS [STORM]]
set -euo pipefail
BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
MS=$1
TRACE=$2
RUNS=${3:-3}
STORM=${4:-}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/serve-bench.XXXXXX")
SERVER=""
trap '[ -z "$SERVER" ] || kill "$SERVER" 2>/dev/null; rm -rf "$WORK"' EXIT

ms_now() { date +%s%3N; }
get() { curl -s -o /dev/null -w '%{http_code}' "$BASE/api/$1?token=$TOKEN&$2"; }
# usage: timed VAR QUERY ARGS: get QUERY ARGS, its time in ms added to the list in VAR.
timed() {
    local s
    s=$(ms_now)
    get "$2" "$3" >/dev/null
    printf -v "$1" '%s %d' "${!1}" $(($(ms_now) - s))
}

load0=$(cut -d' ' -f1-3 /proc/loadavg)
end_ns=$("$MS" report --format=json "$TRACE" 2>/dev/null |
    awk -F'[:,]' '/"last_ns"/ { v = $2 + 0; if (v > m) m = v } END { printf "%.0f\n", m }')
first="" check="" window="" leaks="" again="" rss="" ready="" indexed="" narrow="" wide=""
for ((i = 0; i < RUNS; i++)); do
    rm -f "$WORK/url"
    "$MS" serve --url-file "$WORK/url" "$TRACE" >/dev/null 2>&1 &
    SERVER=$!
    for _ in $(seq 200); do [ -s "$WORK/url" ] && break; sleep 0.05; done
    URL=$(cat "$WORK/url")
    BASE=${URL%%/\?*}
    TOKEN=${URL##*token=}
    t0=$(ms_now)
    # As the page asks them: the charts (the span from the status) with
    # report, the live blocks once report (which checks the index) is done;
    # a trace with chunk totals (format 1.10), all three from them (index=1).
    ix=""
    curl -s "$BASE/api/status?token=$TOKEN" | grep -q '"totals": true' && ix="&index=1"
    if [ -n "$ix" ]; then
        get timeline "sites=8$ix" >/dev/null &
    else
        get timeline "interval=$((end_ns / 400 + 1000))ns&sites=8" >/dev/null &
    fi
    charts=$!
    get report "top=20$ix" >/dev/null
    get leaks "top=20$ix" >/dev/null
    wait "$charts"
    t1=$(ms_now)
    # The page's check of a first view from the totals: report replayed.
    [ -z "$ix" ] || get report "top=20" >/dev/null
    t1c=$(ms_now)
    first+=" $((t1 - t0))" check+=" $((t1c - t1))"
    timed window window "from=$((end_ns / 4))ns&to=$((end_ns * 3 / 5))ns&top=20"
    timed leaks leaks "at=$((end_ns / 2))ns&top=20"
    timed again window "from=$((end_ns / 4))ns&to=$((end_ns * 3 / 5))ns&top=20"
    for _ in $(seq 1200); do
        curl -s "$BASE/api/status?token=$TOKEN" | grep -q '"index": true' && break
        sleep 0.1
    done
    t5=$(ms_now)
    get leaks "at=$((end_ns / 3))ns&top=20" >/dev/null
    get leaks "at=$((end_ns * 2 / 3))ns&top=20" >/dev/null
    t6=$(ms_now)
    ready+=" $((t5 - t0))" indexed+=" $(((t6 - t5) / 2))"
    # A window of 1/100 of the run, then the first window's span moved by 1 ns.
    timed narrow window "from=$((end_ns * 7 / 10))ns&to=$((end_ns * 71 / 100))ns&top=20"
    timed wide window "from=$((end_ns / 4 + 1))ns&to=$((end_ns * 3 / 5 + 1))ns&top=20"
    rss+=" $(awk '/VmHWM/ { print $2 }' "/proc/$SERVER/status")"
    kill "$SERVER"
    wait "$SERVER" 2>/dev/null || true
    SERVER=""
done
/usr/bin/time -f '%M' -o "$WORK/rss" "$MS" report --format=json --top 20 "$TRACE" >/dev/null 2>&1
echo "serve on $TRACE ($(stat -c %s "$TRACE") bytes); load before: $load0; after: $(cut -d' ' -f1-3 /proc/loadavg); runs $RUNS"
awk -f "$BENCH_DIR/median.awk" -f /dev/stdin <<AWK
BEGIN {
    printf "| | median | runs |\n|---|---:|---|\n"
    printf "| first view (status, timeline with report, leaks), ms | %d |%s |\n", median("$first"), "$first"
    if ("$check" !~ /^ *(0 *)*$/)
        printf "| its check (report replayed, a trace with totals), ms | %d |%s |\n", median("$check"), "$check"
    printf "| a window, ms | %d |%s |\n", median("$window"), "$window"
    printf "| live at a moment, ms | %d |%s |\n", median("$leaks"), "$leaks"
    printf "| the same window again (kept), ms | %d |%s |\n", median("$again"), "$again"
    printf "| the index checked (from the server's start), ms | %d |%s |\n", median("$ready"), "$ready"
    printf "| live at a moment from the index, ms | %d |%s |\n", median("$indexed"), "$indexed"
    printf "| a window of 1/100 of the run from the index, ms | %d |%s |\n", median("$narrow"), "$narrow"
    printf "| the first window (35 %% of the run) from the index, ms | %d |%s |\n", median("$wide"), "$wide"
    printf "| the server's peak RSS, KiB | %d |%s |\n", median("$rss"), "$rss"
    printf "| report's peak RSS (a query's process), KiB | %d | |\n", $(cat "$WORK/rss")
}
AWK
if [ -n "$STORM" ]; then
    for mode in plain live; do
        flag=()
        [ "$mode" = live ] && flag=(--live)
        "$MS" record -q "${flag[@]}" -o "$WORK/$mode.mscr" -- "$STORM" 1 20000000 >/dev/null 2>&1
        echo "bench_storm 1 20000000, $mode: $(stat -c %s "$WORK/$mode.mscr") bytes"
    done
fi
