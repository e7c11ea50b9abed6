#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Byte-identical check for changes that must not change any output (moves,
# splits): every analysis command and export, run by a frozen baseline binary
# and by the new one over the same frozen traces, must write the same bytes,
# the same standard error and the same exit status.
#
#   compare-outputs.sh record BUILD TRACES
#       record the frozen traces into TRACES (outside git) with the programs
#       of BUILD: the golden traces, the demo, a storm, a small deep (the
#       quick deep-small of bench/run.sh) and, when
#       sqlite3 is installed, a small sqlite run.
#   compare-outputs.sh compare BASE_MEMSCRIBE NEW_MEMSCRIBE TRACES [OUT]
#       run both binaries over every TRACES/*.mscr; the baseline's outputs
#       are kept in TRACES/base-outputs, the new one's go to OUT (default: a
#       temporary folder, removed when all are identical).
#       Exit status 0 when all are identical, 1 otherwise.
#   compare-outputs.sh chain OLD NEW WORK TRACES
#       which commit changed each output that differs between commits OLD
#       and NEW (an audit of their differences, docs/output-audit.md):
#       builds memscribe at OLD, NEW and every commit of NEW's first-parent
#       history after OLD that touches what the analysis is built from, in
#       WORK (a worktree WORK/src and build WORK/build, the binaries kept in
#       WORK/bin), runs every run of TRACES with each, and prints a line per
#       trace, run and commit where an output changed:
#           TRACE RUN COMMIT SUBJECT
#       The outputs of each binary are kept in WORK/out (made again only
#       for binaries not run yet).
#
# A baseline is the tree built once before the change, e.g.
#   git archive BASE | tar -x -C /tmp/base/src
#   cmake -S /tmp/base/src -B /tmp/base/build && cmake --build /tmp/base/build
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

