/* SPDX-License-Identifier: MIT */
/* record --snapshot-every T -o DIR (docs/record.md, "Snapshots"): while
 * the program runs, every T a pprof profile (gzipped profile.proto) of the
 * heap in use and allocated so far, DIR/heap.0001.pb.gz, ..., beside the
 * trace, DIR/trace.mscr. Each is made by `memscribe export --to pprof` in
 * a process of its own, from the trace as flushed at that tick (its whole
 * chunks: the reader reads an unfinished trace), so the recorder never
 * waits for symbols; it appears under its name only once complete. */
#ifndef CLI_SNAP_H
#define CLI_SNAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "recorder/rec_session.h"

struct cli_snap {
    char *dir;
    char *trace;       /* DIR/trace.mscr */
    uint64_t every_ns; /* 0: no snapshots */
    uint64_t next_ns;  /* monotonic time of the next one (0: the first round sets it) */
    unsigned nr;       /* snapshots started */
    unsigned nr_late;  /* ticks skipped: the one before was still being written */
    int quiet;         /* no line at the end saying how many */
    pid_t pid;         /* the export running, 0 none */
    char *tmp, *final; /* its file while written, and its name */
};

/* Name the trace in DIR (the recording's -o). */
void cli_snap_init(struct cli_snap *sn, const char *dir, uint64_t every_ns, int quiet);
/* Make DIR (it may exist; one there must be ours or root's), once the
 * checks before recording have passed. 0, or -1 with the reason in msg. */
int cli_snap_make(struct cli_snap *sn, char *msg, size_t msg_size);

/* The recording session's tap (rec_session_add_tap, its argument the
 * struct cli_snap): each round, notes the end of the export running (its
 * status as the session collected it) and when a period has passed flushes
 * the trace and starts the next export, unless one is still running (that
 * tick is skipped); after the recording, waits for the last export and
 * says on stderr how many snapshots were written unless quiet. */
extern const struct rec_tap_ops cli_snap_tap;

/* Free what cli_snap_init made (the trace's name too). */
void cli_snap_release(struct cli_snap *sn);

#endif
