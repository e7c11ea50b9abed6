/* SPDX-License-Identifier: MIT */
/* The shared event loop (see ana_scan.h). */
#include "analysis/core/ana_scan.h"

#include <string.h>

/* Progress every this many events: rare enough to cost nothing. */
#define PROGRESS_EVERY (1u << 18)

void ana_scan_options_init(struct ana_scan_options *o)
{
    memset(o, 0, sizeof(*o));
    o->until_ns = UINT64_MAX;
}

int ana_scan(struct fmt_reader *r, const struct ana_scan_options *o, ana_event_fn *fn, void *arg)
{
    struct fmt_trace_counts c;
    struct fmt_event ev;
    uint32_t tick = 0;
    int rc;

    fmt_reader_counts(r, &c);
    if ((rc = fmt_reader_seek_chunk(r, o->from_chunk)))
        return rc;
    while ((rc = fmt_reader_next(r, &ev)) == 1) {
        if (ev.ts_ns > o->until_ns)
            break;
        if ((rc = fn(arg, &ev)))
            return rc > 0 ? 0 : rc;
        if (o->progress && ++tick == PROGRESS_EVERY) {
            tick = 0;
            o->progress(o->progress_arg, ev.ts_ns, c.last_ts_ns);
        }
    }
    if (rc < 0)
        return rc;
    if (o->progress)
        o->progress(o->progress_arg, c.last_ts_ns, c.last_ts_ns);
    return 0;
}
