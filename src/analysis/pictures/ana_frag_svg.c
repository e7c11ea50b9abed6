/* SPDX-License-Identifier: MIT */
/* The address-space map: one bar from the lowest to the highest address
 * that counts, mappings coloured by state (reserved, committed, commit
 * charge), holes blank, the largest hole outlined. A 64-bit space is
 * mostly nothing (a hole of 90 GB between the libraries and the stack, of
 * terabytes below them), so the biggest holes are drawn as fixed-width
 * breaks labelled with their size, and every mapping gets at least a pixel
 * on top of its share: each one stays visible whatever the span. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "analysis/pictures/ana_frag_svg.h"
#include "analysis/pictures/ana_svg.h"
#include "analysis/vm/ana_frag.h"

#define BAR_X 20.0
#define BAR_W 1160.0 /* at least; wider when the mappings need it */
#define BAR_Y 60.0
#define BAR_H 60.0
#define BREAK_W 56.0 /* room for a label such as "41.9 TiB" */
#define MIN_W 1.0    /* every mapping's least width */

const char ana_frag_css[] =
    ".fr-res{fill:#bbbbbb}.fr-com{fill:#7fb3d5}.fr-chg{fill:#1f618d}"
    ".fr-hole{fill:#ffffff;stroke:#dddddd}.fr-big{fill:none;stroke:#c0392b;stroke-width:2}"
    ".fr-col{fill:#e6b0aa}.fr-brk{fill:#f4f4f4;stroke:#999999;stroke-dasharray:2,2}"
    ".fr-map text{font:12px sans-serif}.fr-map .fr-ttl{font-size:15px}"
    ".fr-map .fr-bt{font-size:10px;fill:#555555}";

struct layout {
    double scale; /* px per byte, on top of MIN_W per mapping */
    uint64_t cut; /* holes at least this big become breaks */
    double bar_w;
};

static double frag_width(const struct layout *l, uint64_t lo, uint64_t hi, int hole)
{
    if (hole)
        return hi - lo >= l->cut ? BREAK_W : (double)(hi - lo) * l->scale;
    return MIN_W + (double)(hi - lo) * l->scale;
}

static const char *frag_class(const struct ana_vm_piece *p)
{
    if (p->collector)
        return "fr-col";
    if (p->prot == PROT_NONE)
        return "fr-res";
    return ana_vm_is_charge(p->prot, p->flags) ? "fr-chg" : "fr-com";
}

struct hole_sizes {
    uint64_t *v;
    size_t nr, cap;
};

static int hole_size(void *arg, uint64_t lo, uint64_t hi)
{
    struct hole_sizes *h = arg;

    if (h->nr < h->cap)
        h->v[h->nr++] = hi - lo;
    return 0;
}

static int by_size_down(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

    return a < b ? 1 : a > b ? -1 : 0;
}

/* The biggest holes become breaks until the holes left to scale hold no
 * more bytes than the mappings: then the mappings get at least half of the
 * scaled width. Returns -ENOMEM or 0. */
static int frag_cut(const struct ana_vm_image *im, const struct ana_frag_stats *st, uint64_t *cut)
{
    struct hole_sizes h = {NULL, 0, st->nr_holes};
    uint64_t left = st->free, drawn = st->mapped + st->collector;

    *cut = UINT64_MAX;
    if (!h.cap || left <= drawn)
        return 0;
    h.v = malloc(h.cap * sizeof(*h.v));
    if (!h.v)
        return -ENOMEM;
    ana_frag_holes(im, 0, hole_size, &h);
    qsort(h.v, h.nr, sizeof(*h.v), by_size_down);
    for (size_t i = 0; i < h.nr && left > drawn; i++) {
        *cut = h.v[i];
        left -= h.v[i];
    }
    free(h.v);
    return 0;
}

static int frag_layout(const struct ana_vm_image *im, const struct ana_frag_stats *st,
                       struct layout *l, uint64_t *nr_breaks)
{
    uint64_t span = st->space_hi > st->space_lo ? st->space_hi - st->space_lo : 1;
    uint64_t breaks = 0, nr_drawn = 0, at = st->space_lo;
    double fixed;
    int rc = frag_cut(im, st, &l->cut);

