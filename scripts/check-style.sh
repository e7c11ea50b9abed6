#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The tree's checked habits: every C file as clang-format lays it out
# (.clang-format), every shell script clean under shellcheck
# (.shellcheckrc), and no function of the analysis or the command (but
# record's, cmd_record*.c) longer than 150 lines. Run by ctest
# (style.clang_format, style.shellcheck, style.function_length).
# Usage: check-style.sh clang-format|shellcheck|function-length
set -euo pipefail
cd "$(dirname "$0")/.."

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

# Functions over MAX_FUNCTION_LINES lines, from the first line of the
# definition to its closing brace, as clang-format lays C out: a definition
# starts in column 0 and its body opens with "{" alone on a line.
MAX_FUNCTION_LINES=${MAX_FUNCTION_LINES:-150}
check_function_length() {
    # shellcheck disable=SC2016 # the $ are awk's
    find src/analysis src/cli -type f -name '*.c' ! -name 'cmd_record*' | LC_ALL=C sort |
        xargs awk -v max="$MAX_FUNCTION_LINES" '
            FNR == 1 { start = 0; sig = 0 }
            /^[A-Za-z_]/ && !/;[ \t]*$/ { if (!start) { sig = FNR; name = $0 } }
            /^\{$/ { if (sig) start = sig }
            /^\}/ {
                if (start && FNR - start + 1 > max) {
                    sub(/\(.*/, "", name)
                    sub(/.*[ *]/, "", name)
                    printf "%s:%d: %s: %d lines, over %d\n", FILENAME, start, name, FNR - start + 1, max
                    bad = 1
                }
                start = 0; sig = 0
            }
            /^$/ { if (!start) sig = 0 }
            END { exit bad }' >&2
}

case ${1:-} in
    clang-format) check_clang_format ;;
    shellcheck) sources '*.sh' | xargs -d '\n' shellcheck ;;
    function-length) check_function_length ;;
    *)
        echo "usage: $0 clang-format|shellcheck|function-length" >&2
        exit 2
        ;;
esac
