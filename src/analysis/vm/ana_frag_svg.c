/* SPDX-License-Identifier: MIT */
/* The address-space map: one bar from the lowest to the highest address
 * that counts, mappings coloured by state (reserved, committed, commit
 * charge), holes blank, the largest hole outlined. A 64-bit space is
 * mostly nothing: holes wider than an eighth of the bar are drawn as a
 * fixed-width break so that the mappings stay visible. */
#include <inttypes.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "analysis/pictures/ana_svg.h"
#include "analysis/vm/ana_frag.h"

#define BAR_X 20.0
#define BAR_W 1160.0
#define BAR_Y 60.0
#define BAR_H 60.0
#define BREAK_W 16.0

const char ana_frag_css[] =
    ".fr-res{fill:#bbbbbb}.fr-com{fill:#7fb3d5}.fr-chg{fill:#1f618d}"
    ".fr-hole{fill:#ffffff;stroke:#dddddd}.fr-big{fill:none;stroke:#c0392b;stroke-width:2}"
    ".fr-col{fill:#e6b0aa}.fr-brk{fill:#f4f4f4;stroke:#999999;stroke-dasharray:2,2}"
    ".fr-map text{font:12px sans-serif}.fr-map .fr-ttl{font-size:15px}";

struct layout {
    double scale; /* px per byte outside breaks */
    uint64_t cut; /* holes at least this big become breaks */
};

static double frag_width(const struct layout *l, uint64_t lo, uint64_t hi, int hole)
{
    if (hole && hi - lo >= l->cut)
        return BREAK_W;
    return (double)(hi - lo) * l->scale;
}

static const char *frag_class(const struct ana_vm_piece *p)
{
    if (p->collector)
        return "fr-col";
    if (p->prot == PROT_NONE)
        return "fr-res";
    return ana_vm_is_charge(p->prot, p->flags) ? "fr-chg" : "fr-com";
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
    struct ana_svg_doc doc = {.width = BAR_X * 2 + BAR_W,
                              .height = 190,
                              .title = title,
                              .css = ana_frag_css,
                              .root_attrs = "class=\"fr-map\"",
                              .inline_svg = inline_svg};
    struct ana_frag_stats st;
    struct layout l = {0, UINT64_MAX};
    struct ana_svg s;
    uint64_t span, breaks = 0, nr_breaks = 0, at;
    char a[64], b[64];
    double x;

    ana_frag_stats(im, &st);
    span = st.space_hi > st.space_lo ? st.space_hi - st.space_lo : 1;
    /* Holes above an eighth of the span become breaks when the mappings
     * would otherwise get less than half the bar. */
    if (st.free > span / 2) {
        l.cut = span / 8;
        at = st.space_lo;
        for (uint32_t i = 0; i <= im->nr; i++) {
            uint64_t next = i < im->nr ? im->v[i].lo : st.space_hi;

            if (next > at && next - at >= l.cut)
                breaks += next - at, nr_breaks++;
            if (i < im->nr && im->v[i].hi > at)
                at = im->v[i].hi;
        }
    }
    l.scale = (BAR_W - BREAK_W * (double)nr_breaks) / (double)(span - breaks ? span - breaks : 1);

    ana_svg_begin(&s, out, &doc);
    ana_svg_text(&s, BAR_X, 24, "start", "fr-ttl", title);
    snprintf(a, sizeof(a), "0x%" PRIx64, st.space_lo);
    snprintf(b, sizeof(b), "0x%" PRIx64, st.space_hi);
    ana_svg_text(&s, BAR_X, BAR_Y - 6, "start", NULL, a);
    ana_svg_text(&s, BAR_X + BAR_W, BAR_Y - 6, "end", NULL, b);
    x = BAR_X;
    at = st.space_lo;
    for (uint32_t i = 0; i <= im->nr; i++) {
        uint64_t next = i < im->nr ? im->v[i].lo : st.space_hi;

        if (next > at) {
            double w = frag_width(&l, at, next, 1);

            ana_svg_rect(&s, x, BAR_Y, w, BAR_H, next - at >= l.cut ? "fr-brk" : "fr-hole");
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
            st.largest_lo, nr_breaks ? " (dashed: holes drawn shortened)" : "");
        ana_svg_text(&s, BAR_X, BAR_Y + BAR_H + 22, "start", NULL, line);
    }
    ana_svg_legend(&s, BAR_X, BAR_Y + BAR_H + 40, legend, sizeof(legend) / sizeof(legend[0]));
    return ana_svg_end(&s);
}