    if (rc)
        return rc;
    *nr_breaks = 0;
    for (uint32_t i = 0; i <= im->nr; i++) {
        uint64_t next = i < im->nr ? im->v[i].lo : st->space_hi;

        if (next > at && next - at >= l->cut)
            breaks += next - at, ++*nr_breaks;
        if (i < im->nr && im->v[i].lo >= at)
            nr_drawn++;
        if (i < im->nr && im->v[i].hi > at)
            at = im->v[i].hi;
    }
    /* Many mappings widen the bar rather than squeeze the scaled part. */
    fixed = MIN_W * (double)nr_drawn + BREAK_W * (double)*nr_breaks;
    l->bar_w = fixed + BAR_W / 2 > BAR_W ? fixed + BAR_W / 2 : BAR_W;
    l->scale = (l->bar_w - fixed) / (double)(span > breaks ? span - breaks : 1);
    return 0;
}

int ana_frag_svg(FILE *out, const struct ana_vm_image *im, const char *title, int inline_svg)
{
    static const struct ana_legend_entry legend[] = {
        {"fr-res", "reserved (PROT_NONE)"},
        {"fr-com", "committed, no charge"},
        {"fr-chg", "commit charge (private writable)"},
        {"fr-col", "memscribe's own (rings, tables)"},
        {"fr-big", "largest free gap"},
    };
    struct ana_svg_doc doc = {.height = 190,
                              .title = title,
                              .css = ana_frag_css,
                              .root_attrs = "class=\"fr-map\"",
                              .inline_svg = inline_svg};
    struct ana_frag_stats st;
    struct layout l;
    struct ana_svg s;
    uint64_t nr_breaks, at;
    char a[64], b[64];
    double x;
    int rc;

    ana_frag_stats(im, &st);
    rc = frag_layout(im, &st, &l, &nr_breaks);
    if (rc)
        return rc;
    doc.width = BAR_X * 2 + l.bar_w;

    ana_svg_begin(&s, out, &doc);
    ana_svg_text(&s, BAR_X, 24, "start", "fr-ttl", title);
    snprintf(a, sizeof(a), "0x%" PRIx64, st.space_lo);
    snprintf(b, sizeof(b), "0x%" PRIx64, st.space_hi);
    ana_svg_text(&s, BAR_X, BAR_Y - 6, "start", NULL, a);
    ana_svg_text(&s, BAR_X + l.bar_w, BAR_Y - 6, "end", NULL, b);
    x = BAR_X;
    at = st.space_lo;
    for (uint32_t i = 0; i <= im->nr; i++) {
        uint64_t next = i < im->nr ? im->v[i].lo : st.space_hi;

        if (next > at) {
            double w = frag_width(&l, at, next, 1);

            ana_svg_rect(&s, x, BAR_Y, w, BAR_H, next - at >= l.cut ? "fr-brk" : "fr-hole");
            if (next - at >= l.cut)
                ana_svg_text(&s, x + w / 2, BAR_Y + BAR_H / 2 + 4, "middle", "fr-bt",
                             ana_unit_format(ANA_UNIT_BYTES, (double)(next - at), a, sizeof(a)));
            if (at == st.largest_lo && next == st.largest_hi)
                ana_svg_rect(&s, x, BAR_Y - 2, w, BAR_H + 4, "fr-big");
            x += w;
        }
        if (i == im->nr)
            break;
        if (im->v[i].lo >= at) {
            double w = frag_width(&l, im->v[i].lo, im->v[i].hi, 0);

            ana_svg_rect(&s, x, BAR_Y, w, BAR_H, frag_class(&im->v[i]));
            x += w;
            at = im->v[i].hi;
        }
    }
    {
        char line[256];

        snprintf(
            line, sizeof(line),
            "%" PRIu64 " mappings, %" PRIu64 " holes, %s free, largest gap %s at 0x%" PRIx64 "%s",
            st.nr_mappings, st.nr_holes,
            ana_unit_format(ANA_UNIT_BYTES, (double)st.free, a, sizeof(a)),
            ana_unit_format(ANA_UNIT_BYTES, (double)(st.largest_hi - st.largest_lo), b, sizeof(b)),
            st.largest_lo,
            nr_breaks ? " (dashed: holes drawn shortened, labelled with their size)" : "");
        ana_svg_text(&s, BAR_X, BAR_Y + BAR_H + 22, "start", NULL, line);
    }
    ana_svg_legend(&s, BAR_X, BAR_Y + BAR_H + 40, legend, sizeof(legend) / sizeof(legend[0]));
    return ana_svg_end(&s);
}
