/* SPDX-License-Identifier: MIT */
/* The timeline plot: heap in use and RSS over time with the peak marked,
 * cumulative allocated bytes in a panel below, and committed and reserved
 * bytes in a third panel where the plot has them. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/pictures/ana_plot.h"
#include "analysis/pictures/ana_plot_step.h"
#include "analysis/pictures/ana_svg.h"

#define LEFT 86.0
#define RIGHT 24.0

static uint64_t max_of(const uint64_t *v, size_t n)
{
    uint64_t m = 0;

    for (size_t i = 0; i < n; i++)
        m = v[i] > m ? v[i] : m;
    return m;
}

/* The address-space panel's height, and the room below it for its time
 * axis. */
#define VM_PANEL 136.0

/* Committed and reserved over time, in the panel [top, bottom]. */
static int draw_vm_panel(struct ana_svg *svg, const struct ana_plot_timeline *t,
                         const struct ana_axis *x, double top, double bottom,
                         struct ana_polyline *line)
{
    uint64_t hi = max_of(t->committed, t->nr_vm);
    struct ana_axis y = {.lo = 0, .p0 = bottom, .p1 = top, .unit = ANA_UNIT_BYTES};
    int rc;

    hi = max_of(t->reserved, t->nr_vm) > hi ? max_of(t->reserved, t->nr_vm) : hi;
    y.hi = hi ? (double)hi : 1;
    ana_axis_round_up(&y);
    ana_svg_axes(svg, x, &y, "time since start", "committed, reserved");
    line->n = 0;
    if ((rc = ana_plot_step_line(line, x, &y, t->vm_ts_ns, t->committed, t->nr_vm, t->end_ns)))
        return rc;
    ana_svg_area(svg, line->xs, line->ys, line->n, bottom, "a-com");
    ana_svg_polyline(svg, line->xs, line->ys, line->n, "s-com");
    line->n = 0;
    if ((rc = ana_plot_step_line(line, x, &y, t->vm_ts_ns, t->reserved, t->nr_vm, t->end_ns)))
        return rc;
    ana_svg_polyline(svg, line->xs, line->ys, line->n, "s-res");
    line->n = 0;
    return 0;
}

int ana_plot_timeline_svg(const struct ana_plot_timeline *t, FILE *out, int inline_svg,
                          struct ana_plot_frame *frame)
{
    double width = t->width > 0 ? t->width : 1000;
    double height = t->height > 0 ? t->height : 520;
    double heap_top = 84, heap_bottom = height - 200;
    double cum_top = height - 150, cum_bottom = height - 64;
    double vm_top = cum_bottom + 50, vm_bottom = vm_top + 86;
    double bottom = t->nr_vm ? vm_bottom : cum_bottom; /* of the lowest panel */
    struct ana_axis x = {.lo = 0,
                         .hi = t->end_ns ? (double)t->end_ns : 1,
                         .p0 = LEFT,
                         .p1 = width - RIGHT,
                         .unit = ANA_UNIT_NS};
    struct ana_axis y = {.lo = 0, .p0 = heap_bottom, .p1 = heap_top, .unit = ANA_UNIT_BYTES};
    struct ana_axis yc = {.lo = 0, .p0 = cum_bottom, .p1 = cum_top, .unit = ANA_UNIT_BYTES};
    struct ana_polyline line = {0};
    struct ana_svg svg;
    char attrs[256], a[48], b[48], label[128];
    uint64_t top_value = t->peak_bytes;
    int rc = 0, rc2;

    top_value =
        max_of(t->heap, t->nr_points) > top_value ? max_of(t->heap, t->nr_points) : top_value;
    top_value = max_of(t->rss, t->nr_rss) > top_value ? max_of(t->rss, t->nr_rss) : top_value;
    y.hi = top_value ? (double)top_value : 1;
    ana_axis_round_up(&y);
    yc.hi = t->cumulative ? (double)max_of(t->cumulative, t->nr_points) : 1;
    yc.hi = yc.hi > 0 ? yc.hi : 1;
    ana_axis_round_up(&yc);
    ana_axis_round_up(&x);

