#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every command that reads a trace refuses what is not a regular file (a
# FIFO would make it wait for a writer for ever, a directory has no bytes):
# a message naming the file, exit 1, at once.
set -uo pipefail
: "${MEMSCRIBE:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
mkfifo "$tmp/fifo.mscr"
mkdir "$tmp/dir.mscr"

cmds=("dump" "report" "leaks" "window" "timeline" "vmem" "frag" "histogram" "tree"
      "plot timeline" "plot histogram" "flamegraph" "html" "export --to csv -o $tmp/x.csv")
for what in fifo dir; do
    for cmd in "${cmds[@]}"; do
        # shellcheck disable=SC2086 # the command's words
        timeout 20 "$MEMSCRIBE" $cmd "$tmp/$what.mscr" >"$tmp/out" 2>"$tmp/err"
        rc=$?
        if [ "$rc" -ne 1 ] || ! grep -q "$what.mscr: offset 0: not a regular file" "$tmp/err"; then
            echo "FAIL: $cmd on a $what: exit $rc (want 1, 124 is a hang), stderr:"
            cat "$tmp/err"
            fails=$((fails + 1))
        fi
    done
done
[ "$fails" -eq 0 ] && echo "ana_notfile: ${#cmds[@]} commands refuse a FIFO and a directory"
exit $((fails > 0))
