/* SPDX-License-Identifier: MIT */
/* Writing a call tree (ana_tree) as indented text, nested JSON or CSV rows
 * with the path of each node. Shared by `tree` and `window --tree`. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/ana_sample.h"
#include "cli/cli.h"
#include "cli/cli_ana.h"

struct tree_out {
    struct cli_ana *a;
    const struct ana_tree *t;
    const struct cli_tree_metric *mets;
    unsigned nr_mets;
    bool with_self;
    FILE *out;
    struct ana_json j;
    int *width;          /* text: per column */
    const char *mark;    /* text: before each number (a sampled trace's estimates) */
    uint32_t path[4096]; /* CSV: labels from the root */
};

static const char *label(struct tree_out *o, uint32_t node)
{
    return ana_stacks_str(cli_ana_stacks(o->a), o->t->nodes[node].label);
}

static void text_node(struct tree_out *o, uint32_t n)
{
    const struct ana_tree_node *nd = &o->t->nodes[n];
    unsigned col = 0;

    char num[48];

    for (unsigned c = 0; c < o->nr_mets * (o->with_self ? 2 : 1); c++) {
        unsigned k = c % o->nr_mets;
        if (o->mets[k].none)
            num[0] = '\0';
        else
            snprintf(num, sizeof(num), "%s%" PRId64, o->mark,
                     c < o->nr_mets ? nd->incl[k] : nd->self[k]);
        fprintf(o->out, "%*s  ", o->width[col++], num);
    }
    fprintf(o->out, "%*s%s\n", (int)(2 * (nd->depth - 1)), "", label(o, n));
}

static void json_node(struct tree_out *o, uint32_t n);

/* The node's path as one CSV field: functions from the root, ';'-joined. */
static void csv_path(struct tree_out *o, unsigned depth)
{
    unsigned max = sizeof(o->path) / sizeof(o->path[0]);

    fputc('"', o->out);
    for (unsigned i = 0; i <= depth && i < max; i++) {
        if (i)
            fputc(';', o->out);
        for (const char *s = label(o, o->path[i]); *s; s++) {
            if (*s == '"')
                fputc('"', o->out);
            fputc(*s, o->out);
        }
    }
    fputc('"', o->out);
}

static void walk(struct tree_out *o, uint32_t n, unsigned depth)
{
    unsigned shown = 0;

    for (uint32_t c = o->t->nodes[n].first_child; c != ANA_TREE_NONE;
         c = o->t->nodes[c].next_sibling) {
        if (o->a->top && shown++ >= o->a->top)
            break;
        if (o->a->format == CLI_FMT_TEXT) {
            text_node(o, c);
            walk(o, c, depth + 1);
        } else if (o->a->format == CLI_FMT_JSON) {
            json_node(o, c);
        } else {
            const struct ana_tree_node *nd = &o->t->nodes[c];
            if (depth < sizeof(o->path) / sizeof(o->path[0]))
                o->path[depth] = c;
            fprintf(o->out, "%u,", nd->depth);
            csv_path(o, depth);
            for (unsigned i = 0; i < 2 * o->nr_mets; i++) {
                unsigned k = i % o->nr_mets;
                if (o->mets[k].none)
                    fputc(',', o->out);
                else
                    fprintf(o->out, ",%" PRId64, i < o->nr_mets ? nd->incl[k] : nd->self[k]);
            }
            fputc('\n', o->out);
            walk(o, c, depth + 1);
        }
    }
}

static void json_costs(struct tree_out *o, const char *key, const int64_t *v)
{
    ana_json_key(&o->j, key);
    ana_json_begin_object(&o->j);
    for (unsigned k = 0; k < o->nr_mets; k++) {
        ana_json_key(&o->j, o->mets[k].key);
        if (o->mets[k].none)
            ana_json_null(&o->j);
        else
            ana_json_i64(&o->j, v[k]);
    }
    ana_json_end_object(&o->j);
}

/* The files and modules of a function's frames (a filter's), where kept
 * (ana_stacks_keep_where). */
static void json_where(struct tree_out *o, uint32_t n)
{
    struct ana_where w;

    if (!n || !ana_stacks_where(cli_ana_stacks(o->a), o->t->nodes[n].label, &w))
        return;
    ana_json_key(&o->j, "files");
    ana_json_begin_array(&o->j);
    for (unsigned i = 0; i < w.nr_files; i++)
        ana_json_str(&o->j, w.files[i]);
    ana_json_end_array(&o->j);
    ana_json_key(&o->j, "modules");
    ana_json_begin_array(&o->j);
    for (unsigned i = 0; i < w.nr_modules; i++)
        ana_json_str(&o->j, w.modules[i]);
    ana_json_end_array(&o->j);
    if (w.more)
        ana_json_kv_bool(&o->j, "more_files_or_modules", true);
}

