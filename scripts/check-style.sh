#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The tree's checked habits: every C file as clang-format lays it out
# (.clang-format), every shell script clean under shellcheck
# (.shellcheckrc), every private header (*_internal.h) included only
# from its own folder (STYLE.md, "Headers"), no function in src/
# longer than 150 lines, in src/cli/ than 100 (help texts apart), no
# comment in src/ citing a work-log entry ("session 18"), no include
# circle inside src/cli or a room of src/analysis. Run by ctest
# (style.clang_format, style.shellcheck, style.internal_headers,
# style.function_length, style.worklog_refs, style.include_circles).
# Usage: check-style.sh clang-format|shellcheck|internal-headers|function-length|worklog-refs|include-circles [TREE]
#   TREE: the tree internal-headers reads (default: this one; the test that
#   shows the check bites gives it a planted one)
set -euo pipefail
cd "${2:-$(dirname "$0")/..}"

# The tree's own files named PATTERN, sorted. Not `git ls-files`: the suite
# also runs on an exported tree with no git (scripts/fresh-check.sh).
sources() {
    find include src tests bench examples scripts .ci -type f -name "$1" | LC_ALL=C sort
}

check_clang_format() {
    local f bad=0
    while IFS= read -r f; do
        if ! clang-format "$f" | cmp -s - "$f"; then
            echo "$f: not as clang-format lays it out (clang-format -i $f)" >&2
            bad=1
        fi
    done < <(sources '*.[ch]')
    return $bad
}

# Functions over MAX_FUNCTION_LINES lines in src/, and over
# MAX_CLI_FUNCTION_LINES in src/cli/ (a command's entry parses, answers and
# writes; the planner, ana_plan.h, chooses how it is answered) but its help
# texts (usage, print_help), from the first line of the definition to its
# closing brace, as clang-format lays C out: a definition starts in column 0
# and its body opens with "{" alone on a line.
MAX_FUNCTION_LINES=${MAX_FUNCTION_LINES:-150}
MAX_CLI_FUNCTION_LINES=${MAX_CLI_FUNCTION_LINES:-100}
check_function_length() {
    # shellcheck disable=SC2016 # the $ are awk's
    find src -type f -name '*.c' | LC_ALL=C sort |
        xargs awk -v max_all="$MAX_FUNCTION_LINES" -v max_cli="$MAX_CLI_FUNCTION_LINES" '
            FNR == 1 { start = 0; sig = 0 }
            /^[A-Za-z_]/ && !/;[ \t]*$/ { if (!start) { sig = FNR; name = $0 } }
            /^\{$/ { if (sig) start = sig }
            /^\}/ {
                sub(/\(.*/, "", name)
                sub(/.*[ *]/, "", name)
                max = max_all
                if (FILENAME ~ /^src\/cli\// && name !~ /^(usage|print_help)$/ && max_cli < max)
                    max = max_cli
                if (start && FNR - start + 1 > max) {
                    printf "%s:%d: %s: %d lines, over %d\n", FILENAME, start, name, FNR - start + 1, max
                    bad = 1
                }
                start = 0; sig = 0
            }
            /^$/ { if (!start) sig = 0 }
            END { exit bad }' >&2
}

# A *_internal.h is its folder's private business: another folder that
# includes one depends on what its owner may change at will (cmd_record.c
# reached into the recorder's rec_internal.h). The includes name a header
# by its path under src/ ("recorder/rec_internal.h") or, beside it, by its
# name alone. The rooms' own tests and benchmarks (tests/unit, tests/fuzz,
# bench) look inside on purpose and are left out.
check_internal_headers() {
    local f line header dir bad=0
    while IFS= read -r f; do
        case $f in tests/unit/* | tests/fuzz/* | bench/*) continue ;; esac
        while IFS= read -r line; do
            header=$(sed -E 's/^[0-9]+:[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]([^">]*)[">].*/\1/' <<<"$line")
            dir=$(dirname "$header")
            if [ "$dir" != . ] && [ "src/$dir" != "$(dirname "$f")" ]; then
                echo "$f:${line%%:*}: includes $header, private to src/$dir" >&2
                bad=1
            fi
        done < <(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"][^">]*_internal\.h[">]' "$f" || true)
    done < <(sources '*.[ch]')
    return $bad
}

# Files of a room depend one way (docs/architecture.md, "Which way
# dependencies point"): in src/cli and each room of src/analysis, no circle
# of includes between files, a file's .c, .h and _internal.h counted as one
# (cli_ana.c included cli_fold.h, whose cli_fold.c used cli_ana.h: two
# files that could not be read, or changed, one without the other).
check_include_circles() {
    local room
    for room in src/cli src/analysis/*/; do
        [ -d "$room" ] || continue
        python3 - "${room%/}" <<'PY' >&2 || return 1
import glob, os, re, sys

room = sys.argv[1]
def unit(path):
    return os.path.basename(path).rsplit(".", 1)[0].removesuffix("_internal")
edges = {}
for f in sorted(glob.glob(room + "/*.[ch]")):
    for inc in re.findall(r'^\s*#\s*include\s*"([^"]+)"', open(f).read(), re.M):
        if os.path.exists(os.path.join(room, os.path.basename(inc))) and unit(inc) != unit(f):
            edges.setdefault(unit(f), set()).add(unit(inc))
# A circle: a path from a unit back to itself (depth-first, in name order).
state, path, bad = {}, [], False
def walk(u):
    global bad
    state[u] = 1
    path.append(u)
    for v in sorted(edges.get(u, ())):
        if state.get(v) == 1:
            print("%s: include circle: %s" % (room, " -> ".join(path[path.index(v):] + [v])))
            bad = True
        elif v not in state:
            walk(v)
    path.pop()
    state[u] = 2
for u in sorted(edges):
    if u not in state:
        walk(u)
sys.exit(1 if bad else 0)
PY
    done
}

# Comments name the decision and the doc section that holds it, never a
# work-log entry ("session 18", "issue 40"): the log moves on, the docs stay.
check_worklog_refs() {
    ! grep -rniE '(session|issue) [0-9]' src >&2
}

case ${1:-} in
    clang-format) check_clang_format ;;
    shellcheck) sources '*.sh' | xargs -d '\n' shellcheck ;;
    internal-headers) check_internal_headers ;;
    function-length) check_function_length ;;
    worklog-refs) check_worklog_refs ;;
    include-circles) check_include_circles ;;
    *)
        echo "usage: $0 clang-format|shellcheck|internal-headers|function-length|worklog-refs|include-circles [TREE]" >&2
        exit 2
        ;;
esac
