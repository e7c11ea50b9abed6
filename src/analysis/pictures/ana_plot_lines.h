/* SPDX-License-Identifier: MIT */
/* A plot of several series over one time axis, the heap in use under them
 * as an area: RSS under each allocator in `memscribe replay --svg`. */
#ifndef ANA_PLOT_LINES_H
#define ANA_PLOT_LINES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct ana_plot_series {
    const char *label; /* escaped when drawn */
    const uint64_t *v; /* one value per point */
};

struct ana_plot_lines {
    const uint64_t *ts_ns; /* points in time order; values hold until the next */
    size_t nr_points;
    uint64_t end_ns;      /* the x axis' end */
    const uint64_t *heap; /* heap in use per point, or NULL */
    const struct ana_plot_series *series;
    size_t nr_series; /* the first eight get distinct colours, then they repeat */
    const char *title;
    const char *subtitle; /* may be NULL */
    double width, height; /* 0: 1000 x 480 */
};

/* Draw it as a standalone SVG. Returns 0, -ENOMEM or -errno from writing. */
int ana_plot_lines_svg(const struct ana_plot_lines *p, FILE *out);

#endif
