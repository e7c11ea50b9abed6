#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Mutants of tests/fuzz/mutate.py that commands once disagreed on, now in
# the fuzz corpus: every command rejects each with the same message, which
# names the file, the offset and the problem, exits 1, and stays within a
# memory bound the 1-3 KB file justifies. Before: an event time past its
# chunk's summary made leaks, window and frag stop "at the end" with
# numbers short of report's (time-late-*), timeline and plot timeline run
# out of rows (hundreds of MB, then "Argument list too long" or a
# complaint about an --interval nobody gave) and html hang (time-huge-*,
# time-4g-*); window --from/--to, leaks --at and frag --at read only up to
# their times and exited 0 with numbers on a file dump rejects (seek-*).
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" --go-on ana-corrupt MEMSCRIBE MS_SOURCE
corpus=$MS_SOURCE/tests/fuzz/corpus
cmds=("dump" "report" "leaks" "window" "timeline" "vmem" "frag" "histogram" "tree"
      "plot timeline" "plot histogram" "flamegraph" "html" "export --to csv -o $WORK/out.csv")
# The commands that read only up to a time, or from one, for the seek-*
# mutants (with dump and report, which read everything).
seek_cmds=("dump" "report" "window --from 1ms --to 2ms" "window --to 1ms" "leaks --at 1ms"
           "frag --at 1ms" "vmem --from 1ms --to 2ms")
# Peak RSS allowed per command (ASan build included), in MiB.
max_mib=120

check() { # name offset problem [commands...]
    local name=$1 offset=$2 problem=$3 cmd rc mib word
    local -a run=("${cmds[@]}")
    [ $# -le 3 ] || run=("${@:4}")
    cp "$corpus/$name" "$WORK/$name.mscr"
    for cmd in "${run[@]}"; do
        word=${cmd%% *}
        # shellcheck disable=SC2086 # the command's words
        mib=$(python3 - "$WORK/err" "$MEMSCRIBE" $cmd "$WORK/$name.mscr" <<'PY'
import resource, subprocess, sys
try:
    rc = subprocess.run(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=open(sys.argv[1], "w"),
                        timeout=60).returncode
except subprocess.TimeoutExpired:
    rc = 124
print(rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)
PY
)
        rc=${mib% *}
        mib=${mib#* }
        if [ "$rc" -ne 1 ] ||
            ! grep -qxF "memscribe: $word: $WORK/$name.mscr: offset $offset: $problem" "$WORK/err"; then
            fail "$cmd $name: exit $rc (want 1 and '$WORK/$name.mscr: offset $offset: $problem'):"
            cat "$WORK/err"
        fi
        if [ "$mib" -gt "$max_mib" ]; then
            fail "$cmd $name: peak RSS $mib MiB, want at most $max_mib"
        fi
    done
}

check time-late-leaks 2428 "chunk 14, event 0: time outside its chunk's summary"
check time-late-process 2294 "chunk 13, event 0: time outside its chunk's summary"
check time-late-fork 149 "chunk 0, event 0: time outside its chunk's summary"
check time-huge-timeline 118 "chunk 0, event 0: time outside its chunk's summary"
check time-4g-timeline 1341 "chunk 1, event 0: time outside its chunk's summary"
check seek-window-ref 1778 "chunk 10, event 0: bad reference to an earlier chunk" "${seek_cmds[@]}"
check seek-late-column 2294 "chunk 13, event 2: field runs past the end of its column" "${seek_cmds[@]}"
check seek-at-column 149 "chunk 0, event 111: field runs past the end of its column" "${seek_cmds[@]}"
finish "ana_corrupt: ${#cmds[@]} commands reject 5 corpus mutants alike, ${#seek_cmds[@]} (seeking ones) 3 more"
