/* SPDX-License-Identifier: MIT */
/* The event loop every analysis runs: read events from a chunk on, stop
 * after a time, report progress. One decoded chunk in memory at a time. */
#ifndef ANA_SCAN_H
#define ANA_SCAN_H

#include <stdbool.h>
#include <stdint.h>

#include "memscribe/trace.h"

/* Return 0 to go on, 1 to stop early, -errno to fail. */
typedef int ana_event_fn(void *arg, const struct fmt_event *ev);
/* Called now and then with the time reached and the trace's last time. */
typedef void ana_progress_fn(void *arg, uint64_t ts_ns, uint64_t last_ns);

struct ana_scan_options {
    uint32_t from_chunk;       /* seek here first */
    uint64_t until_ns;         /* stop before the first event after this */
    ana_progress_fn *progress; /* may be NULL */
    void *progress_arg;
    /* A range of a parallel replay (ana_pmodel.c): the chunks before
     * from_chunk and after the stop are other ranges', not decoded here. */
    bool range;
    /* With range: stop before this chunk (0: none; fmt_reader_seek_range),
     * where a range cannot end at a time (chunks sharing a time unit). */
    uint32_t end_chunk;
};

/* Defaults: from chunk 0 to the end, no progress. */
void ana_scan_options_init(struct ana_scan_options *o);

/* The events of chunks first..end-1. */
uint64_t ana_scan_events(const struct fmt_reader *r, uint32_t first, uint32_t end);

/* Cut chunks first..end-1 into at most n ranges of about equal events for
 * a parallel replay (each read with end_chunk, so chunks that share a time
 * unit, a storm's, may fall in two; in an aggregated trace only where time
 * advances between chunks, since a range tells it starts past the
 * trace's FMT_EV_AGGREGATE by its first time: ana_heap_replay_run).
 * start[] gets each range's first chunk. Returns the number of ranges:
 * 0 when first >= end. */
unsigned ana_scan_cut(const struct fmt_reader *r, uint32_t first, uint32_t end, unsigned n,
                      uint32_t *start);

/* Feed events to fn. Every chunk is decoded, those before from_chunk and
 * after an early stop (until_ns, fn's 1) too, unused (unless o->range): a
 * command reaches dump's verdict on a corrupt file whatever part it looks
 * at. Returns 0,
 * or fn's or the reader's -errno (the reader's message is then in
 * fmt_reader_error()). */
int ana_scan(struct fmt_reader *r, const struct ana_scan_options *o, ana_event_fn *fn, void *arg);

/* Decode the reader's remaining events, unused: 0 at the end, or the
 * reader's -errno. */
int ana_scan_rest(struct fmt_reader *r);

/* Progress every this many events: rare enough to cost nothing. */
#define ANA_SCAN_PROGRESS_EVERY (1u << 18)

/* ana_scan()'s work before its loop (the seek, the chunks before it read
 * unused; *c: the trace's counts) and after it (rc: the loop's; the rest
 * read unused, the last progress). Private to ana_scan_inline(). */
int ana_scan_begin(struct fmt_reader *r, const struct ana_scan_options *o,
                   struct fmt_trace_counts *c);
int ana_scan_end(struct fmt_reader *r, const struct ana_scan_options *o,
                 const struct fmt_trace_counts *c, int rc);

/* ana_scan() in the caller, so that a constant fn is called directly, and
 * inlined: the heap replay's loop (ana_heap_replay.c), which every report
 * pays per event (bench/bench_report.sh). */
static inline __attribute__((always_inline)) int
ana_scan_inline(struct fmt_reader *r, const struct ana_scan_options *o, ana_event_fn *fn, void *arg)
{
    struct fmt_trace_counts c;
    struct fmt_event ev;
    uint32_t tick = 0;
    int rc;

    if ((rc = ana_scan_begin(r, o, &c)))
        return rc;
    while ((rc = fmt_reader_next(r, &ev)) == 1) {
        if (ev.ts_ns > o->until_ns)
            break;
        if ((rc = fn(arg, &ev))) {
            if (rc < 0)
                return rc;
            break;
        }
        if (o->progress && ++tick == ANA_SCAN_PROGRESS_EVERY) {
            tick = 0;
            o->progress(o->progress_arg, ev.ts_ns, c.last_ts_ns);
        }
    }
    return ana_scan_end(r, o, &c, rc);
}

#endif
