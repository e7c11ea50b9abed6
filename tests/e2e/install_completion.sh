#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bash completion (packaging/memscribe.bash-completion) as bash-completion
# runs it: commands, a command's options (from its --help), option values,
# trace files (*.mscr) for an analysis command, and the program record runs.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" --go-on install-completion MEMSCRIBE MS_SOURCE
bc=/usr/share/bash-completion/bash_completion
[ -f "$bc" ] || { fail "no $bc: run scripts/setup.sh --test"; finish ""; }
mkdir -p "$WORK/bin" "$WORK/cwd/sub"
ln -s "$MEMSCRIBE" "$WORK/bin/memscribe"
touch "$WORK/cwd/a.mscr" "$WORK/cwd/b.txt"

# usage: complete_words WORDS...: the candidates for the last word, sorted,
# on one line (compopt, which works only inside a real completion, is quiet).
complete_words() {
    (cd "$WORK/cwd" && PATH=$WORK/bin:$PATH bash --norc --noprofile -c '
        source "$1"; source "$2"; shift 2
        COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
        COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
        _memscribe memscribe "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
        printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " "' _ "$bc" "$MS_SOURCE/packaging/memscribe.bash-completion" "$@" 2>/dev/null)
}

expect "memscribe re" "$(complete_words memscribe re)" "record replay report "
expect "memscribe fl" "$(complete_words memscribe fl)" "flamegraph "
got=$(complete_words memscribe report --t)
[[ " $got " == *" --top "* && " $got " == *" --thread "* ]] || fail "report --t: got '$got'"
[[ " $got " != *" --to "* ]] || fail "report --t offers export's --to: '$got'"
expect "export --to h" "$(complete_words memscribe export --to h)" "heaptrack "
expect "leaks --format j" "$(complete_words memscribe leaks --format j)" "json "
# Folders too, to go down into (bash adds their slash: compopt -o filenames).
expect "report (a trace)" "$(complete_words memscribe report '')" "a.mscr sub "
got=$(complete_words memscribe record -o t.mscr -- ech)
[[ " $got " == *" echo "* ]] || fail "record -- ech: got '$got', want echo among them"
finish "completion: commands, options, values, traces and record's program"
