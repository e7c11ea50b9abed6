/* SPDX-License-Identifier: MIT */
/* Axes for the SVG writer: value-to-pixel maps, round ticks, labels with
 * units (B/KiB/MiB, ns/us/ms/s), grid, titles and legends. */
#include <math.h>
#include <string.h>

#include "analysis/pictures/ana_svg.h"

#define MAX_TICKS 32

/* The scale a unit is printed in for a value of magnitude v: 1, 1024^k
 * for bytes, 1000^k otherwise, with the suffix. */
static double unit_scale(enum ana_unit unit, double v, const char **suffix)
{
    static const char *const bytes[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    static const char *const ns[] = {"ns", "\xc2\xb5s", "ms", "s"};
    static const char *const count[] = {"", "k", "M", "G", "T"};
    double base = unit == ANA_UNIT_BYTES ? 1024 : 1000;
    const char *const *names = unit == ANA_UNIT_BYTES ? bytes : unit == ANA_UNIT_NS ? ns : count;
    size_t nr = unit == ANA_UNIT_NS ? 4 : 5;
    double scale = 1;
    size_t k = 0;

    v = fabs(v);
    while (k + 1 < nr && v >= scale * base) {
        scale *= base;
        k++;
    }
    *suffix = names[k];
    return scale;
}

static char *format_scaled(double v, double scale, const char *suffix, enum ana_unit unit,
                           char *buf, size_t size)
{
    double x = v / scale;
    const char *sep = unit == ANA_UNIT_COUNT ? "" : " ";

    if (x == 0)
        snprintf(buf, size, "0%s%s", *suffix ? sep : "", suffix);
    else if (fabs(x) >= 100 || x == floor(x))
        snprintf(buf, size, "%.0f%s%s", x, sep, suffix);
    else
        snprintf(buf, size, "%.3g%s%s", x, sep, suffix);
    return buf;
}

char *ana_unit_format(enum ana_unit unit, double v, char *buf, size_t size)
{
    const char *suffix;
    double scale = unit_scale(unit, v, &suffix);

    return format_scaled(v, scale, suffix, unit, buf, size);
}

double ana_axis_map(const struct ana_axis *a, double v)
{
    double f;

    if (a->log) {
        double lo = log(a->lo), hi = log(a->hi);

        f = v > 0 ? (log(v) - lo) / (hi - lo) : 0;
        if (f < 0)
            f = 0;
    } else {
        f = a->hi > a->lo ? (v - a->lo) / (a->hi - a->lo) : 0;
    }
    return a->p0 + f * (a->p1 - a->p0);
}

/* A 1-2-5 step near span/target in the unit's own scale (so that byte
 * ticks fall on round MiB, not on round powers of ten bytes). */
static double nice_step(const struct ana_axis *a, double span, double target)
{
    const char *suffix;
    double scale = unit_scale(a->unit, fmax(fabs(a->lo), fabs(a->hi)), &suffix);
    double raw = span / scale / target;
    double mag, norm, step;

    if (!(raw > 0))
        return scale;
    mag = pow(10, floor(log10(raw)));
    norm = raw / mag;
    /* The nearest of 1, 2, 5, 10, not the next larger: between four and
     * nine ticks rather than as few as three. */
    step = norm < 1.5 ? 1 : norm < 3.5 ? 2 : norm < 7.5 ? 5 : 10;
    return step * mag * scale;
}

void ana_axis_round_up(struct ana_axis *a)
{
    double step;

    if (a->log || !(a->hi > a->lo))
        return;
    step = nice_step(a, a->hi - a->lo, 6);
    a->hi = a->lo + ceil((a->hi - a->lo) / step - 1e-9) * step;
}

size_t ana_axis_ticks(const struct ana_axis *a, double *out, size_t max)
{
    size_t n = 0;

    if (a->log) {
        /* Powers of 2 for sizes, of 10 for the rest, every k-th so at most
         * about eight ticks show. */
        double base = a->unit == ANA_UNIT_BYTES ? 2 : 10;
        double e0 = ceil(log(a->lo) / log(base) - 1e-9);
        double e1 = floor(log(a->hi) / log(base) + 1e-9);
        double every = 1;

        while ((e1 - e0) / every > 8)
            every *= 2;
        e0 = ceil(e0 / every) * every;
        for (double e = e0; e <= e1 && n < max; e += every)
            out[n++] = pow(base, e);
        return n;
    }
    if (!(a->hi > a->lo)) {
        if (max)
            out[n++] = a->lo;
        return n;
    }
    double step = nice_step(a, a->hi - a->lo, 6);
    for (double v = ceil(a->lo / step - 1e-9) * step; v <= a->hi + step * 1e-9 && n < max;
         v += step)
        out[n++] = fabs(v) < step * 1e-9 ? 0 : v;
    return n;
}

static void tick_label(const struct ana_axis *a, double v, char *buf, size_t size)
{
    const char *suffix;
    double scale;

    if (a->log) {
        ana_unit_format(a->unit, v, buf, size);
        return;
    }
    /* One scale for the whole axis: "0 MiB, 5 MiB, 10 MiB", never "0 B". */
    scale = unit_scale(a->unit, fmax(fabs(a->lo), fabs(a->hi)), &suffix);
    format_scaled(v, scale, suffix, a->unit, buf, size);
}

void ana_svg_axes(struct ana_svg *s, const struct ana_axis *x, const struct ana_axis *y,
                  const char *x_title, const char *y_title)
{
    double ticks[MAX_TICKS];
    char label[64];
    size_t n;
    double left = fmin(x->p0, x->p1), right = fmax(x->p0, x->p1);
    double top = fmin(y->p0, y->p1), bottom = fmax(y->p0, y->p1);

    n = ana_axis_ticks(y, ticks, MAX_TICKS);
    for (size_t i = 0; i < n; i++) {
        double py = ana_axis_map(y, ticks[i]);

        ana_svg_line(s, left, py, right, py, "grid");
        tick_label(y, ticks[i], label, sizeof(label));
        ana_svg_text(s, left - 6, py + 4, "end", "tick", label);
    }
    n = ana_axis_ticks(x, ticks, MAX_TICKS);
    for (size_t i = 0; i < n; i++) {
        double px = ana_axis_map(x, ticks[i]);

        ana_svg_line(s, px, top, px, bottom, "grid");
        ana_svg_line(s, px, bottom, px, bottom + 5, "axis");
        tick_label(x, ticks[i], label, sizeof(label));
        ana_svg_text(s, px, bottom + 18, "middle", "tick", label);
    }
    ana_svg_line(s, left, bottom, right, bottom, "axis");
    ana_svg_line(s, left, top, left, bottom, "axis");
    if (x_title)
        ana_svg_text(s, (left + right) / 2, bottom + 36, "middle", "axis-title", x_title);
    if (y_title) {
        double tx = left - 62, ty = (top + bottom) / 2;

        ana_svg_raw(s,
                    "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" class=\"axis-title\" "
                    "transform=\"rotate(-90 %.1f %.1f)\">",
                    tx, ty, tx, ty);
        ana_svg_escaped(s, y_title, strlen(y_title));
        ana_svg_raw(s, "</text>\n");
    }
}

void ana_svg_legend(struct ana_svg *s, double x, double y, const struct ana_legend_entry *e,
                    size_t n)
{
    for (size_t i = 0; i < n; i++) {
        ana_svg_rect(s, x, y - 10, 14, 10, e[i].cls);
        ana_svg_text(s, x + 19, y, "start", "legend", e[i].label);
        /* About 6.5 px per character at font-size 12. */
        x += 19 + 6.5 * (double)strlen(e[i].label) + 18;
    }
}
