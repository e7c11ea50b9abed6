/* SPDX-License-Identifier: MIT */
/* Plots as SVG: heap use over time and the allocation size histogram.
 *
 * The numbers come from the analysis model (timeline samples, histogram
 * buckets); these functions only draw them, so a plot shows what
 * `memscribe timeline` and `memscribe histogram` print. */
#ifndef ANA_PLOT_H
#define ANA_PLOT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Heap use over time. Points are in time order; heap[i] and cumulative[i]
 * hold from ts_ns[i] until the next point (a step function). RSS samples
 * are optional (nr_rss 0). */
struct ana_plot_timeline {
    const uint64_t *ts_ns;
    const uint64_t *heap;       /* bytes in use */
    const uint64_t *cumulative; /* bytes allocated so far (may be NULL) */
    size_t nr_points;
    const uint64_t *rss_ts_ns;
    const uint64_t *rss;
    size_t nr_rss;
    uint64_t end_ns; /* the trace's last event, the x axis' end */
    uint64_t peak_ns, peak_bytes;
    /* The address space, in a panel of its own below the others when
     * nr_vm is not 0 (the HTML report's; plot timeline has none):
     * committed and reserved bytes, each held from vm_ts_ns[i]. */
    const uint64_t *vm_ts_ns, *committed, *reserved;
    size_t nr_vm;
    const char *title;    /* escaped; NULL: a default */
    const char *subtitle; /* escaped, e.g. the command line; may be NULL */
    double width, height; /* 0: 1000 x 520 */
};

/* Where the panels of a timeline SVG sit, for scripts that draw over
 * them (the HTML report's range selection): top of the heap panel to the
 * bottom of the lowest. */
struct ana_plot_frame {
    double left, right, top, bottom; /* pixels */
    uint64_t t_lo_ns, t_hi_ns;       /* times at left and right */
};

/* Draw the timeline: heap in use and RSS on top with the peak marked,
 * cumulative allocated bytes below, and committed and reserved bytes in a
 * third panel if the plot has them (136 px more than height). Long series are reduced to the first,
 * smallest, largest and last value per pixel column, which keeps every
 * spike visible. With inline set, no XML prolog is written (for embedding
 * in HTML). *frame, if not NULL, receives the heap panel's geometry.
 * Returns 0, -ENOMEM, or -errno from writing. */
int ana_plot_timeline_svg(const struct ana_plot_timeline *t, FILE *out, int inline_svg,
                          struct ana_plot_frame *frame);

/* One bucket of the size histogram: requested sizes in [lo, hi]. */
struct ana_plot_bucket {
    uint64_t lo, hi;
    uint64_t count;
    uint64_t bytes;
};

struct ana_plot_histogram {
    const struct ana_plot_bucket *buckets; /* increasing lo */
    size_t nr_buckets;
    const char *title;
    const char *subtitle;
    double width, height; /* 0: 1000 x 560 */
};

/* Draw allocation counts and bytes per size class, log-log, in two
 * panels. Returns 0 or -errno from writing. */
int ana_plot_histogram_svg(const struct ana_plot_histogram *h, FILE *out, int inline_svg);

/* The style sheet every plot uses (classes of ana_svg_axes, series). */
extern const char ana_plot_css[];

#endif