usage() {
    sed -n '8,30p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

record() {
    local build=$1 traces=$2 ms
    ms=$build/bin/memscribe
    mkdir -p "$traces"
    cp "$root"/tests/golden/*.mscr "$traces"/
    "$ms" record -o "$traces/demo.mscr" -- "$build/examples/memtest_demo" >/dev/null
    "$ms" record -o "$traces/storm.mscr" -- "$build/bench/bench_storm" 2 100000
    "$ms" record -o "$traces/deep-small.mscr" -- "$build/bench/bench_deep" 200 300
    # chunk totals (report --index, timeline --index), one process and three
    "$ms" record --totals -o "$traces/demo-totals.mscr" -- "$build/examples/memtest_demo" >/dev/null
    "$ms" record --totals -o "$traces/procs-totals.mscr" -- sh -c \
        "$build/examples/memtest_demo >/dev/null; $build/bench/bench_storm 1 20000"
    if command -v sqlite3 >/dev/null; then
        awk -v rows=5000 -f "$root/bench/gen_sql.awk" >"$traces/sqlite.sql"
        "$ms" record -o "$traces/sqlite.mscr" -- sqlite3 -batch :memory: ".read $traces/sqlite.sql" >/dev/null
    fi
    ls -l "$traces"
}

# Every command with options that reach the different code paths. One line
# per run: a name (the output file's stem) and the arguments; @T is the
# trace, @O an output file in the run's folder.
RUNS=(
    "dump|dump --header --stacks @T"
    "report|report @T"
    "report-json|report --format json @T"
    "report-csv|report --format csv --top 3 @T"
    "report-temp|report --temporary-threshold 1 @T"
    "leaks|leaks @T"
    "leaks-all-json|leaks --all --format json @T"
    "leaks-at|leaks --at 1ms @T"
    "leaks-index|leaks --index --at 1ms @T"
    "report-index|report --index @T"
    "report-verify|report --verify --format json @T"
    "timeline-index|timeline --index --format json @T"
    "window|window @T"
    "window-json|window --format json @T"
    "window-tree|window --tree --depth 6 @T"
    "window-fn|window --by function --bottom-up --sort size @T"
    "window-from|window --from 1ms --to end-1ms @T"
    "timeline|timeline @T"
    "timeline-json|timeline --format json --interval 1ms @T"
    "histogram|histogram @T"
    "histogram-stack|histogram --by-stack --format json @T"
    "tree|tree --depth 12 --top 5 @T"
    "tree-bu|tree --bottom-up --depth 4 --format json @T"
    "plot-timeline|plot timeline @T -o @O.svg"
    "plot-histogram|plot histogram @T -o @O.svg"
    "flame|flamegraph @T -o @O.svg"
    "flame-folded|flamegraph --folded --inverted --cost peak @T"
    "flame-leaked|flamegraph --cost leaked @T -o @O.svg"
    "html|html @T -o @O.html"
    "vmem|vmem @T"
    "vmem-json|vmem --format json --by function @T"
    "frag|frag @T"
    "frag-json|frag --format json --svg @O.svg @T"
    "frag-at|frag --at 1ms --intervals 3 @T"
    "vmem-window|vmem --from 1ms --to end-1ms --intervals 4 --by origin @T"
    "export-massif|export --to massif @T -o @O"
    "export-heaptrack|export --to heaptrack @T -o @O.gz"
    "export-dhat|export --to dhat @T -o @O"
    "export-pprof|export --to pprof @T -o @O"
    "export-folded|export --to folded --cost bytes @T"
    "export-csv|export --to csv @T -o @O"
    "export-sqlite|export --to sqlite @T -o @O.db"
    "bad-window-by|window --by nope @T"
    "bad-window-sort|window --sort nope @T"
    "bad-vmem-by|vmem --by nope @T"
    "bad-tree-sort|tree --sort nope @T"
)

# run_all MEMSCRIBE TRACE DIR: every run's stdout, stderr, status and output
# file into DIR. Runs happen inside DIR so relative output names match.
run_all() {
    local ms=$1 trace=$2 dir=$3 run name args
    mkdir -p "$dir"
    for run in "${RUNS[@]}"; do
        name=${run%%|*}
        args=${run#*|}
        args=${args//@T/$trace}
        args=${args//@O/$name.file}
        # shellcheck disable=SC2086 # the arguments are split on purpose
        (cd "$dir" && "$ms" $args >"$name.stdout" 2>"$name.stderr"; echo $? >"$name.status") || true
        # A database's bytes hold page layout; its content is what counts.
        if [ -f "$dir/$name.file.db" ]; then
            sqlite3 "$dir/$name.file.db" .dump >"$dir/$name.file.db.sql"
            rm "$dir/$name.file.db"
        fi
        # The HTML page's script nonce is random on every run.
        if [ -f "$dir/$name.file.html" ]; then
            sed -i -E 's/nonce([-=]"?)[0-9a-f]{32}/nonce\1NONCE/g' "$dir/$name.file.html"
        fi
    done
}

compare() {
    local base=$1 new=$2 traces=$3 out=${4:-} keep=1 trace t status=0 cache stamp
    if [ -z "$out" ]; then
        out=$(mktemp -d)
        keep=0
    fi
    base=$(realpath "$base")
    new=$(realpath "$new")
    # The baseline's outputs are kept beside the traces and made again only
    # when the baseline binary or the list of runs changes.
    cache=$(realpath "$traces")/base-outputs
    stamp=$( (cat "$base"; printf '%s\n' "${RUNS[@]}") | sha256sum)
    if [ "$(cat "$cache/stamp" 2>/dev/null)" != "$stamp" ]; then
        rm -rf "$cache"
        mkdir -p "$cache"
    fi
    echo "$stamp" >"$cache/stamp"
    for trace in "$traces"/*.mscr; do
        trace=$(realpath "$trace")
        t=$(basename "$trace" .mscr)
        if [ ! -d "$cache/$t" ]; then
            rm -rf "$cache/$t.part"
            run_all "$base" "$trace" "$cache/$t.part"
            mv "$cache/$t.part" "$cache/$t"
        fi
        rm -rf "${out:?}/$t"
        run_all "$new" "$trace" "$out/$t"
        if diff -r -q "$cache/$t" "$out/$t"; then
            echo "same: $t (${#RUNS[@]} runs)"
        else
            echo "DIFFERENT: $t" >&2
            status=1
        fi
    done
    if [ $status = 0 ] && [ $keep = 0 ]; then
        rm -rf "$out"
    elif [ $status != 0 ]; then
        echo "outputs kept in $out" >&2
    fi
    return $status
}

# The commits of chain OLD..NEW, oldest first: OLD, each first parent of
# NEW's history after it whose change reaches what the analysis commands
# read and run (not the recorder, the collector or the writer), NEW.
chain_commits() {
    local old=$1 new=$2 c last
    last=$(git -C "$root" rev-parse "$new")
    git -C "$root" rev-parse --short "$old"
    for c in $(git -C "$root" rev-list --first-parent --reverse "$old..$new"); do
        if [ "$c" = "$last" ] ||
            ! git -C "$root" diff --quiet "$c^1" "$c" -- src/analysis src/cli src/format src/util include \
                ':(exclude)src/cli/cmd_record*' ':(exclude)src/format/fmt_w*'; then
            git -C "$root" rev-parse --short "$c"
        fi
    done
}

# chain_build WORK N COMMIT: memscribe at COMMIT as WORK/bin/NNN-COMMIT
# (kept: built once), or WORK/bin/NNN-COMMIT.failed with the build's log.
chain_build() {
    local work=$1 bin
    bin=$work/bin/$(printf %03d "$2")-$3
    [ -x "$bin" ] || [ -e "$bin.failed" ] && return 0
    git -C "$work/src" checkout --detach -q "$3"
    if cmake -S "$work/src" -B "$work/build" >"$work/build.log" 2>&1 &&
        cmake --build "$work/build" --target memscribe -j2 >>"$work/build.log" 2>&1; then
        cp "$work/build/bin/memscribe" "$bin"
    else
        cp "$work/build.log" "$bin.failed"
        echo "$3 does not build (log in $bin.failed): its change counts with the next" >&2
    fi
}

# chain_runs BIN TRACE DIR NAMES...: the named runs of BIN on TRACE into
# DIR, each once (a run's .status file says it ran).
chain_runs() {
    local bin=$1 trace=$2 dir=$3 run name keep=("${RUNS[@]}")
    shift 3
    RUNS=()
    for run in "${keep[@]}"; do
        name=${run%%|*}
        if [[ " $* " == *" $name "* ]] && [ ! -e "$dir/$name.status" ]; then
            RUNS+=("$run")
        fi
    done
    [ ${#RUNS[@]} = 0 ] || run_all "$bin" "$trace" "$dir"
    RUNS=("${keep[@]}")
}

# chain_same DIR1 NAME DIR2: did run NAME write the same files in both?
chain_same() {
    local f sfx
    for f in "$1/$2".* "$3/$2".*; do
        [ -e "$f" ] || continue
        sfx=${f#"${f%/*}/$2"}
        cmp -s "$1/$2$sfx" "$3/$2$sfx" || return 1
    done
}

chain() {
    local old=$1 new=$2 work=$3 traces=$4 i=0 c bin first last trace t run name prev
    local commits names=() all=() bins=()
    work=$(realpath -m "$work")
    traces=$(realpath "$traces")
    mkdir -p "$work/bin" "$work/out"
    [ -d "$work/src" ] || git -C "$root" worktree add --detach -q "$work/src" "$old"
    mapfile -t commits < <(chain_commits "$old" "$new")
    for c in "${commits[@]}"; do
        i=$((i + 1))
        chain_build "$work" "$i" "$c"
    done
    for run in "${RUNS[@]}"; do
        all+=("${run%%|*}")
    done
    for bin in "$work"/bin/*; do
        [[ $bin == *.failed ]] || bins+=("${bin##*/}")
    done
    first=${bins[0]}
    last=${bins[${#bins[@]} - 1]}
    for trace in "$traces"/*.mscr; do
        t=$(basename "$trace" .mscr)
        # What differs between OLD and NEW; only those runs go through the chain.
        chain_runs "$work/bin/$first" "$trace" "$work/out/$first/$t" "${all[@]}"
        chain_runs "$work/bin/$last" "$trace" "$work/out/$last/$t" "${all[@]}"
        names=()
        for name in "${all[@]}"; do
            chain_same "$work/out/$first/$t" "$name" "$work/out/$last/$t" || names+=("$name")
        done
        prev=""
        for bin in "${bins[@]}"; do
            chain_runs "$work/bin/$bin" "$trace" "$work/out/$bin/$t" "${names[@]}"
            if [ -n "$prev" ]; then
                for name in "${names[@]}"; do
                    chain_same "$work/out/$prev/$t" "$name" "$work/out/$bin/$t" ||
                        echo "$t $name ${bin#*-} $(git -C "$root" log -1 --format=%s "${bin#*-}" | cut -c1-100)"
                done
            fi
            prev=$bin
        done
    done
}

case ${1:-} in
    record) [ $# = 3 ] || usage; record "$2" "$3" ;;
    compare) [ $# = 4 ] || [ $# = 5 ] || usage; compare "$2" "$3" "$4" "${5:-}" ;;
    chain) [ $# = 5 ] || usage; chain "$2" "$3" "$4" "$5" ;;
    *) usage ;;
esac
