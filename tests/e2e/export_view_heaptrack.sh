#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# heaptrack_gui opens memscribe's heaptrack export under Xvfb and draws what
# memscribe reports.
# 1. The Consumed chart, replayed from the file (tests/programs/
#    export_spikes: ten 8 MiB buffers, each temporary and live 60 ms):
#    heaptrack_gui samples the running sum of "+" and "-" at each "c" line
#    (parser.cpp, handleTimeStamp). Its maximum is `memscribe report`'s
#    peak to the byte: the export writes each line between the ticks
#    around its event and places a tick at the peak (issue 59: each "+" of
#    a temporary block went out just before its "-", and the chart topped
#    out under one buffer). The ten buffers are ten spikes: each lives
#    across ticks of the 10 ms period, not only the peak's. heaptrack's own
#    recording of the program, where heaptrack is installed, draws them too.
# 2. export_prog's file: heaptrack_gui does not crash (issue 46: it crashed
#    on every export, reading an allocation index it had not seen), and its
#    summary, read through the accessibility tree, shows the numbers of
#    `memscribe report --format=json` (calls, temporary, peak, leaked) and
#    the machine's memory. Screenshot: export_view_heaptrack.png.
# 3. export_spikes's file in heaptrack_gui: the pointer sweeps the Consumed
#    chart (tests/e2e/view_atspi_chart.py) and the status bar's "Consumed:"
#    values, as heaptrack_gui rounds them (one decimal of kB, MB: 0.05 MB
#    here), top out at the peak and show the ten spikes. Screenshot:
#    export_view_heaptrack_chart.png.
source "$(dirname "$0")/export_lib.sh"
# shellcheck source=tests/e2e/view_lib.sh
source "$(dirname "$0")/view_lib.sh"

SPIKE=$((8 << 20)) # export_spikes's buffers
NR_SPIKES=10

# usage: ht_chart FILE: heaptrack_gui's Consumed chart of a heaptrack data
# file (decompressed by its suffix, as heaptrack reads it): the running sum
# at each "c" line and at the end (its last sample), as "MAX SPIKES", spikes
# the runs of samples at $SPIKE bytes or more.
ht_chart() {
    case $1 in
    *.zst) zstd -dcq -- "$1" ;;
    *.gz) gzip -dc -- "$1" ;;
    *) cat -- "$1" ;;
    esac | awk -v spike="$SPIKE" '
        function hex(s, i, v) {
            v = 0; s = tolower(s)
            for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
            return v
        }
        function sample() {
            if (sum > max) max = sum
            if (sum >= spike && !high) spikes++
            high = sum >= spike
        }
        $1 == "a" { size[n++] = hex($2) }
        $1 == "+" { sum += size[hex($2)] }
        $1 == "-" { sum -= size[hex($2)] }
        $1 == "c" { sample() }
        END { sample(); printf "%d %d\n", max, spikes }'
}

# ---- 1. The chart, replayed. -------------------------------------------------
(cd "$T" && "$M" record -o "$T/spikes.mscr" -- "$MS_PROGRAMS/export_spikes" >/dev/null 2>"$T/record.err") ||
    fail "record export_spikes: $(cat "$T/record.err")"
"$M" report --format=json "$T/spikes.mscr" >"$T/spikes.json"
SPIKES_PEAK=$(jq '.processes[0].peak_bytes' "$T/spikes.json")
# One buffer and what libc and ld.so keep.
[ "$SPIKES_PEAK" -ge "$SPIKE" ] && [ "$SPIKES_PEAK" -lt $((SPIKE + (1 << 20))) ] ||
    fail "export_spikes: peak $SPIKES_PEAK, want one buffer of $SPIKE and less than 1 MiB more"
expect "export_spikes: temporary allocations" "$(jq '.processes[0].temporary' "$T/spikes.json")" "$NR_SPIKES"
for suffix in zst gz txt; do
    "$M" export --to heaptrack "$T/spikes.mscr" -o "$T/spikes.heaptrack.$suffix" 2>/dev/null
    expect "the chart of spikes.heaptrack.$suffix: its top, its spikes" \
        "$(ht_chart "$T/spikes.heaptrack.$suffix")" "$SPIKES_PEAK $NR_SPIKES"
done
# heaptrack's own file of the program: its chart's top is one buffer too,
# plus what heaptrack's own library keeps (libstdc++'s pool: its preload
# library is C++). Its spikes are counted by its timer thread's ticks,
# which a loaded machine can delay past a gap: said, not compared.
# (heaptrack opens heaptrack_gui on its file when done: with no display
# it cannot start.)
if command -v heaptrack >/dev/null; then
    env -u DISPLAY -u WAYLAND_DISPLAY QT_QPA_PLATFORM=xcb timeout -k 5 120 \
        heaptrack -o "$T/own" "$MS_PROGRAMS/export_spikes" >"$T/own.out" 2>&1 ||
        fail "heaptrack export_spikes: $(tail -5 "$T/own.out")"
    own=$(compgen -G "$T/own.*" | grep -v '\.out$' | head -n 1)
    [ -n "$own" ] || fail "heaptrack wrote no file: $(tail -5 "$T/own.out")"
    read -r own_max own_spikes < <(ht_chart "$own")
    [ "$own_max" -ge "$SPIKE" ] && [ "$own_max" -lt $((SPIKE + (1 << 20))) ] ||
        fail "heaptrack's own chart tops out at $own_max, not one buffer of $SPIKE (and less than 1 MiB)"
    echo "ok: heaptrack's own chart: top $own_max ($((own_max - SPIKES_PEAK)) more than memscribe's peak), $own_spikes spikes"
