/* SPDX-License-Identifier: MIT */
/* Drawing a flame tree as a standalone, interactive SVG: frames are laid
 * out here (so the picture is complete without scripts) and the inline
 * script flame_svg.js (this folder) adds zoom and search. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/model/ana_tree.h"
#include "analysis/pictures/ana_flame.h"
#include "analysis/pictures/ana_pictures_assets.h"
#include "analysis/pictures/ana_svg.h"

#define FRAME_H 16.0
#define PAD 10.0
#define TOP 56.0    /* title, subtitle and buttons */
#define BOTTOM 28.0 /* the details line */
#define CHAR_W 7.0  /* average glyph width at font-size 12 */
#define MIN_PX 0.1  /* narrower frames are left out, as flamegraph.pl does */

static const char CSS[] = "text { fill: #000; }\n"
                          ".title { font-size: 17px; font-weight: bold; }\n"
                          ".subtitle { fill: #555; }\n"
                          ".button { cursor: pointer; fill: #224; text-decoration: underline; }\n"
                          "g.f { cursor: pointer; }\n"
                          "g.f text { font-size: 11px; pointer-events: none; }\n"
                          /* an outline, so that a differential graph's unchanged
                           * (white) frames show on the white ground */
                          "g.f rect { stroke: #c8ccd4; stroke-width: 0.5; }\n"
                          "g.f:hover rect { stroke: #000; stroke-width: 0.5; }\n"
                          "g.f.hit rect { fill: #e040e0 !important; }\n"
                          "g.f.parent rect { opacity: 0.5; }\n";

/* A warm colour from the name, stable across runs and graphs. */
static void frame_colour(const char *name, unsigned rgb[3])
{
    uint32_t h = 2166136261u;

    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = (h ^ *p) * 16777619u;
    rgb[0] = 205 + h % 50;
    rgb[1] = 80 + (h >> 8) % 150;
    rgb[2] = 20 + (h >> 16) % 50;
}

