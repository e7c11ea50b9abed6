/* SPDX-License-Identifier: MIT */
/* memscribe replay's two halves: turning one process of a trace into the
 * worker's operation stream (replay/rpl_op.h), and running the worker
 * under an allocator and reading back what it measured. */
#ifndef CLI_REPLAY_H
#define CLI_REPLAY_H

#include <stdint.h>
#include <stdio.h>

#include "memscribe/trace.h"
#include "replay/rpl_op.h"

/* One RSS sample point of the stream: the trace time and the heap in use
 * (requested bytes of the replayed process) when the worker reads RSS. */
struct cli_replay_point {
    uint64_t ts_ns;
    uint64_t heap;
};

/* What a pass over the trace found; the same on every pass. */
struct cli_replay_plan {
    uint32_t image;
    uint32_t touch;       /* enum rpl_touch */
    uint64_t touch_limit; /* RPL_TOUCH_PAGES: bytes of live blocks written in full */
    uint32_t nr_want_samples;
    uint64_t first_ns, last_ns; /* the process's first and last heap call */
    uint64_t nr_calls;          /* heap calls sent to the worker */
    uint64_t nr_threads;        /* threads that made them */
    uint64_t nr_slots;          /* most blocks live at once */
    uint64_t unknown_frees;     /* frees of blocks the process did not allocate (fork) */
    uint64_t unknown_reallocs;  /* reallocs of such blocks, replayed as from NULL */
    uint64_t failed;            /* calls that failed in the trace, not replayed */
    uint64_t peak_heap, peak_ns, peak_call; /* the heap peak: after call number peak_call */
    uint64_t end_heap, end_blocks;
    struct cli_replay_point *points; /* by sample id */
    uint64_t nr_points;
    uint64_t peak_point; /* sample id taken at the peak */
};

/* Why trace r cannot be replayed (an aggregated one), or NULL. */
const char *cli_replay_refuses(const struct fmt_reader *r);

/* Read trace r from its start and write the stream for plan->image to fd
 * (fd < 0: only fill the plan). The first pass (fd < 0) must come first:
 * it finds the peak the later ones mark. Returns 0, -ENOTSUP (see
 * cli_replay_refuses), -errno from the reader (see fmt_reader_error) or
 * -EPIPE/-errno from writing. */
int cli_replay_stream(struct fmt_reader *r, struct cli_replay_plan *plan, int fd);

void cli_replay_plan_free(struct cli_replay_plan *plan);

/* What one worker run measured (the worker's output, rpl_main.c). */
struct cli_replay_run {
    char library[512];  /* the module malloc came from */
    char emulated[128]; /* calls the allocator lacks, made from its others */
    uint64_t calls, failed, cpu_ns, waits;
    uint64_t partly; /* blocks past the --touch-limit, written at their first byte */
    uint64_t peak_rss, end_rss, minflt, majflt, live_blocks, live_bytes, bookkeeping;
    uint64_t *rss;   /* by sample id */
    uint64_t *flt;   /* minor faults by sample id */
    uint64_t nr_rss; /* = plan->nr_points when complete */
};

/* Run the worker with preload (NULL: none) in LD_PRELOAD after what our
 * own environment has there, feed it the stream, and parse its output.
 * Returns 0, or dies naming the trace and the allocator. */
void cli_replay_run(const char *trace, struct fmt_reader *r, struct cli_replay_plan *plan,
                    const char *preload, const char *name, struct cli_replay_run *run);

void cli_replay_run_free(struct cli_replay_run *run);

#endif
