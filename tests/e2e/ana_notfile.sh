#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every command that reads a trace refuses what is not a regular file (a
# FIFO would make it wait for a writer for ever, a directory has no bytes):
# a message naming the file, exit 1, at once.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" --go-on ana-notfile MEMSCRIBE
mkfifo "$WORK/fifo.mscr"
mkdir "$WORK/dir.mscr"

cmds=("dump" "report" "leaks" "window" "timeline" "vmem" "frag" "histogram" "tree"
      "plot timeline" "plot histogram" "flamegraph" "html" "export --to csv -o $WORK/x.csv")
for what in fifo dir; do
    for cmd in "${cmds[@]}"; do
        # shellcheck disable=SC2086 # the command's words
        timeout 20 "$MEMSCRIBE" $cmd "$WORK/$what.mscr" >"$WORK/out" 2>"$WORK/err"
        rc=$?
        if [ "$rc" -ne 1 ] || ! grep -q "$what.mscr: offset 0: not a regular file" "$WORK/err"; then
            fail "$cmd on a $what: exit $rc (want 1, 124 is a hang), stderr:"
            cat "$WORK/err"
        fi
    done
done
finish "ana_notfile: ${#cmds[@]} commands refuse a FIFO and a directory"