static void json_node(struct tree_out *o, uint32_t n)
{
    const struct ana_tree_node *nd = &o->t->nodes[n];

    ana_json_begin_object(&o->j);
    ana_json_kv_str(&o->j, "function", n ? label(o, n) : "(all)");
    json_where(o, n);
    json_costs(o, "inclusive", nd->incl);
    json_costs(o, "self", nd->self);
    ana_json_key(&o->j, "children");
    ana_json_begin_array(&o->j);
    walk(o, n, nd->depth);
    ana_json_end_array(&o->j);
    ana_json_end_object(&o->j);
}

void cli_ana_tree(struct cli_ana *a, const struct ana_tree *t, const struct cli_tree_metric *mets,
                  unsigned nr_mets, bool with_self, FILE *out)
{
    struct tree_out o = {
        .a = a, .t = t, .mets = mets, .nr_mets = nr_mets, .with_self = with_self, .out = out};
    char num[32];

    if (a->format == CLI_FMT_JSON) {
        ana_json_init(&o.j, out, true);
        json_node(&o, 0);
        if (ana_json_finish(&o.j))
            cli_die("%s: writing the output failed", a->cmd);
        return;
    }
    if (a->format == CLI_FMT_CSV) {
        fputs("depth,path", out);
        for (unsigned k = 0; k < nr_mets; k++)
            fprintf(out, ",%s", mets[k].key);
        for (unsigned k = 0; k < nr_mets; k++)
            fprintf(out, ",self_%s", mets[k].key);
        fputc('\n', out);
        walk(&o, 0, 0);
        return;
    }
    /* Text: widths from the root's totals, which bound every node (costs
     * are sums over paths; a negative one is at most as wide plus sign). */
    unsigned nr_cols = nr_mets * (with_self ? 2 : 1);
    o.width = calloc(nr_cols, sizeof(*o.width));
    /* Every metric of a call tree is a heap count or bytes: estimates in a
     * sampled trace (ana_sample.h). */
    o.mark = ana_sample_mark(fmt_reader_sample_bytes(a->r));
    if (!o.width)
        cli_die("%s: out of memory", a->cmd);
    for (unsigned c = 0; c < nr_cols; c++) {
        const char *title = mets[c % nr_mets].title;
        int w = snprintf(num, sizeof(num), "%s%" PRId64, o.mark, t->nodes[0].incl[c % nr_mets]) + 1;
        int tw = (int)strlen(title) + (c >= nr_mets ? 5 : 0);
        o.width[c] = w > tw ? w : tw;
        if (c >= nr_mets)
            fprintf(out, "%*s%s  ", o.width[c] - (int)strlen(title), "self ", title);
        else
            fprintf(out, "%*s  ", o.width[c], title);
    }
    fprintf(out, "function\n");
    walk(&o, 0, 0);
    free(o.width);
}

uint32_t cli_ana_tree_path(struct cli_ana *a, uint32_t stack, bool bottom_up, uint32_t **labels,
                           size_t *cap, uint32_t nr_before)
{
    struct ana_stacks *st = cli_ana_stacks(a);
    const struct ana_frame *f;
    /* Each stack once into a tree: its frames need not be kept. */
    int nf = ana_stacks_frames(st, stack, &f);
    uint32_t image, limit = fmt_reader_info(a->r)->stack_depth, cut_label = 0;

    if (nf < 0)
        cli_ana_fail(a, nf);
    /* A stack as deep as the recorder's limit was cut there: its root side
     * is missing, so it must not stand as a root of its own. */
    bool cut = nf > 0 && limit && fmt_reader_stack(a->r, stack, &image, NULL, 0) >= (int)limit;
    if (cut) {
        char name[64];
        snprintf(name, sizeof(name), "(stack cut at %u frames)", limit);
        if (ana_stacks_intern(st, name, &cut_label))
            cli_die("%s: out of memory", a->cmd);
    }
    if ((size_t)nr_before + (size_t)nf + 2 > *cap) {
        *cap = (size_t)nr_before + (size_t)nf + 2;
        if (!(*labels = realloc(*labels, *cap * sizeof(**labels))))
            cli_die("%s: out of memory", a->cmd);
    }
    /* Trees start at main or the thread's function: the entry chain is
     * left out (ana_interest.h), unless --all-frames. */
    if (nf > 0 && !a->sym.so.show_internal)
        nf = (int)ana_interest_entry(cli_ana_classes(a, f, (unsigned)nf), (uint32_t)nf);
    uint32_t nl = nr_before;
    if (nf == 0)
        (*labels)[nl++] = 0; /* "(no stack)" */
    if (cut && !bottom_up)
        (*labels)[nl++] = cut_label;
    for (int j = 0; j < nf; j++)
        (*labels)[nl++] = f[bottom_up ? j : nf - 1 - j].function;
    if (cut && bottom_up)
        (*labels)[nl++] = cut_label;
    return nl;
}
