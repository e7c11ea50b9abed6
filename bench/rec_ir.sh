#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The recorder's instructions per event, the same under any load: callgrind
# on rec_replay (bench/rec_replay.c), which sends a trace's heap calls
# through in-memory rings, the recorder's drain and merge and the writer.
# Only those count (--toggle-collect), not reading the trace or filling
# the rings. Also says whether the traces the binaries write are the same.
#
# usage: bench/rec_ir.sh NAME=REC_REPLAY... -- TRACE...
#   REC_REPLAY  rec_replay binaries to compare, each with a column name. The
#               project build makes build/bench/rec_replay; for an older tree:
#               cc -O2 -D_GNU_SOURCE -I OLD/include -I OLD/src bench/rec_replay.c \
#                 OLD/build/src/recorder/libms_recorder.a \
#                 OLD/build/src/format/libms_format.a OLD/build/src/util/libms_util.a \
#                 -lzstd -lz -lm -o rec_replay.old
#   TRACE       traces whose heap calls are replayed (memscribe record ...)
set -euo pipefail
USAGE="bench/rec_ir.sh NAME=REC_REPLAY... -- TRACE..."
# shellcheck source=bench/tool_args.sh
. "$(dirname "$0")/tool_args.sh"
tool_args 0 "$USAGE" "$@"
[ ${#REST[@]} -gt 0 ] || {
    echo "usage: $USAGE" >&2
    exit 2
}
set -- "${REST[@]}"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/rec-ir.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

printf '| trace | events |'
for n in "${NAMES[@]}"; do printf ' %s: Ir/event |' "$n"; done
printf ' traces written |\n'
for t in "$@"; do
    row="" events=""
    for i in "${!TOOLS[@]}"; do
        valgrind --tool=callgrind --callgrind-out-file="$WORK/cg" \
            --toggle-collect=rec_stream_drain --toggle-collect=rec_merge_emit \
            --toggle-collect=rec_stream_close --toggle-collect=fmt_writer_finish \
            "${TOOLS[$i]}" "$t" "$WORK/out.$i" >"$WORK/log" 2>/dev/null
        events=$(grep -o '[0-9]* events' "$WORK/log" | cut -d' ' -f1)
        ir=$(awk '/^totals:/ { print $2 }' "$WORK/cg")
        row="$row $(awk -v s="$ir" -v e="$events" 'BEGIN { printf "%.1f", s / e }') |"
    done
    same=identical
    for i in "${!TOOLS[@]}"; do
        cmp -s "$WORK/out.0" "$WORK/out.$i" || same=different
    done
    printf '| %s | %s |%s %s |\n' "$(basename "$t")" "$events" "$row" "$same"
done
