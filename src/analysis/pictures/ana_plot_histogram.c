/* SPDX-License-Identifier: MIT */
/* The size histogram plot: allocation counts and bytes per size class on
 * log-log axes (allocation sizes span many orders of magnitude, and small
 * sizes dominate counts: a linear scale would show one bar). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analysis/pictures/ana_plot.h"
#include "analysis/pictures/ana_svg.h"

#define LEFT 86.0
#define RIGHT 24.0

static void panel(struct ana_svg *svg, const struct ana_plot_histogram *h, double top,
                  double bottom, double width, int bytes)
{
    struct ana_axis x = {
        .lo = 1, .hi = 2, .p0 = LEFT, .p1 = width - RIGHT, .log = 1, .unit = ANA_UNIT_BYTES};
    /* The count axis starts below 1 so that a class of one allocation
     * still gets a visible bar. */
    struct ana_axis y = {.lo = bytes ? 1 : 0.5,
                         .hi = 10,
                         .p0 = bottom,
                         .p1 = top,
                         .log = 1,
                         .unit = bytes ? ANA_UNIT_BYTES : ANA_UNIT_COUNT};
    int any = 0;

    for (size_t i = 0; i < h->nr_buckets; i++) {
        const struct ana_plot_bucket *b = &h->buckets[i];
        double v = (double)(bytes ? b->bytes : b->count);

        if (!b->count)
            continue;
        if (!any || (double)(b->lo ? b->lo : 1) < x.lo)
            x.lo = b->lo ? (double)b->lo : 1;
        if (!any || (double)b->hi + 1 > x.hi)
            x.hi = (double)b->hi + 1;
        if (v > y.hi)
            y.hi = v;
        any = 1;
    }
    /* Whole powers of the tick base at both ends, so the bars sit inside. */
    x.lo = pow(2, floor(log2(x.lo)));
    x.hi = pow(2, ceil(log2(x.hi)));
    if (x.hi <= x.lo)
        x.hi = x.lo * 2;
    y.hi = bytes ? pow(2, ceil(log2(y.hi))) : pow(10, ceil(log10(y.hi)));
    if (y.hi <= y.lo)
        y.hi = y.lo * 10;

    /* Both axes are logarithmic (x.log, y.log): the labels say so. */
    ana_svg_axes(svg, &x, &y, bytes ? "allocation size (requested), log scale" : NULL,
                 bytes ? "bytes allocated, log scale" : "allocations, log scale");
    for (size_t i = 0; i < h->nr_buckets; i++) {
        const struct ana_plot_bucket *b = &h->buckets[i];
        double v = (double)(bytes ? b->bytes : b->count);
        double x0, x1, y0;
        char tip[160], a[48], c[48], d[48];

        if (!b->count || v < y.lo)
            continue;
        x0 = ana_axis_map(&x, b->lo ? (double)b->lo : 1);
        x1 = ana_axis_map(&x, (double)b->hi + 1);
        y0 = ana_axis_map(&y, v);
        if (x1 - x0 < 1)
            x1 = x0 + 1;
        ana_svg_raw(svg,
                    "<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                    "height=\"%.1f\"><title>",
                    bytes ? "bar-bytes" : "bar-count", x0, y0, x1 - x0, bottom - y0);
        snprintf(tip, sizeof(tip), "%s .. %s: %llu allocations, %s",
                 ana_unit_format(ANA_UNIT_BYTES, (double)b->lo, a, sizeof(a)),
                 ana_unit_format(ANA_UNIT_BYTES, (double)b->hi, c, sizeof(c)),
                 (unsigned long long)b->count,
                 ana_unit_format(ANA_UNIT_BYTES, (double)b->bytes, d, sizeof(d)));
        ana_svg_escaped(svg, tip, strlen(tip));
        ana_svg_raw(svg, "</title></rect>\n");
    }
}

int ana_plot_histogram_svg(const struct ana_plot_histogram *h, FILE *out, int inline_svg)
{
    double width = h->width > 0 ? h->width : 1000;
    double height = h->height > 0 ? h->height : 560;
    double mid = (height - 84) / 2;
    struct ana_svg svg;
    struct ana_svg_doc doc = {.width = width,
                              .height = height,
                              .title = h->title ? h->title : "Allocation sizes",
                              .css = ana_plot_css,
                              .id = inline_svg ? "histogram-svg" : NULL,
                              .inline_svg = inline_svg};
    struct ana_legend_entry legend[] = {
        {"k-count", "allocations per size class"},
        {"k-bytes", "bytes per size class"},
    };

    ana_svg_begin(&svg, out, &doc);
    ana_svg_text(&svg, width / 2, 22, "middle", "title", doc.title);
    if (h->subtitle)
        ana_svg_text(&svg, width / 2, 40, "middle", "subtitle", h->subtitle);
    ana_svg_legend(&svg, LEFT, 62, legend, 2);
    panel(&svg, h, 78, 78 + mid - 40, width, 0);
    panel(&svg, h, 78 + mid, height - 58, width, 1);
    return ana_svg_end(&svg);
}
