/* SPDX-License-Identifier: MIT */
/* The shared event loop (see ana_scan.h). */
#include "analysis/core/ana_scan.h"

#include <stdbool.h>
#include <string.h>

void ana_scan_options_init(struct ana_scan_options *o)
{
    memset(o, 0, sizeof(*o));
    o->until_ns = UINT64_MAX;
}

uint64_t ana_scan_events(const struct fmt_reader *r, uint32_t first, uint32_t end)
{
    uint64_t total = 0;

    for (uint32_t c = first; c < end; c++)
        total += fmt_reader_chunk(r, c)->nr_events;
    return total;
}

unsigned ana_scan_cut(const struct fmt_reader *r, uint32_t first, uint32_t end, unsigned n,
                      uint32_t *start)
{
    bool by_time = fmt_reader_info(r)->aggregate_ns != 0;
    uint64_t total = ana_scan_events(r, first, end), acc = 0;
    unsigned k = 0;

    for (uint32_t c = first; k < n && c < end; k++) {
        start[k] = c;
        uint64_t goal = total * (k + 1) / n;
        for (acc += fmt_reader_chunk(r, c)->nr_events, c++; c < end; c++) {
            const struct fmt_chunk_info *ci = fmt_reader_chunk(r, c);
            if (acc >= goal && k + 1 < n &&
                (!by_time || fmt_reader_chunk(r, c - 1)->last_ts_ns < ci->first_ts_ns))
                break;
            acc += ci->nr_events;
        }
    }
    return k;
}

int ana_scan_rest(struct fmt_reader *r)
{
    struct fmt_event ev;
    int rc;

    while ((rc = fmt_reader_next(r, &ev)) == 1)
        ;
    return rc;
}

int ana_scan_begin(struct fmt_reader *r, const struct ana_scan_options *o,
                   struct fmt_trace_counts *c)
{
    struct fmt_event ev;
    int rc;

    fmt_reader_counts(r, c);
    if (o->from_chunk && !o->range) {
        /* The chunks skipped are read too, unused: a command that seeks
         * must reject what dump rejects. */
        if ((rc = fmt_reader_seek_chunk(r, 0)))
            return rc;
        for (uint32_t k = 0; k < o->from_chunk; k++) {
            const struct fmt_chunk_info *ci = fmt_reader_chunk(r, k);

            for (uint64_t i = 0; ci && i < ci->nr_events; i++)
                if ((rc = fmt_reader_next(r, &ev)) < 0)
                    return rc;
        }
    }
    if (o->range && o->end_chunk)
        return fmt_reader_seek_range(r, o->from_chunk, o->end_chunk);
    return fmt_reader_seek_chunk(r, o->from_chunk);
}

int ana_scan_end(struct fmt_reader *r, const struct ana_scan_options *o,
                 const struct fmt_trace_counts *c, int rc)
{
    /* Stopped early: the rest is decoded unused, so that a corrupt later
     * chunk gets the verdict dump gives it (an error, never numbers). */
    if (rc == 1)
        rc = o->range ? 0 : ana_scan_rest(r);
    if (rc < 0)
        return rc;
    if (o->progress)
        o->progress(o->progress_arg, c->last_ts_ns, c->last_ts_ns);
    return 0;
}

int ana_scan(struct fmt_reader *r, const struct ana_scan_options *o, ana_event_fn *fn, void *arg)
{
    return ana_scan_inline(r, o, fn, arg);
}
