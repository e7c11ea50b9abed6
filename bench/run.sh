#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# memscribe's benchmark: every workload untraced, under `memscribe record` and
# under heaptrack, in one run, repeated; prints medians as ratios and per-event
# costs, and whether memscribe meets its targets. See bench/README.md.
#
# To add a workload: write wl_<name> (set CMD, the command to run) and add the
# name to WORKLOADS. To add a measured tool: write tool_<name> (set RUN from
# CMD and TRACE, the file it writes) and add the name to TOOLS. To measure how
# a tool's trace is analysed (--report): write analyse_<tool> (set ANALYSIS, a
# one-word label, and RUN from the trace file $1).
set -euo pipefail
# The whole script is one brace group, read completely before it runs: editing
# this file while a (long) run is in progress cannot change what that run does.
{

BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
SRC_DIR=$(dirname "$BENCH_DIR")

usage() {
    cat <<EOF
usage: bash bench/run.sh [options]
  -r, --repeat N      measure every workload and tool N times, quote medians (default 5)
  -q, --quick         smoke run: workloads scaled down 10x, 1 repeat (figures not comparable)
  -R, --report        also time the analysis of each tool's trace: memscribe report
                      against heaptrack_print, on the trace of the first run
  -w, --only LIST     comma-separated workloads (default: ${WORKLOADS[*]})
  -m, --mem-limit MIB address-space limit of every traced run (default 4096)
  -t, --timeout SEC   kill a run after SEC seconds (default 120)
  -b, --build-dir DIR build directory (default: <source>/build-bench)
  -c, --commit REV    build memscribe from commit REV (a clean snapshot) instead of the
                      working tree
      --memscribe PATH  measure this memscribe binary instead of building one
      --base PATH     also measure this memscribe binary (column memscribe-base): a
                      before/after comparison in one run, the order rotated as for the others
      --sample BYTES  also measure memscribe record --sample BYTES (column sampled;
                      512K is the production rate): its cost beside the exact one
      --no-setup      do not install missing packages
  -h, --help          this text
EOF
}

WORKLOADS=(storm-1t storm-4t storm-pool deep-small deep sqlite cc1 python perl containers cxx-loop)
TOOLS=(untraced memscribe heaptrack heaptrack-raw)

# ---- Workloads: each sets CMD. SCALE is 1, or 10 with --quick. ----------------

wl_storm-1t() { CMD=("$BIN/bench_storm" 1 $((10000000 / SCALE))); }
wl_storm-4t() { CMD=("$BIN/bench_storm" 4 $((10000000 / SCALE))); }
# 4,096 live blocks, each free hitting one at random: frees all over the heap.
wl_storm-pool() { CMD=("$BIN/bench_storm" 1 $((10000000 / SCALE)) 4096); }
# Distinct stacks 300 frames deep. deep-small is sized so heaptrack completes
# (about 1.3 GB); deep is ten times larger, where heaptrack runs out of memory.
wl_deep-small() { CMD=("$BIN/bench_deep" $((2000 / SCALE)) 300); }
wl_deep() { CMD=("$BIN/bench_deep" $((20000 / SCALE)) 300); }
wl_sqlite() { CMD=(sqlite3 -batch :memory: ".read $SQL_SCRIPT"); }
# gcc's cc1 -O2, run directly, on the C file unwind_cost.sh compiles,
# preprocessed once beforehand: one process, as heaptrack traces only the
# process it starts (its library leaves children untraced), so the gcc driver,
# or env, would hide the work from it. Not scaled by --quick.
wl_cc1() { CMD=("$CC1" -fpreprocessed -quiet -O2 "$PNGTEST_I" -o "$WORK/pngtest.s"); }
# CPython with PYTHONMALLOC=malloc (exported below, for the same reason: not
# `env`), so every object is a malloc/free.
# Debian's python3 by its path: a python3 found first on PATH may be a wrapper
# script (pyenv's shim, say), which heaptrack would trace instead.
wl_python() { CMD=(/usr/bin/python3 "$BENCH_DIR/json_roundtrip.py" $((100000 / SCALE))); }
# Debian's perl (by its path, as python) on a text-processing script: words
# counted in a hash, a regex rewrite per line, an index by first letter.
wl_perl() { CMD=(/usr/bin/perl "$BENCH_DIR/text_words.pl" $((100000 / SCALE))); }
# C++ containers' churn: std::map of std::string to std::vector, grown,
# looked up and erased at random; strings built, sorted and dropped.
wl_containers() { CMD=("$BIN/bench_containers" $((2000 / SCALE))); }
# The smallest C++ loop: a vector and a string made and dropped, 4 heap calls
# repeating exactly; heaptrack's trace is little more than its time stamps.
wl_cxx-loop() { CMD=("$BIN/bench_containers" --loop $((1000000 / SCALE))); }

# ---- Tools: each sets RUN (the command line) and TRACE (file written, or ""). --
# $1 is an empty directory for this run's files.

tool_untraced() {
    RUN=("${CMD[@]}")
    TRACE=""
}
tool_memscribe() {
    RUN=("$MEMSCRIBE" record -o "$1/trace.mscr" -- "${CMD[@]}")
    TRACE="$1/trace.mscr"
}
# --sample BYTES: memscribe recording a sample of the heap blocks (docs/record.md).
tool_sampled() {
    RUN=("$MEMSCRIBE" record --sample "$SAMPLE" -o "$1/trace.mscr" -- "${CMD[@]}")
    TRACE="$1/trace.mscr"
}
# --base PATH: a second memscribe (the one before a change) measured beside.
tool_memscribe-base() {
    RUN=("$MEMSCRIBE_BASE" record -o "$1/trace.mscr" -- "${CMD[@]}")
    TRACE="$1/trace.mscr"
}
tool_heaptrack() {
    # heaptrack appends .zst (or .gz without zstd) to the -o name.
    RUN=(heaptrack -o "$1/trace" "${CMD[@]}")
    TRACE=$(compgen -G "$1/trace.*" | head -n 1 || true)
}
tool_heaptrack-raw() {
    # --raw: heaptrack's preloaded library only, without heaptrack_interpret
    # (no symbolizing, no interning of stacks); the file is trace.raw.zst.
    RUN=(heaptrack --raw -o "$1/trace" "${CMD[@]}")
    TRACE=$(compgen -G "$1/trace.*" | head -n 1 || true)
}
# ---- Analyses (--report): each sets ANALYSIS (label) and RUN for trace $1. ------
# memscribe's is listed first in ANALYSES: the table compares it with the next.

analyse_memscribe() {
    ANALYSIS=memscribe-report
    RUN=("$MEMSCRIBE" report "$1")
}
analyse_heaptrack() {
    ANALYSIS=heaptrack_print
    RUN=(heaptrack_print "$1")
}
ANALYSES=(memscribe heaptrack)

# Traced runs get an address-space limit, so that a tracer whose tables grow
# without bound (heaptrack on deep stacks) cannot take the machine down. Both
# tracers get the same limit; the untraced program needs none.
limit_memscribe() { echo $((MEM_LIMIT_MIB * 1024 * 1024)); }
limit_heaptrack() { echo $((MEM_LIMIT_MIB * 1024 * 1024)); }
limit_heaptrack-raw() { limit_heaptrack; }
limit_memscribe-base() { limit_memscribe; }
limit_sampled() { limit_memscribe; }

# ---- Options -------------------------------------------------------------------

REPEAT=5
REPORT=0
SCALE=1
ONLY=""
MEM_LIMIT_MIB=4096
TIMEOUT=120
BUILD=$SRC_DIR/build-bench
SETUP=1
MEMSCRIBE=""
MEMSCRIBE_BASE=""
COMMIT=""
SAMPLE=""
while [ $# -gt 0 ]; do
    case "$1" in
    -r | --repeat) REPEAT=${2:?}; shift 2 ;;
    -q | --quick) SCALE=10; REPEAT=1; shift ;;
    -R | --report) REPORT=1; shift ;;
    -w | --only) ONLY=${2:?}; shift 2 ;;
    -m | --mem-limit) MEM_LIMIT_MIB=${2:?}; shift 2 ;;
    -t | --timeout) TIMEOUT=${2:?}; shift 2 ;;
    -b | --build-dir) BUILD=${2:?}; shift 2 ;;
    --memscribe) MEMSCRIBE=${2:?}; shift 2 ;;
    --base) MEMSCRIBE_BASE=${2:?}; shift 2 ;;
    -c | --commit) COMMIT=${2:?}; shift 2 ;;
    --sample) SAMPLE=${2:?}; shift 2 ;;
    --no-setup) SETUP=0; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "run.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
    esac
