#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The tree's checked habits: every C file as clang-format lays it out
# (.clang-format) and every shell script clean under shellcheck
# (.shellcheckrc). Run by ctest (style.clang_format, style.shellcheck).
# Usage: check-style.sh clang-format|shellcheck
set -euo pipefail
cd "$(dirname "$0")/.."

# Files other branches were changing when the tree was formatted; each is
# formatted when that work lands, and leaves this list then. A listed file
# that is already clean fails the check, so the list cannot go stale.
OWED=(
    src/collector/col_hooks_heap.c src/collector/col_hooks_vm.c src/collector/col_maps.c
    src/collector/col_module.c src/collector/col_ring.c src/collector/col_state.c
    src/collector/col_sud.c src/format/fmt_rchunk.c src/format/fmt_shm.h
    src/recorder/rec_clock.c src/recorder/rec_proc.c src/cli/cmd_record.c
    tests/unit/test_rec_stream.c bench/bench_count.c bench/bench_runner.c
    bench/bench_symbolize.c
)

# The tree's own files named PATTERN, sorted. Not `git ls-files`: the suite
# also runs on an exported tree with no git (scripts/fresh-check.sh).
sources() {
    find include src tests bench examples scripts .ci -type f -name "$1" | LC_ALL=C sort
}

owed() {
    local f
    for f in "${OWED[@]}"; do
        [ "$f" = "$1" ] && return 0
    done
    return 1
}

check_clang_format() {
    local f bad=0
    while IFS= read -r f; do
        if clang-format "$f" | cmp -s - "$f"; then
            if owed "$f"; then
                echo "$f: formatted now; take it off OWED in $0" >&2
                bad=1
            fi
        elif ! owed "$f"; then
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
