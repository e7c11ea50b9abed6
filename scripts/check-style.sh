#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The tree's checked habits: every C file as clang-format lays it out
# (.clang-format) and every shell script clean under shellcheck
# (.shellcheckrc). Run by ctest (style.clang_format, style.shellcheck).
# Usage: check-style.sh clang-format|shellcheck
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

case ${1:-} in
    clang-format) check_clang_format ;;
    shellcheck) sources '*.sh' | xargs -d '\n' shellcheck ;;
    *)
        echo "usage: $0 clang-format|shellcheck" >&2
        exit 2
        ;;
esac
