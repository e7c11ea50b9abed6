#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Memory of the analysis on a process tree (issue 40, item 10): a generated
# C project of FILES files (default 330; `gcc -c` runs gcc, cc1 and as for
# each: about 1,000 processes with make and its shells) is built under
# `memscribe record`; then each analysis command's peak RSS on that trace is
# set beside its peak RSS on a trace of the build's largest compile alone
# (`gcc -c` of the biggest file: its cc1 is the tree's largest process).
# Target: every ratio at most 2.
#
#   bash bench/tree_build.sh [-n FILES] [-j JOBS] [-k DIR [-r]] [-t] MEMSCRIBE
#
#   -k DIR  keep the project and both traces in DIR (default: a temporary
#           folder, removed at the end)
#   -r      reuse the traces DIR holds (tree.mscr, alone.mscr) if both are
#           there: only the commands run
#   -t      record with --totals (format 1.11), and hold report --index
#           against report on the tree: the same output, text and JSON
#           (where the planner finds a replay cheaper than the totals, its
#           note), and the time and peak RSS of each (issue 60: the
#           planner's totals route on a build)
# Prints one line per command: name, RSS on the tree, RSS alone (MiB),
# ratio and whether it meets the target, then the load average; exits 1
# when a command misses it. Every analysis command runs (about 15 minutes
# on the 991-process build; export --to sqlite alone writes a 12 GB
# database for some 5): TREE_BUILD_ONLY="report html ..." runs those named.
set -euo pipefail

usage() { sed -n '11,25p' "$0" | sed 's/^# \{0,1\}//'; }
FILES=330
JOBS=2
KEEP=
REUSE=
TOTALS=()
while [ $# -gt 1 ]; do
    case $1 in
    -t) TOTALS=(--totals); shift ;;
    -n) FILES=$2; shift 2 ;;
    -j) JOBS=$2; shift 2 ;;
    -k) KEEP=$2; shift 2 ;;
    -r) REUSE=1; shift ;;
    *) break ;;
    esac
done
case ${1:-} in
'' | -h | --help) usage; [ -n "${1:-}" ]; exit $? ;;
esac
ms=$(realpath "$1")
if [ -n "$KEEP" ]; then
    work=$KEEP
    mkdir -p "$work"
else
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
fi

# The project: file i has 10 + (i * 7) % 60 functions, each with a
# switch, a loop and a string table, so cc1's work (and its heap) differs
# from file to file; the last file is the biggest (120 functions).
gen_file() {
    local i=$1 n=$2 f
    {
        echo "#include <stdio.h>"
        echo "#include <string.h>"
        for ((f = 0; f < n; f++)); do
            cat <<EOF
static const char *names_${i}_${f}[] = {"a$f", "bb$f", "ccc$f", "dddd$f"};
int fn_${i}_$f(int x, char *buf, unsigned len)
{
    int acc = 0;
    for (unsigned k = 0; k < len; k++) {
        switch ((x + (int)k) % 5) {
        case 0: acc += buf[k] * $f; break;
        case 1: acc ^= (int)strlen(names_${i}_${f}[k % 4]); break;
        case 2: acc -= snprintf(buf, len, "%d-%s", acc, names_${i}_${f}[(k + 1) % 4]); break;
        default: acc += x * (int)k;
        }
    }
    return acc;
}
EOF
        done
    } >"$work/src/f$i.c"
}
mkdir -p "$work/src"
last=$((FILES - 1))
objs=()
for ((i = 0; i < FILES; i++)); do
    n=$((10 + (i * 7) % 60))
    [ "$i" = "$last" ] && n=120
    gen_file "$i" "$n"
    objs+=("f$i.o")
done
{
    echo "all: ${objs[*]}"
    echo "%.o: %.c"
    printf '\tgcc -O2 -c $< -o $@\n'
} >"$work/src/Makefile"

if [ -n "$REUSE" ] && [ -n "$KEEP" ] && [ -f "$work/tree.mscr" ] && [ -f "$work/alone.mscr" ]; then
    echo "tree_build: the traces in $work" >&2
