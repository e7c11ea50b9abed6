#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every command that reads a trace refuses what is not a regular file (a
# FIFO would make it wait for a writer for ever, a directory has no bytes):
# a message naming the file, exit 1, at once.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" --go-on ana-notfile MEMSCRIBE
mkfifo "$WORK/fifo.mscr"
mkdir "$WORK/dir.mscr"

# usage: refused WHAT WANT ARGS...: memscribe ARGS exits 1 at once (within
# 20 s) with the fixed string WANT in its stderr.
refused() {
    local what=$1 want=$2 rc
    shift 2
    timeout 20 "$MEMSCRIBE" "$@" >"$WORK/out" 2>"$WORK/err"
    rc=$?
    if [ "$rc" -ne 1 ] || ! grep -qF -- "$want" "$WORK/err"; then
        fail "$what: exit $rc (want 1, 124 is a hang), stderr:"
        cat "$WORK/err"
    fi
}

cmds=("dump" "report" "leaks" "window" "timeline" "vmem" "frag" "histogram" "tree"
      "plot timeline" "plot histogram" "flamegraph" "html" "export --to csv -o $WORK/x.csv")
for what in fifo dir; do
    for cmd in "${cmds[@]}"; do
        # shellcheck disable=SC2086 # the command's words
        refused "$cmd on a $what" "$what.mscr: offset 0: not a regular file" $cmd "$WORK/$what.mscr"
    done
done

# Suppression files are inputs too: /dev/zero grew memory by 1 GB/s, a FIFO
# hung, a directory passed as no rules. A file larger than the bound is
# refused with its size.
"$MEMSCRIBE" record -q -o "$WORK/t.mscr" -- true >/dev/null 2>&1 || fail "record true failed"
head -c $((1024 * 1024 + 1)) /dev/zero | tr '\0' '#' >"$WORK/big.supp"
printf 'leak:x\0leak:y\n' >"$WORK/nul.supp"
for opt in --suppress --lsan-suppressions; do
    for cmd in leaks report; do
        for bad in "$WORK/fifo.mscr:not a regular file" "$WORK/dir.mscr:not a regular file" \
                   "/dev/zero:not a regular file" "$WORK/big.supp:larger than a rules file's 1048576 bytes" \
                   "$WORK/nul.supp:a NUL byte in it"; do
            file=${bad%%:*} why=${bad#*:}
            refused "$cmd $opt $file" "$cmd: $file: cannot read the suppressions: $why" \
                "$cmd" "$opt" "$file" "$WORK/t.mscr"
        done
    done
done
finish "ana_notfile: ${#cmds[@]} commands refuse a FIFO and a directory; leaks and report refuse" \
    "suppression files that are not regular files, too large or not text"