    /* The report's selection script reads the heap panel's geometry here. */
    snprintf(attrs, sizeof(attrs),
             "data-left=\"%.1f\" data-right=\"%.1f\" data-top=\"%.1f\" data-bottom=\"%.1f\" "
             "data-t-lo=\"%.0f\" data-t-hi=\"%.0f\"",
             x.p0, x.p1, heap_top, bottom, x.lo, x.hi);
    struct ana_svg_doc doc = {.width = width,
                              .height = t->nr_vm ? height + VM_PANEL : height,
                              .title = t->title ? t->title : "Heap use over time",
                              .css = ana_plot_css,
                              .root_attrs = attrs,
                              .id = inline_svg ? "timeline-svg" : NULL,
                              .inline_svg = inline_svg};
    ana_svg_begin(&svg, out, &doc);
    ana_svg_text(&svg, width / 2, 22, "middle", "title", doc.title);
    if (t->subtitle)
        ana_svg_text(&svg, width / 2, 40, "middle", "subtitle", t->subtitle);
    struct ana_legend_entry legend[] = {
        {"k-heap", "heap in use"},
        {"k-rss", "RSS (memscribe ring buffers included)"},
        {"k-cum",
         t->nr_vm ? "cumulative allocated (middle)" : "cumulative allocated (lower panel)"},
        {"k-com", "committed (bottom)"},
        {"k-res", "reserved"},
    };
    ana_svg_legend(&svg, LEFT, 64, legend, t->nr_vm ? 5 : 3);

    ana_svg_axes(&svg, &x, &y, NULL, "heap in use, RSS");
    rc = ana_plot_step_line(&line, &x, &y, t->ts_ns, t->heap, t->nr_points, t->end_ns);
    if (!rc) {
        ana_svg_area(&svg, line.xs, line.ys, line.n, heap_bottom, "a-heap");
        ana_svg_polyline(&svg, line.xs, line.ys, line.n, "s-heap");
        line.n = 0;
    }
    if (!rc && t->nr_rss) {
        rc = ana_plot_step_line(&line, &x, &y, t->rss_ts_ns, t->rss, t->nr_rss, t->end_ns);
        if (!rc)
            ana_svg_polyline(&svg, line.xs, line.ys, line.n, "s-rss");
        line.n = 0;
    }
    if (t->peak_bytes) {
        double px = ana_axis_map(&x, (double)t->peak_ns);
        double py = ana_axis_map(&y, (double)t->peak_bytes);
        int right_side = px > (x.p0 + x.p1) / 2;

        ana_svg_line(&svg, px, py, px, heap_bottom, "peak-line");
        ana_svg_raw(&svg,
                    "<circle class=\"peak\" id=\"peak\" cx=\"%.1f\" cy=\"%.1f\" r=\"4.5\"/>\n", px,
                    py);
        snprintf(label, sizeof(label), "peak %s at %s",
                 ana_unit_format(ANA_UNIT_BYTES, (double)t->peak_bytes, a, sizeof(a)),
                 ana_unit_format(ANA_UNIT_NS, (double)t->peak_ns, b, sizeof(b)));
        ana_svg_text(&svg, right_side ? px - 8 : px + 8, py < heap_top + 14 ? py + 16 : py - 8,
                     right_side ? "end" : "start", "peak-label", label);
    }

    ana_svg_axes(&svg, &x, &yc, t->nr_vm ? NULL : "time since start", "allocated");
    if (!rc && t->cumulative) {
        rc = ana_plot_step_line(&line, &x, &yc, t->ts_ns, t->cumulative, t->nr_points, t->end_ns);
        if (!rc) {
            ana_svg_area(&svg, line.xs, line.ys, line.n, cum_bottom, "a-cum");
            ana_svg_polyline(&svg, line.xs, line.ys, line.n, "s-cum");
        }
    }
    if (!rc && t->nr_vm)
        rc = draw_vm_panel(&svg, t, &x, vm_top, vm_bottom, &line);
    ana_polyline_free(&line);
    if (frame) {
        frame->left = x.p0;
        frame->right = x.p1;
        frame->top = heap_top;
        frame->bottom = bottom;
        frame->t_lo_ns = (uint64_t)x.lo;
        frame->t_hi_ns = (uint64_t)x.hi;
    }
    rc2 = ana_svg_end(&svg);
    return rc ? rc : rc2;
}
