/* SPDX-License-Identifier: MIT */
/* Turning the analysis core's results into plot inputs (ana_plot.h). */
#ifndef ANA_PLOT_DATA_H
#define ANA_PLOT_DATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/model/ana_histogram.h"
#include "analysis/pictures/ana_plot.h"

struct ana_timeline;
struct ana_scope;

/* The arrays a timeline plot points into. */
struct ana_plot_series {
    uint64_t *ts, *heap, *cum;
    size_t n;
    uint64_t *rss_ts, *rss;
    size_t nr_rss;
    uint64_t *vm_ts, *committed, *reserved; /* one point per time */
    size_t nr_vm;
};

/* Fill p from the core's timeline rows (images summed per time; with
 * several images an interval's maximum is the sum of theirs, an upper
 * bound) and the model's all-images scope for the exact peak. The arrays
 * live in s; release them with ana_plot_series_release(). Returns 0 or
 * -ENOMEM. */
int ana_plot_timeline_from(struct ana_plot_timeline *p, struct ana_plot_series *s,
                           const struct ana_timeline *tl, const struct ana_scope *total,
                           uint64_t end_ns);
void ana_plot_series_release(struct ana_plot_series *s);
/* Draw p's address-space panel too, from s's committed and reserved
 * series (ana_plot_timeline_from fills them, images summed per time), if
 * anything was mapped. Returns whether it will. */
bool ana_plot_timeline_address_space(struct ana_plot_timeline *p, const struct ana_plot_series *s);

/* The histogram's non-empty size classes, all images summed, in size
 * order. Returns the number written. */
size_t ana_plot_buckets_from(struct ana_plot_bucket out[ANA_NR_SIZE_CLASSES],
                             const struct ana_histogram *h);

/* The trace's command line as one line of text (words joined by spaces),
 * for subtitles. Returns buf. */
struct fmt_trace_info;
char *ana_plot_command_line(const struct fmt_trace_info *info, char *buf, size_t size);

#endif
