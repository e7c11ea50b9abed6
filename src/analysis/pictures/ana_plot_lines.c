/* SPDX-License-Identifier: MIT */
/* Several series over time in one panel (ana_plot_lines.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/pictures/ana_plot.h"
#include "analysis/pictures/ana_plot_lines.h"
#include "analysis/pictures/ana_plot_step.h"
#include "analysis/pictures/ana_svg.h"

#define LEFT 86.0
#define RIGHT 24.0
#define NR_COLOURS 8

static const char series_css[] = ".s-l0 { stroke: #3a78c2; } .k-l0 { fill: #3a78c2; }\n"
                                 ".s-l1 { stroke: #4c9a4c; } .k-l1 { fill: #4c9a4c; }\n"
                                 ".s-l2 { stroke: #8e44ad; } .k-l2 { fill: #8e44ad; }\n"
                                 ".s-l3 { stroke: #c28a1e; } .k-l3 { fill: #c28a1e; }\n"
                                 ".s-l4 { stroke: #16a0a0; } .k-l4 { fill: #16a0a0; }\n"
                                 ".s-l5 { stroke: #7f7f7f; } .k-l5 { fill: #7f7f7f; }\n"
                                 ".s-l6 { stroke: #c2185b; } .k-l6 { fill: #c2185b; }\n"
                                 ".s-l7 { stroke: #2e4a7d; } .k-l7 { fill: #2e4a7d; }\n"
                                 ".s-line { stroke-width: 1.5; fill: none; }\n";

int ana_plot_lines_svg(const struct ana_plot_lines *p, FILE *out)
{
    double width = p->width > 0 ? p->width : 1000;
    double height = p->height > 0 ? p->height : 480;
    double top = 84, bottom = height - 64;
    struct ana_axis x = {.lo = p->nr_points ? (double)p->ts_ns[0] : 0,
                         .p0 = LEFT,
                         .p1 = width - RIGHT,
                         .unit = ANA_UNIT_NS};
    struct ana_axis y = {.lo = 0, .p0 = bottom, .p1 = top, .unit = ANA_UNIT_BYTES};
    struct ana_legend_entry *legend = calloc(p->nr_series + 1, sizeof(*legend));
    char *css = malloc(sizeof(series_css) + strlen(ana_plot_css));
    struct ana_polyline line = {0};
    struct ana_svg svg;
    uint64_t hi = 0;
    int rc = 0, rc2;

    if (!legend || !css) {
        free(legend);
        free(css);
        return -ENOMEM;
    }
    strcpy(css, ana_plot_css);
    strcat(css, series_css);
    for (size_t i = 0; i < p->nr_points; i++) {
        hi = p->heap && p->heap[i] > hi ? p->heap[i] : hi;
        for (size_t s = 0; s < p->nr_series; s++)
            hi = p->series[s].v[i] > hi ? p->series[s].v[i] : hi;
    }
    y.hi = hi ? (double)hi : 1;
    x.hi = p->end_ns > x.lo ? (double)p->end_ns : x.lo + 1;
    ana_axis_round_up(&y);

    struct ana_svg_doc doc = {.width = width, .height = height, .title = p->title, .css = css};
    ana_svg_begin(&svg, out, &doc);
    ana_svg_text(&svg, width / 2, 22, "middle", "title", p->title);
    if (p->subtitle)
        ana_svg_text(&svg, width / 2, 40, "middle", "subtitle", p->subtitle);
    size_t k = 0;
    if (p->heap)
        legend[k++] = (struct ana_legend_entry){"k-heap", "heap in use"};
    static const char *const keys[NR_COLOURS] = {"k-l0", "k-l1", "k-l2", "k-l3",
                                                 "k-l4", "k-l5", "k-l6", "k-l7"};
    for (size_t s = 0; s < p->nr_series; s++)
        legend[k++] = (struct ana_legend_entry){keys[s % NR_COLOURS], p->series[s].label};
    ana_svg_legend(&svg, LEFT, 64, legend, k);
    ana_svg_axes(&svg, &x, &y, "trace time", "bytes");
    if (p->heap) {
        rc = ana_plot_step_line(&line, &x, &y, p->ts_ns, p->heap, p->nr_points, p->end_ns);
        if (!rc) {
            ana_svg_area(&svg, line.xs, line.ys, line.n, bottom, "a-heap");
            ana_svg_polyline(&svg, line.xs, line.ys, line.n, "s-heap");
        }
    }
    for (size_t s = 0; s < p->nr_series && !rc; s++) {
        char cls[32];

        line.n = 0;
        rc = ana_plot_step_line(&line, &x, &y, p->ts_ns, p->series[s].v, p->nr_points, p->end_ns);
        snprintf(cls, sizeof(cls), "s-line s-l%zu", s % NR_COLOURS);
        if (!rc)
            ana_svg_polyline(&svg, line.xs, line.ys, line.n, cls);
    }
    ana_polyline_free(&line);
    rc2 = ana_svg_end(&svg);
    free(legend);
    free(css);
    return rc ? rc : rc2;
}
