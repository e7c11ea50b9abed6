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
};

/* Defaults: from chunk 0 to the end, no progress. */
void ana_scan_options_init(struct ana_scan_options *o);

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

#endif
