#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The docs read as a product's (docs/install.md; the shape later work
# keeps): usage: docs_shape.sh CHECK
#   readme    README.md under 150 lines, the two commands (.ci/run and
#             scripts/fresh-check.sh run them) in its first 15 lines, every
#             file it links to present
#   bench     bench/README.md under 250 lines (history: bench/notes/)
#   pages     every docs/*.md under 400 lines
#   commands  each command of `memscribe --help` has its page (top: serve.md)
#             opening with "## Synopsis" (the command's usage, indented)
#             and then "## Example" (a command run, "$ memscribe ...", and
#             what it printed); so do the pages of what is not a command
#             (FEATURE_PAGES: aggregate, install, json, symbols, windows),
#             with any usage and any command run. The pages of the design
#             (architecture, format, protocol and the like) and the parts a
#             command's page links (record-*, export-tables) are not held.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" --go-on docs-shape MEMSCRIBE MS_SOURCE
cd "$MS_SOURCE" || exit 1

# usage: under FILE N: FILE has fewer than N lines
under() {
    local n
    n=$(wc -l <"$1")
    [ "$n" -lt "$2" ] || fail "$1: $n lines, not under $2"
}

# usage: shape CMD PAGE: PAGE's first two sections are "## Synopsis" (with an
# indented "memscribe CMD" line; any indented line when CMD is empty) and
# "## Example" (an indented "$ memscribe ..." run, any "$ ..." when CMD is
# empty, then a line of its output).
shape() {
    local c=$1 page=$2
    awk -v cmd="$c" -v page="$page" '
        /^## / { n++; if (n == 1) h1 = $0; else if (n == 2) h2 = $0; next }
        n == 1 && cmd == "" && /^    [^ ]/ { syn = 1 }
        n == 1 && cmd != "" && $0 ~ ("^    memscribe " cmd "( |$)") { syn = 1 }
        n == 1 && cmd == "record" && /^    memscribe record/ { syn = 1 }
        n == 2 && (cmd == "" ? /^    \$ / : /^    \$ memscribe /) { ran = 1; next }
        n == 2 && ran && /^    [^$ ]/ { out = 1 }
        END {
            if (h1 != "## Synopsis") { print page ": its first section is \"" h1 "\", not \"## Synopsis\""; bad = 1 }
            else if (!syn) { print page ": its synopsis shows no \"memscribe " cmd "\" line"; bad = 1 }
            if (h2 != "## Example") { print page ": its second section is \"" h2 "\", not \"## Example\""; bad = 1 }
            else if (!ran || !out) { print page ": its example runs no \"$ memscribe ...\" with its output"; bad = 1 }
            exit bad
        }' "$page" >&2
}

FEATURE_PAGES=(aggregate install json symbols windows)

case ${1:-} in
readme)
    under README.md 150
    for c in "bash scripts/demo.sh" "bash scripts/test.sh"; do
        head -15 README.md | grep -qE "^    $c( |$)" || fail "README.md: '$c' not among its first 15 lines"
    done
    grep -qE '!\[[^]]*\]\(docs/img/[^)]+\.png\)' README.md || fail "README.md: no picture of the page"
    while IFS= read -r link; do
        [ -e "${link%%#*}" ] || fail "README.md links to $link, which is not there"
    done < <(grep -oE '\]\([^)#:]+(#[^)]*)?\)' README.md | sed -E 's/^\]\(//; s/\)$//')
    finish "README.md: $(wc -l <README.md) lines, the two commands first, its links present"
    ;;
bench)
    under bench/README.md 250
    finish "bench/README.md: $(wc -l <bench/README.md) lines"
    ;;
pages)
    for f in docs/*.md; do under "$f" 400; done
    finish "docs/*.md: every page under 400 lines"
    ;;
commands)
    mapfile -t cmds < <("$MEMSCRIBE" --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { exit }')
    [ "${#cmds[@]}" -gt 10 ] || fail "memscribe --help lists ${#cmds[@]} commands"
    for c in "${cmds[@]}"; do
        page=docs/$c.md
        [ "$c" = top ] && page=docs/serve.md
        [ -f "$page" ] || { fail "$c: no page $page"; continue; }
        shape "$c" "$page" || fail "$c: $page does not open with a synopsis and a worked example"
    done
    for p in "${FEATURE_PAGES[@]}"; do
        shape "" "docs/$p.md" || fail "docs/$p.md does not open with a synopsis and a worked example"
    done
    finish "${#cmds[@]} commands and ${#FEATURE_PAGES[@]} other pages: each opens with a synopsis and a worked example"
    ;;
*)
    echo "usage: docs_shape.sh readme|bench|pages|commands" >&2
    exit 2
    ;;
esac
