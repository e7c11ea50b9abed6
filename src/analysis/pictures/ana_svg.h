/* SPDX-License-Identifier: MIT */
/* A small SVG writer: shapes, escaped text, axes with units and legends.
 *
 * Every plot and flame graph memscribe draws goes through here, so every
 * string that came from a trace (function, file, thread names, the command
 * line) is escaped in one place. Output goes to a caller's FILE; the first
 * write error is remembered and ana_svg_end() returns it as -errno, so the
 * drawing code need not check each call. */
#ifndef ANA_SVG_H
#define ANA_SVG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct ana_svg {
    FILE *out;
    int err; /* first -errno seen, 0 if none */
};

/* Write s[0..len) as XML character data, valid in text and in quoted
 * attribute values: & < > " ' become entities; bytes that are not valid
 * UTF-8 and control characters XML 1.0 forbids become U+FFFD, so the
 * document stays well-formed whatever the trace holds. */
void ana_xml_escape(FILE *out, const char *s, size_t len);

/* A document's frame. title is escaped (NULL: none). css, if not NULL,
 * goes into a <style> element; root_attrs, if not NULL, is added to the
 * <svg> tag (e.g. data-* attributes for a script). Both must be trusted
 * text (memscribe's own). inline_svg leaves out the XML prolog, for an SVG
 * embedded in HTML. */
struct ana_svg_doc {
    double width, height;
    const char *title;
    const char *css;
    const char *root_attrs;
    const char *id; /* trusted; NULL: none */
    int inline_svg;
};

/* Start a document. */
void ana_svg_begin(struct ana_svg *s, FILE *out, const struct ana_svg_doc *d);
/* Close the document. Returns 0 or the first -errno of any write. */
int ana_svg_end(struct ana_svg *s);

/* Trusted markup (memscribe's own literals, numbers): printf-style, not
 * escaped. Never pass trace strings here; use ana_svg_text(). */
__attribute__((format(printf, 2, 3))) void ana_svg_raw(struct ana_svg *s, const char *fmt, ...);
/* Escaped text from anywhere, e.g. inside an element ana_svg_raw opened. */
void ana_svg_escaped(struct ana_svg *s, const char *text, size_t len);

/* Shapes. cls is a CSS class (trusted); style extra attributes, trusted. */
void ana_svg_rect(struct ana_svg *s, double x, double y, double w, double h, const char *cls);
void ana_svg_line(struct ana_svg *s, double x1, double y1, double x2, double y2, const char *cls);
/* A polyline through n points; nothing for n == 0. */
void ana_svg_polyline(struct ana_svg *s, const double *xs, const double *ys, size_t n,
                      const char *cls);
/* The area between the polyline and the horizontal line y = base. */
void ana_svg_area(struct ana_svg *s, const double *xs, const double *ys, size_t n, double base,
                  const char *cls);
/* Text at (x, y); anchor "start", "middle" or "end"; text escaped. */
void ana_svg_text(struct ana_svg *s, double x, double y, const char *anchor, const char *cls,
                  const char *text);

/* Units of an axis: plain numbers, bytes (B, KiB, MiB, GiB, TiB) or a
 * duration given in nanoseconds (ns, us, ms, s). */
enum ana_unit {
    ANA_UNIT_COUNT = 0,
    ANA_UNIT_BYTES = 1,
    ANA_UNIT_NS = 2,
};

/* "12.5 MiB", "340 ms", "1.2k": a value with its unit, for labels.
 * Returns buf. */
char *ana_unit_format(enum ana_unit unit, double v, char *buf, size_t size);

/* One axis: values lo..hi map to pixels p0..p1 (p1 < p0 for a y axis
 * growing upwards), linearly or on a log scale (lo > 0 then). */
struct ana_axis {
    double lo, hi;
    double p0, p1;
    int log;
    enum ana_unit unit;
};

/* The pixel of value v (clamped to lo..hi on a log axis for v <= 0). */
double ana_axis_map(const struct ana_axis *a, double v);

/* Ticks: up to max values in lo..hi at round numbers of the unit (1, 2, 5
 * steps; powers of 2 for bytes and of 10 for counts on log axes). Returns
 * the number written to out. */
size_t ana_axis_ticks(const struct ana_axis *a, double *out, size_t max);

/* Widen a linear axis so hi is a round tick value (keeps lo). */
void ana_axis_round_up(struct ana_axis *a);

/* Draw a plot frame: grid lines, ticks and labels for x along the bottom
 * and y on the left, and the axis titles (escaped). */
void ana_svg_axes(struct ana_svg *s, const struct ana_axis *x, const struct ana_axis *y,
                  const char *x_title, const char *y_title);

/* A legend: a row of colour swatches (CSS classes) and labels from (x, y). */
struct ana_legend_entry {
    const char *cls;
    const char *label;
};
void ana_svg_legend(struct ana_svg *s, double x, double y, const struct ana_legend_entry *e,
                    size_t n);

#endif