else
    echo "tree_build: building $FILES files with make -j$JOBS under memscribe record" >&2
    (cd "$work/src" && "$ms" record -q "${TOTALS[@]}" -o "$work/tree.mscr" -- make -s -j"$JOBS" >/dev/null)
    rm -f "$work"/src/*.o
    (cd "$work/src" && "$ms" record -q "${TOTALS[@]}" -o "$work/alone.mscr" -- gcc -O2 -c "f$last.c" -o "f$last.o")
fi
nproc_tree=$("$ms" report --format=json "$work/tree.mscr" |
    python3 -c 'import json,sys; print(len(json.load(sys.stdin)["processes"]))')
echo "tree_build: $nproc_tree processes, trace $(du -h "$work/tree.mscr" | cut -f1)" >&2

# Every analysis command (issue 40: "each command"), in the forms the
# tables of bench/README.md name. @T the trace, @O an output file (deleted
# after each command: CSV and SQLite write gigabytes on the tree).
COMMANDS=(
    "report|report @T"
    "report-json|report --format=json @T"
    "report-csv|report --format=csv @T"
    "report-by-process|report --by-process @T"
    "leaks|leaks @T"
    "leaks-by-process|leaks --by-process @T"
    "flamegraph|flamegraph @T -o @O"
    "window|window @T"
    "window-function|window --by function @T"
    "window-tree|window --tree @T"
    "timeline|timeline @T"
    "timeline-sites|timeline --sites 8 @T"
    "tree|tree @T"
    "check|check --max-leaked 1G @T"
    "diff|diff @T @T"
    "vmem|vmem @T"
    "frag|frag @T"
    "histogram|histogram @T"
    "plot|plot timeline @T -o @O"
    "dump|dump @T"
    "html|html @T -o @O"
    "export-pprof|export --to pprof @T -o @O"
    "export-folded|export --to folded @T -o @O"
    "export-heaptrack|export --to heaptrack @T -o @O"
    "export-dhat|export --to dhat @T -o @O"
    "export-massif|export --to massif @T -o @O"
    "export-csv|export --to csv @T -o @O"
    "export-sqlite|export --to sqlite @T -o @O"
    "top|top --once @T"
    "leaks-all|leaks --all @T"
    "leaks-index|leaks --index @T"
    "window-index|window --index @T"
    "replay|replay --repeat 1 @T"
)
ONLY=${TREE_BUILD_ONLY:-}

peak_mib() {
    rm -f "$work/out"
    /usr/bin/time -f '%M' -o "$work/time" "$ms" "$@" >/dev/null 2>"$work/err" ||
        { echo "tree_build.sh: memscribe $* failed: $(cat "$work/err")" >&2; exit 1; }
    rm -f "$work/out"
    awk '{ printf "%.1f\n", $1 / 1024 }' "$work/time"
}

# -t: report --index (the chunks' totals) against report (every event
# replayed) on the tree, in text and JSON: the same bytes; then the time
# and peak RSS of each.
if [ ${#TOTALS[@]} -gt 0 ]; then
    for f in text json; do
        "$ms" report --format=$f "$work/tree.mscr" >"$work/replayed.$f"
        "$ms" report --index --format=$f "$work/tree.mscr" >"$work/index.$f" 2>"$work/index.err"
        # the planner may find a replay cheaper, and say why
        [ ! -s "$work/index.err" ] || echo "tree_build: $(cat "$work/index.err")" >&2
        cmp -s "$work/replayed.$f" "$work/index.$f" ||
            { echo "tree_build: report --index ($f) differs from report: $(diff "$work/replayed.$f" "$work/index.$f" | head -5)" >&2; exit 1; }
    done
    echo "tree_build: report --index = report, text and JSON" >&2
    printf '%-16s %8s %8s %8s\n' command wall_s cpu_s max_MiB
    for args in "report" "report --index"; do
        # shellcheck disable=SC2086 # the words of the command
        /usr/bin/time -f '%e %U %S %M' -o "$work/time" "$ms" $args "$work/tree.mscr" >/dev/null
        awk -v c="$args" '{ printf "%-16s %8s %8.2f %8.1f\n", c, $1, $2 + $3, $4 / 1024 }' "$work/time"
    done
    echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
    [ -n "${TREE_BUILD_ONLY:-}" ] || exit 0
fi

over=0
printf '%-18s %10s %10s %6s %s\n' command tree_MiB alone_MiB ratio target
for c in "${COMMANDS[@]}"; do
    name=${c%%|*}
    case " $ONLY " in "  " | *" $name "*) ;; *) continue ;; esac
    read -ra args <<<"${c#*|}"
    tree_args=() alone_args=()
    for a in "${args[@]}"; do
        tree_args+=("${a//@T/$work/tree.mscr}")
        alone_args+=("${a//@T/$work/alone.mscr}")
    done
    tree_args=("${tree_args[@]//@O/$work/out}")
    alone_args=("${alone_args[@]//@O/$work/out}")
    t=$(peak_mib "${tree_args[@]}")
    a=$(peak_mib "${alone_args[@]}")
    r=$(awk -v t="$t" -v a="$a" 'BEGIN { printf "%.2f", t / a }')
    verdict=met
    awk -v r="$r" 'BEGIN { exit !(r > 2) }' && { verdict=MISSED; over=$((over + 1)); }
    printf '%-18s %10s %10s %6s %s\n' "$name" "$t" "$a" "$r" "$verdict"
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "tree_build: $over command(s) over the target of 2" >&2
[ "$over" = 0 ]