/* "1,234,567": exact counts in tooltips. */
static char *group_digits(uint64_t v, char *buf, size_t size)
{
    char tmp[32];
    int n = snprintf(tmp, sizeof(tmp), "%" PRIu64, v);
    size_t o = 0;

    for (int i = 0; i < n && o + 2 < size; i++) {
        if (i && (n - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = tmp[i];
    }
    buf[o] = 0;
    return buf;
}

/* Cut name to fit px pixels, on a UTF-8 boundary, with ".." when cut.
 * Returns the byte length to print and sets *dots. */
static size_t fit_label(const char *name, double px, int *dots)
{
    double chars = (px - 6) / CHAR_W;
    size_t len = strlen(name), cut;

    *dots = 0;
    if (chars < 3)
        return 0;
    if ((double)len <= chars)
        return len;
    cut = (size_t)chars - 2;
    while (cut > 0 && ((unsigned char)name[cut] & 0xc0) == 0x80)
        cut--;
    *dots = 1;
    return cut;
}

struct layout {
    struct ana_svg *svg;
    const struct ana_tree *t;
    ana_flame_name_fn *name;
    void *arg;
    enum ana_flame_cost cost;
    int inverted;
    double width; /* drawable */
    double total;
    uint32_t max_depth;
    double base_y;       /* y of depth 0 */
    const int64_t *base; /* differential: the base cost per node, or NULL */
    double max_change;   /* the largest |change| drawn, for the colour scale */
};

/* Differential colours: red as far as the frame grew, blue as far as it
 * shrank, relative to the largest change; white when unchanged. */
static void change_colour(double change, double max_change, unsigned rgb[3])
{
    unsigned s = max_change > 0 ? (unsigned)(0.5 + 200.0 * fabs(change) / max_change) : 0;

    rgb[0] = change < 0 ? 255 - s : 255;
    rgb[1] = 255 - s;
    rgb[2] = change > 0 ? 255 - s : 255;
}

static double frame_y(const struct layout *L, uint32_t depth)
{
    return L->inverted ? L->base_y + depth * FRAME_H : L->base_y - depth * FRAME_H;
}

static void draw_frame(struct layout *L, uint32_t id, uint64_t left)
{
    const struct ana_tree_node *n = &L->t->nodes[id];
    const char *name = id ? L->name(L->arg, n->label) : "all";
    uint64_t v = (uint64_t)n->incl[L->cost];
    double x = PAD + (double)left / L->total * L->width;
    double w = (double)v / L->total * L->width;
    double y = frame_y(L, n->depth);
    unsigned rgb[3];
    char num[40], human[32];
    size_t cut;
    int dots;

    frame_colour(name, rgb);
    if (L->base)
        change_colour((double)n->incl[L->cost] - (double)L->base[id], L->max_change, rgb);
    else if (id == 0)
        rgb[0] = 230, rgb[1] = 200, rgb[2] = 120;
    group_digits(v, num, sizeof(num));
    ana_svg_raw(L->svg,
                "<g class=\"f\" data-l=\"%" PRIu64 "\" data-w=\"%" PRIu64 "\" data-d=\"%u\""
                " data-n=\"",
                left, v, n->depth);
    ana_svg_escaped(L->svg, name, strlen(name));
    ana_svg_raw(L->svg, "\"><title>");
    ana_svg_escaped(L->svg, name, strlen(name));
    if (ana_flame_cost_is_bytes(L->cost))
        ana_svg_raw(L->svg, " (%s bytes, %s, %.2f%%)", num,
                    ana_unit_format(ANA_UNIT_BYTES, (double)v, human, sizeof(human)),
                    100.0 * (double)v / L->total);
    else
        ana_svg_raw(L->svg, " (%s %s, %.2f%%)", num, ana_flame_cost_name(L->cost),
                    100.0 * (double)v / L->total);
    if (L->base)
        ana_svg_raw(L->svg, " (%+" PRId64 " against the base)", n->incl[L->cost] - L->base[id]);
    ana_svg_raw(L->svg,
                "</title><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" rx=\"2\" "
                "fill=\"rgb(%u,%u,%u)\"/><text x=\"%.1f\" y=\"%.1f\">",
                x, y, w, FRAME_H - 1, rgb[0], rgb[1], rgb[2], x + 3, y + FRAME_H - 4.5);
    cut = fit_label(name, w, &dots);
    ana_svg_escaped(L->svg, name, cut);
    ana_svg_raw(L->svg, "%s</text></g>\n", dots ? ".." : "");
}

/* Depth-first, without recursion: stacks of real programs can be deep. */
static int draw_all(struct layout *L)
{
    uint32_t nr = L->t->nr_nodes;
    uint32_t *ids = malloc((size_t)nr * sizeof(*ids));
    uint64_t *lefts = malloc((size_t)nr * sizeof(*lefts));
    size_t top = 0;

    if (!ids || !lefts) {
        free(ids);
        free(lefts);
        return -ENOMEM;
    }
    ids[top] = 0;
    lefts[top++] = 0;
    while (top) {
        uint32_t id = ids[--top];
        uint64_t left = lefts[top];
        const struct ana_tree_node *n = &L->t->nodes[id];
        uint64_t child_left = left;

        if (n->incl[L->cost] <= 0 || (double)n->incl[L->cost] / L->total * L->width < MIN_PX)
            continue;
        draw_frame(L, id, left);
        /* Push children in reverse so they are drawn left to right. */
        size_t first = top;
        for (uint32_t c = n->first_child; c != ANA_TREE_NONE; c = L->t->nodes[c].next_sibling) {
            int64_t v = L->t->nodes[c].incl[L->cost];

            if (v <= 0)
                continue;
            ids[top] = c;
            lefts[top++] = child_left;
            child_left += (uint64_t)v;
        }
        for (size_t a = first, b = top; a + 1 < b; a++, b--) {
            uint32_t ti = ids[a];
            uint64_t tl = lefts[a];

            ids[a] = ids[b - 1], lefts[a] = lefts[b - 1];
            ids[b - 1] = ti, lefts[b - 1] = tl;
        }
    }
    free(ids);
    free(lefts);
    return 0;
}

int ana_flame_write_svg(const struct ana_tree *t, ana_flame_name_fn *name, void *arg, FILE *out,
                        const struct ana_flame_svg_options *opt)
{
    struct ana_svg svg;
    struct layout L = {.svg = &svg,
                       .t = t,
                       .name = name,
                       .arg = arg,
                       .cost = opt->cost,
                       .inverted = opt->inverted,
                       .base = opt->base};
    double width = opt->width > 0 ? opt->width : 1200;
    const struct ana_tree_node *root = &t->nodes[0];
    char title[128], attrs[160];
    double height;
    const char *script = ana_asset_find(ana_pictures_assets, "flame_svg.js");
    int rc, rc2;

    L.width = width - 2 * PAD;
    L.total = root->incl[opt->cost] > 0 ? (double)root->incl[opt->cost] : 1;
    /* As deep as the frames that are drawn: deeper ones are too narrow. */
    for (uint32_t i = 0; i < t->nr_nodes; i++) {
        const struct ana_tree_node *n = &t->nodes[i];

        if ((double)n->incl[opt->cost] / L.total * L.width < MIN_PX)
            continue;
        if (n->depth > L.max_depth)
            L.max_depth = n->depth;
        if (L.base && fabs((double)n->incl[opt->cost] - (double)L.base[i]) > L.max_change)
            L.max_change = fabs((double)n->incl[opt->cost] - (double)L.base[i]);
    }
    height = TOP + (L.max_depth + 1) * FRAME_H + BOTTOM;
    L.base_y = opt->inverted ? TOP : TOP + L.max_depth * FRAME_H;

    if (!opt->title)
        snprintf(title, sizeof(title), "%s graph: %s",
                 opt->base ? (opt->inverted ? "Differential inverted flame" : "Differential flame")
                           : (opt->inverted ? "Inverted flame" : "Flame"),
                 ana_flame_cost_name(opt->cost));
    /* The script reads the scale from the root to map costs to pixels. */
    snprintf(attrs, sizeof(attrs), "data-total=\"%.0f\" data-pad=\"%.0f\" data-width=\"%.0f\"",
             L.total, PAD, width);
    struct ana_svg_doc doc = {.width = width,
                              .height = height,
                              .title = opt->title ? opt->title : title,
                              .css = CSS,
                              .root_attrs = attrs};
    ana_svg_begin(&svg, out, &doc);
    ana_svg_text(&svg, width / 2, 22, "middle", "title", opt->title ? opt->title : title);
    if (opt->subtitle)
        ana_svg_text(&svg, width / 2, 40, "middle", "subtitle", opt->subtitle);
    ana_svg_raw(&svg,
                "<text id=\"unzoom\" class=\"button\" x=\"%.1f\" y=\"22\" "
                "style=\"opacity:0.3\">Reset Zoom</text>\n",
                PAD);
    ana_svg_raw(&svg,
                "<text id=\"search\" class=\"button\" x=\"%.1f\" y=\"22\" "
                "text-anchor=\"end\">Search</text>\n",
                width - PAD);
    ana_svg_raw(&svg, "<text id=\"matched\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\"></text>\n",
                width - PAD, height - 10);
    ana_svg_raw(&svg, "<text id=\"details\" x=\"%.1f\" y=\"%.1f\"> </text>\n", PAD, height - 10);
    if (root->incl[opt->cost] <= 0) {
        char none[96];

        snprintf(none, sizeof(none), "Nothing to show: no %s in this trace.",
                 opt->cost == ANA_FLAME_ALLOCATIONS ? "allocations"
                 : opt->cost == ANA_FLAME_TEMPORARY ? "temporary allocations"
                 : opt->cost == ANA_FLAME_LEAKED    ? "leaked bytes"
                 : opt->cost == ANA_FLAME_PEAK      ? "bytes live at the peak"
                                                    : "bytes allocated");
        ana_svg_text(&svg, width / 2, L.base_y + FRAME_H - 4, "middle", "subtitle", none);
    }
    rc = draw_all(&L);
    if (script)
        ana_svg_raw(&svg, "<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n", script);
    rc2 = ana_svg_end(&svg);
    return rc ? rc : rc2;
}
