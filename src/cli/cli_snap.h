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

#include <stdint.h>
#include <sys/types.h>

struct fmt_writer;
struct rec_statuses;

struct cli_snap {
    char *dir;
    char *trace;       /* DIR/trace.mscr */
    uint64_t every_ns; /* 0: no snapshots */
    uint64_t next_ns;  /* monotonic time of the next one */
    unsigned nr;       /* snapshots started */
    unsigned nr_late;  /* ticks skipped: the one before was still being written */
    pid_t pid;         /* the export running, 0 none */
    char *tmp, *final; /* its file while written, and its name */
};

/* Make DIR (it may exist) and name the trace in it. Dies naming DIR if
 * it cannot be made. start_ns: now, on the recorder's clock. */
void cli_snap_init(struct cli_snap *sn, const char *dir, uint64_t every_ns, uint64_t start_ns);

/* Called each round of the recorder's loop, after rec_reap: notes the end
 * of the export running (its status from st), and when a period has passed
 * flushes the trace (w) and starts the next export, unless one is still
 * running (that tick is skipped). */
void cli_snap_round(struct cli_snap *sn, const struct rec_statuses *st, struct fmt_writer *w,
                    uint64_t now_ns);

/* After the loop (every child reaped): the end of the last export. Says
 * on stderr how many snapshots were written unless quiet. */
void cli_snap_finish(struct cli_snap *sn, const struct rec_statuses *st, int quiet);

/* Free what cli_snap_init made (the trace's name too). */
void cli_snap_release(struct cli_snap *sn);

#endif
