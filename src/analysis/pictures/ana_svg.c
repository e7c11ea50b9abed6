/* SPDX-License-Identifier: MIT */
/* The SVG writer's document, shapes and the one XML escaper. */
#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "analysis/core/ana_utf8.h"
#include "analysis/pictures/ana_svg.h"

static const char REPLACEMENT[] = "\xef\xbf\xbd"; /* U+FFFD */

void ana_xml_escape(FILE *out, const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t run = 0; /* bytes of p copied as they are, not yet written */
    size_t i = 0;

    while (i < len) {
        const char *ent = NULL;
        size_t n = 1;

        switch (p[i]) {
        case '&':
            ent = "&amp;";
            break;
        case '<':
            ent = "&lt;";
            break;
        case '>':
            ent = "&gt;";
            break;
        case '"':
            ent = "&quot;";
            break;
        case '\'':
            ent = "&#39;";
            break;
        default: {
            uint32_t cp;

            n = ana_utf8_decode(p + i, len - i, &cp);
            if (!n || !ana_xml_char_ok(cp)) {
                ent = REPLACEMENT;
                n = n ? n : 1;
            }
        }
        }
        if (ent) {
            if (run)
                fwrite(p + i - run, 1, run, out);
            run = 0;
            fputs(ent, out);
        } else {
            run += n;
        }
        i += n;
    }
    if (run)
        fwrite(p + i - run, 1, run, out);
}

static void note_error(struct ana_svg *s)
{
    if (!s->err && ferror(s->out))
        s->err = errno ? -errno : -EIO;
}

void ana_svg_begin(struct ana_svg *s, FILE *out, const struct ana_svg_doc *d)
{
    s->out = out;
    s->err = 0;
    if (!d->inline_svg)
        fputs("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n", out);
    fprintf(out,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%.0f\" "
            "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" "
            "font-size=\"12\"",
            d->width, d->height, d->width, d->height);
    if (d->id)
        fprintf(out, " id=\"%s\"", d->id);
    if (d->root_attrs)
        fprintf(out, " %s", d->root_attrs);
    fputs(">\n", out);
    if (d->title) {
        fputs("<title>", out);
        ana_xml_escape(out, d->title, strlen(d->title));
        fputs("</title>\n", out);
    }
    /* In HTML a <style> inside the SVG would apply to the whole page: the
     * page brings its own sheet instead. */
    if (d->css && !d->inline_svg)
        fprintf(out, "<style type=\"text/css\"><![CDATA[\n%s\n]]></style>\n", d->css);
    fprintf(out,
            "<rect class=\"background\" x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" "
            "fill=\"#ffffff\"/>\n",
            d->width, d->height);
    note_error(s);
}

int ana_svg_end(struct ana_svg *s)
{
    fputs("</svg>\n", s->out);
    if (fflush(s->out))
        note_error(s);
    note_error(s);
    return s->err;
}

void ana_svg_raw(struct ana_svg *s, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vfprintf(s->out, fmt, ap);
    va_end(ap);
    note_error(s);
}

void ana_svg_escaped(struct ana_svg *s, const char *text, size_t len)
{
    ana_xml_escape(s->out, text, len);
}

void ana_svg_rect(struct ana_svg *s, double x, double y, double w, double h, const char *cls)
{
    fprintf(s->out, "<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>\n",
            cls, x, y, w, h);
}

void ana_svg_line(struct ana_svg *s, double x1, double y1, double x2, double y2, const char *cls)
{
    fprintf(s->out, "<line class=\"%s\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", cls,
            x1, y1, x2, y2);
}

void ana_svg_polyline(struct ana_svg *s, const double *xs, const double *ys, size_t n,
                      const char *cls)
{
    if (!n)
        return;
    fprintf(s->out, "<polyline class=\"%s\" fill=\"none\" points=\"", cls);
    for (size_t i = 0; i < n; i++)
        fprintf(s->out, "%s%.1f,%.1f", i ? " " : "", xs[i], ys[i]);
    fputs("\"/>\n", s->out);
    note_error(s);
}

void ana_svg_area(struct ana_svg *s, const double *xs, const double *ys, size_t n, double base,
                  const char *cls)
{
    if (!n)
        return;
    fprintf(s->out, "<polygon class=\"%s\" points=\"%.1f,%.1f", cls, xs[0], base);
    for (size_t i = 0; i < n; i++)
        fprintf(s->out, " %.1f,%.1f", xs[i], ys[i]);
    fprintf(s->out, " %.1f,%.1f\"/>\n", xs[n - 1], base);
    note_error(s);
}

void ana_svg_text(struct ana_svg *s, double x, double y, const char *anchor, const char *cls,
                  const char *text)
{
    fprintf(s->out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\"", x, y, anchor);
    if (cls)
        fprintf(s->out, " class=\"%s\"", cls);
    fputc('>', s->out);
    ana_xml_escape(s->out, text, strlen(text));
    fputs("</text>\n", s->out);
}