else
    echo "note: heaptrack is not installed: its own recording is not compared"
fi

# ---- 2. export_prog's summary. ----------------------------------------------
need_viewer heaptrack_gui heaptrack_gui
view_desktop
recorded
"$M" export --to heaptrack "$T/prog.mscr" -o "$T/prog.heaptrack.zst"
CHART=("$PY" "$MS_SOURCE/tests/e2e/view_atspi_chart.py" heaptrack_gui Consumed "heap memory consumption over time")
# The summary is there once the file is read (the labels' text, one widget
# per column of it), the charts once their tabs are enabled.
read=1
view_open heaptrack_gui "Heaptrack - prog.heaptrack.zst" "total memory leaked:" \
    heaptrack_gui "$T/prog.heaptrack.zst" || read=0
view_alive heaptrack_gui
if [ "$read" = 1 ]; then
    "${CHART[@]}" "$T/prog.chart" 0 2>"$T/chart.err" || fail "heaptrack_gui: $(cat "$T/chart.err")"
fi
# The picture once the window stops changing (view_shot): the summary and
# its tables drawn (where its widgets were not readable, the one sign that
# the file was read).
view_shot "$VIEW_WIN" export_view_heaptrack
if [ "$read" = 0 ]; then
    view_stop heaptrack_gui
    echo "export_view_heaptrack: ok (chart replayed; window and screenshot; numbers not read)"
    exit 0
fi

shows() { # what text
    grep -qF -- "$2" "$T/heaptrack_gui.a11y" || fail "heaptrack_gui's $1: want '$2' in: $(grep -F -- "${2%%|*}" "$T/heaptrack_gui.a11y")"
}
shows calls "calls to allocation functions: | $(commas "$REPORT_ALLOCS") ("
shows temporary "temporary allocations: | $(commas "$REPORT_TEMPORARY") ("
shows peak "peak heap memory consumption: | $(view_size "$REPORT_PEAK" metric) after"
shows leaked "total memory leaked: | $(view_size "$REPORT_LEAKED" metric)"
grep -q "total system memory: | [1-9]" "$T/heaptrack_gui.a11y" ||
    fail "system memory: $(grep -o "total system memory: | [^ ]*" "$T/heaptrack_gui.a11y")"
# The tables name the program's functions.
grep -q "^ *churn in export_prog \[table cell\]" "$T/heaptrack_gui.a11y" || fail "no churn row in the summary's tables"
view_stop heaptrack_gui

# ---- 3. export_spikes's chart on screen. -------------------------------------
view_open heaptrack_gui "Heaptrack - spikes.heaptrack.zst" "total memory leaked:" \
    heaptrack_gui "$T/spikes.heaptrack.zst" || read=0
if [ "$read" = 0 ]; then
    view_shot "$VIEW_WIN" export_view_heaptrack_chart
    view_stop heaptrack_gui
    echo "export_view_heaptrack: ok (chart replayed, export_prog's numbers; the chart on screen not read)"
    exit 0
fi
"${CHART[@]}" "$T/spikes.chart" 2>"$T/chart.err" || fail "heaptrack_gui's chart: $(cat "$T/chart.err")"
view_shot "$VIEW_WIN" export_view_heaptrack_chart
# "T = 00.532s, Consumed: 8.4MB. Click and drag ...": the largest value as
# shown, and the runs of values at half a buffer or more.
read -r top shown < <(sed -n 's/.*Consumed: \([0-9.,]*\)\([kMGT]\{0,1\}B\)\..*/\1 \2/p' "$T/spikes.chart" |
    awk -v spike="$SPIKE" '{
        v = $1; gsub(",", "", v)
        v *= $2 == "kB" ? 1e3 : $2 == "MB" ? 1e6 : $2 == "GB" ? 1e9 : $2 == "TB" ? 1e12 : 1
        if (v > max) { max = v; top = $1 $2 }
        if (v >= spike / 2 && !high) spikes++
        high = v >= spike / 2; n++
    } END { printf "%s %d/%d\n", top, spikes, n }')
expect "heaptrack_gui's Consumed chart: its top under the pointer" "$top" "$(view_size "$SPIKES_PEAK" metric)"
expect "heaptrack_gui's Consumed chart: spikes under the pointer" "${shown%/*}" "$NR_SPIKES"
view_stop heaptrack_gui
echo "export_view_heaptrack: ok ($REPORT_ALLOCS calls, $REPORT_TEMPORARY temporary, peak $(view_size "$REPORT_PEAK" metric), leaked $(view_size "$REPORT_LEAKED" metric); chart top $top, $NR_SPIKES spikes in ${shown#*/} samples)"