done
[[ $REPEAT =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: --repeat: not a positive integer: '$REPEAT'" >&2; exit 2; }
[[ $TIMEOUT =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: --timeout: not a positive integer: '$TIMEOUT'" >&2; exit 2; }
[[ $MEM_LIMIT_MIB =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: --mem-limit: not a positive integer: '$MEM_LIMIT_MIB'" >&2; exit 2; }
if [ -n "$ONLY" ]; then
    IFS=, read -r -a WORKLOADS <<<"$ONLY"
    for w in "${WORKLOADS[@]}"; do
        declare -F "wl_$w" >/dev/null || { echo "run.sh: --only: no workload '$w'" >&2; exit 2; }
    done
fi

log() { echo "bench: $*" >&2; }

# ---- Set up and build --------------------------------------------------------

if [ "$SETUP" = 1 ]; then
    bash "$SRC_DIR/scripts/setup.sh"
    # Beyond the build's needs: the tool we compare with, the real program we
    # trace, and cmocka, without which the project does not configure.
    missing=()
    # libpng-dev for the C file of cc1, python3 for python (and trace_bytes.py),
    # perl for perl, g++ for containers and cxx-loop.
    for p in heaptrack sqlite3 zstd libcmocka-dev libpng-dev python3 perl g++; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        log "installing ${missing[*]}"
        SUDO=""
        [ "$(id -u)" -eq 0 ] || SUDO=sudo
        $SUDO apt-get update -q >&2
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
    fi
fi

# The workloads and measuring tools build on their own, so heaptrack can be
# measured even while memscribe, written alongside this bench, does not build:
# then the table says so.
log "building in $BUILD"
BIN=$BUILD/bench-tools
mkdir -p "$BIN"
if ! { cmake -S "$BENCH_DIR" -B "$BIN" -DCMAKE_BUILD_TYPE=RelWithDebInfo &&
    cmake --build "$BIN" -j2; } >"$BIN/build.log" 2>&1; then
    cat "$BIN/build.log" >&2
    echo "run.sh: building the bench tools failed (log above)" >&2
    exit 1
fi
RUNNER=$BIN/bench_runner
MEMSCRIBE_MISSING=""
if [ -n "$MEMSCRIBE" ]; then
    [ -x "$MEMSCRIBE" ] || MEMSCRIBE_MISSING="not found at $MEMSCRIBE"
    VERSION="$MEMSCRIBE"
else
    # A commit is built from a clean snapshot in its own build directory, so
    # edits in progress in the working tree do not leak into the figures.
    ms_src=$SRC_DIR
    ms_build=$BUILD
    VERSION=$(git -C "$SRC_DIR" describe --always --dirty 2>/dev/null || echo "unknown commit")
    if [ -n "$COMMIT" ]; then
        rev=$(git -C "$SRC_DIR" rev-parse --short "$COMMIT^{commit}") || {
            echo "run.sh: --commit: not a commit: '$COMMIT'" >&2
            exit 2
        }
        ms_src=$BUILD/src-$rev
        ms_build=$BUILD/build-$rev
        VERSION="$rev (clean snapshot)"
        rm -rf "$ms_src"
        mkdir -p "$ms_src"
        git -C "$SRC_DIR" archive "$rev" | tar -x -C "$ms_src"
    fi
    mkdir -p "$ms_build"
    MEMSCRIBE=$ms_build/bin/memscribe
    if ! { cmake -S "$ms_src" -B "$ms_build" -DCMAKE_BUILD_TYPE=RelWithDebInfo &&
        cmake --build "$ms_build" -j2 --target memscribe memscribe_collector; } >"$ms_build/memscribe-build.log" 2>&1; then
        MEMSCRIBE_MISSING="does not build (see $ms_build/memscribe-build.log)"
    fi
fi
if [ -z "$MEMSCRIBE_MISSING" ] && ! "$MEMSCRIBE" record --help >/dev/null 2>&1; then
    MEMSCRIBE_MISSING="'memscribe record --help' fails"
fi
[ -z "$MEMSCRIBE_MISSING" ] || log "memscribe $MEMSCRIBE_MISSING: measuring the rest"
if [ -n "$MEMSCRIBE_BASE" ]; then
    [ -x "$MEMSCRIBE_BASE" ] || { echo "run.sh: --base: not an executable: $MEMSCRIBE_BASE" >&2; exit 2; }
    TOOLS=(untraced memscribe memscribe-base heaptrack heaptrack-raw)
fi
[ -z "$SAMPLE" ] || TOOLS=("${TOOLS[0]}" "${TOOLS[1]}" sampled "${TOOLS[@]:2}")

# Only the python workload runs python3.
export PYTHONMALLOC=malloc
CC1=$(gcc -print-prog-name=cc1)
PNGTEST_I=$BIN/pngtest.i
[ -s "$PNGTEST_I" ] || gcc -E /usr/share/doc/libpng-dev/examples/pngtest.c -o "$PNGTEST_I"
SQL_SCRIPT=$BIN/sqlite-$((200000 / SCALE)).sql
[ -s "$SQL_SCRIPT" ] || awk -v rows=$((200000 / SCALE)) -f "$BENCH_DIR/gen_sql.awk" >"$SQL_SCRIPT"

# ---- Measure -----------------------------------------------------------------

STAMP=$(date -u +%Y%m%dT%H%M%SZ)
RESULTS=$BENCH_DIR/results
mkdir -p "$RESULTS"
RUNS_TSV=$RESULTS/$STAMP.tsv
EVENTS_TSV=$RESULTS/$STAMP.events.tsv
WORK=$(mktemp -d "$BIN/run.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
printf 'workload\ttool\trep\twall_ns\tcpu_ns\tmaxrss_kb\tresult\ttrace_bytes\ttime_bytes\n' >"$RUNS_TSV"
printf 'workload\tcounted\tconstructed\n' >"$EVENTS_TSV"

# Count the heap calls of a workload once, untimed, with the counter preloaded:
# the divisor for per-event figures. A workload that knows its own count prints
# "bench-events: N"; the count must be at least that.
count_events() {
    local w=$1 out=$WORK/count.out cnt=$WORK/count.txt counted constructed
    rm -f "$cnt"
    "wl_$w"
    BENCH_COUNT_FILE=$cnt LD_PRELOAD=$BIN/libbench_count.so "${CMD[@]}" >"$out" 2>"$WORK/count.err" || {
        cat "$WORK/count.err" >&2
        echo "run.sh: workload $w failed untraced: ${CMD[*]}" >&2
        exit 1
    }
    counted=$(awk -F'events=' '/^bench-count:/ { n += $2 } END { print n + 0 }' "$cnt" 2>/dev/null || echo 0)
    constructed=$(awk '/^bench-events:/ { print $2 }' "$out")
    if [ -n "$constructed" ] && [ "$counted" -lt "$constructed" ]; then
        echo "run.sh: $w: counted $counted heap calls, fewer than the $constructed it made" >&2
        exit 1
    fi
    printf '%s\t%s\t%s\n' "$w" "$counted" "${constructed:--}" >>"$EVENTS_TSV"
    COUNTED=$counted
}

# The events `memscribe record` says it wrote, from its stderr $1 ("trace
# written to FILE: N events, ..."; 0 without that line): no decoding of the
# trace again.
trace_events() {
    sed -n 's/^memscribe: record: trace written to .*: \([0-9]*\) events, .*/\1/p' "$1" | tail -n 1 |
        grep . || echo 0
}

# Why a run failed, in a few words, from its status, stderr and peak memory.
# Under an address-space limit, heaptrack's allocation failure surfaces as a
# C++ "terminate called" (std::bad_alloc thrown in its preloaded library, then
# abort), so that counts as running out of memory too.
classify_failure() {
    local status=$1 err=$2 maxrss_kb=$3 limit=$4 oom="bad_alloc|[Oo]ut of memory|Cannot allocate memory"
    [ -n "$limit" ] && oom="$oom|terminate called"
    # shellcheck disable=SC2017 # the limit in KiB first, as maxrss_kb counts
    if [ "${status%%:*}" = timeout ]; then
        echo "timeout-${status#*:}s"
    elif grep -qE "$oom" "$err" 2>/dev/null ||
        { [ -n "$limit" ] && [ "$maxrss_kb" -ge $((limit / 1024 * 9 / 10)) ]; }; then
        echo "out-of-memory"
    else
        echo "failed-$status"
    fi
}

# Run RUN under the runner (limit $2 bytes, or none if empty), its output in
# directory $1. Sets R_WALL, R_CPU, R_RSS (ns, ns, KiB) and R_STATUS.
run_measured() {
    local dir=$1 limit=$2 line kv
    line=$("$RUNNER" ${limit:+--as-limit "$limit"} --timeout "$TIMEOUT" --stdout "$dir/stdout" \
        --stderr "$dir/stderr" -- "${RUN[@]}")
    for kv in $line; do
        case $kv in
        wall_ns=*) R_WALL=${kv#*=} ;;
        cpu_ns=*) R_CPU=${kv#*=} ;;
        maxrss_kb=*) R_RSS=${kv#*=} ;;
        status=*) R_STATUS=${kv#*=} ;;
        esac
    done
}

# Append a row to RUNS_TSV for workload $1, tool $2, repetition $3, result $4,
# trace bytes $5, from the last run_measured; log a failure with its stderr $6.
# $7: the bytes of a memscribe trace's per-event times (0: none, or another
# tool's trace), which heaptrack's trace has no counterpart of.
record_row() {
    if [ "$4" != ok ]; then
        log "$1 under $2: $4; last lines of its stderr:"
        tail -n 5 "$6" | sed 's/^/    /' >&2
    fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$R_WALL" "$R_CPU" "$R_RSS" "$4" \
        "$5" "${7:-0}" >>"$RUNS_TSV"
}

# Measure one run of workload $1 under tool $2. With --report, the trace of the
# tool's first successful run is kept in $WORK/kept/ for the analyses.
measure() {
    local w=$1 tool=$2 rep=$3 dir limit="" bytes=0 tbytes=0 result n
    dir=$WORK/$w.$tool.$rep
    mkdir -p "$dir"
    "wl_$w"
    "tool_$tool" "$dir"
    declare -F "limit_$tool" >/dev/null && limit=$("limit_$tool")
    run_measured "$dir" "$limit"
    "tool_$tool" "$dir" # again: TRACE may only be known once the file exists
    if [ "$R_STATUS" = exit:0 ]; then
        result=ok
        if [ -n "$TRACE" ]; then
            if [ -f "$TRACE" ]; then
                bytes=$(stat -c %s "$TRACE")
                # A complete recording holds every heap call (and more); one
                # with less than half of them traced something else (a
                # collector ld.so refused records none, and runs fast).
                if [ "$tool" = memscribe ] || [ "$tool" = memscribe-base ]; then
                    n=$(trace_events "$dir/stderr")
                    [ "$n" -ge $((COUNTED / 2)) ] || result="holds-$n-events-of-$COUNTED"
                    tbytes=$(python3 "$BENCH_DIR/trace_bytes.py" --times "$TRACE" || echo 0)
                fi
            else
                result=no-trace
            fi
        fi
    else
        result=$(classify_failure "$R_STATUS" "$dir/stderr" "$R_RSS" "$limit")
    fi
    record_row "$w" "$tool" "$rep" "$result" "$bytes" "$dir/stderr" "$tbytes"
    if [ "$REPORT" = 1 ] && [ "$result" = ok ] && [ -n "$TRACE" ] &&
        ! compgen -G "$WORK/kept/$w.$tool.*" >/dev/null; then
        mkdir -p "$WORK/kept"
        # Keep the suffix: heaptrack_print picks the decompressor by it.
        mv "$TRACE" "$WORK/kept/$w.$tool.${TRACE##*/}"
    fi
    rm -rf "$dir"
    [ "$result" = ok ]
}

# Time analyse_$2 on the kept trace of workload $1 under tool $2.
measure_analysis() {
    local w=$1 tool=$2 rep=$3 trace dir limit result
    trace=$(compgen -G "$WORK/kept/$w.$tool.*" | head -n 1) || return 1
    dir=$WORK/$w.analyse-$tool.$rep
    mkdir -p "$dir"
    "analyse_$tool" "$trace"
    limit=$((MEM_LIMIT_MIB * 1024 * 1024))
    run_measured "$dir" "$limit"
    if [ "$R_STATUS" = exit:0 ]; then
        result=ok
    else
        result=$(classify_failure "$R_STATUS" "$dir/stderr" "$R_RSS" "$limit")
    fi
    record_row "$w" "$ANALYSIS" "$rep" "$result" 0 "$dir/stderr"
    rm -rf "$dir"
    [ "$result" = ok ]
}

# usage: repeat_runs MEASURE W ROTATE BEFORE AFTER T...: REPEAT rounds of
# MEASURE W T REP for each T, logged as "W: BEFORE T AFTER, run REP". With
# ROTATE 1 the order of the Ts turns from one round to the next, so a slow
# drift of the machine does not always favour the same one. A T that failed
# (out of memory, say) fails again the same way: its remaining rounds are
# not spent on it.
repeat_runs() {
    local fn=$1 w=$2 rotate=$3 before=$4 after=$5 rep k t
    shift 5
    local n=$# list=("$@")
    local -A gave_up=()
    for ((rep = 1; rep <= REPEAT; rep++)); do
        for ((k = 0; k < n; k++)); do
            t=${list[$k]}
            [ "$rotate" = 1 ] && t=${list[$(((k + rep - 1) % n))]}
            [ -n "${gave_up[$t]:-}" ] && continue
            log "$w: $before$t$after, run $rep of $REPEAT"
            "$fn" "$w" "$t" "$rep" || gave_up[$t]=1
        done
    done
}

LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
tools=()
for t in "${TOOLS[@]}"; do
    [ "$t" = memscribe ] && [ -n "$MEMSCRIBE_MISSING" ] && continue
    tools+=("$t")
done

for w in "${WORKLOADS[@]}"; do
    log "$w: counting heap calls"
    count_events "$w"
    repeat_runs measure "$w" 1 "" "" "${tools[@]}"
    if [ "$REPORT" = 1 ]; then
        kept=()
        for t in "${ANALYSES[@]}"; do
            compgen -G "$WORK/kept/$w.$t.*" >/dev/null && kept+=("$t")
        done
        repeat_runs measure_analysis "$w" 0 "analysing the " " trace" "${kept[@]}"
        rm -rf "$WORK/kept"
    fi
done

# ---- Report --------------------------------------------------------------------

OUT=$RESULTS/$STAMP.txt
{
    echo "memscribe benchmark, $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "machine:   $(nproc) cpus, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo), kernel $(uname -r), clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null || echo unknown)"
    echo "memscribe: $VERSION${MEMSCRIBE_MISSING:+ — not measured: $MEMSCRIBE_MISSING}"
    [ -z "$MEMSCRIBE_BASE" ] || echo "memscribe-base: $MEMSCRIBE_BASE"
    echo "heaptrack: $(heaptrack --version 2>&1 | head -n 1); sqlite3 $(sqlite3 --version | cut -d' ' -f1); $(gcc --version | head -n 1)"
    echo "load:      $LOAD_START at start, $(cut -d' ' -f1-3 /proc/loadavg) at end (1/5/15-minute load averages)"
    nr_cpus=$(nproc)
    if awk -v a="$LOAD_START" -v b="$(cut -d' ' -f1 /proc/loadavg)" -v n="$nr_cpus" 'BEGIN { exit !(a > n || b > n) }'; then
        echo "WARNING:   load average above $nr_cpus: other work competed for the cpus; wall figures are unreliable"
    fi
    echo "runs:      median of $REPEAT per workload and tool$([ "$SCALE" != 1 ] && echo "; QUICK: workloads scaled down ${SCALE}x, not comparable"); traced runs limited to $MEM_LIMIT_MIB MiB of address space and $TIMEOUT s"
    echo
    labels=()
    for t in "${ANALYSES[@]}"; do
        "analyse_$t" trace
        labels+=("$ANALYSIS")
    done
    awk -v workloads="${WORKLOADS[*]}" -v tools="${TOOLS[*]}" -v analyses="${labels[*]}" \
        -v memscribe_missing="${MEMSCRIBE_MISSING%% (*}" -v mem_limit_mib="$MEM_LIMIT_MIB" -f "$BENCH_DIR/report.awk" "$EVENTS_TSV" "$RUNS_TSV"
} | tee "$OUT"
echo "bench: written to $OUT (raw runs: $RUNS_TSV)" >&2
exit 0
}
