/* SPDX-License-Identifier: MIT */
/* Call sites grouped by the frames a row shows (see cli_rows.h). */
#include "cli/cli_rows.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/core/ana_map.h"
#include "analysis/core/ana_table.h"
#include "analysis/model/ana_fold.h"
#include "analysis/model/ana_reach.h"
#include "analysis/model/ana_site_se.h"
#include "cli/cli.h"
#include "util/util_array.h"

uint32_t cli_rows_key(struct cli_ana *a, uint32_t stack)
{
    uint32_t key;
    int rc = ana_stacks_key(cli_ana_stacks(a), stack, 1, &key);

    if (rc)
        cli_ana_fail(a, rc);
    return key;
}

/* The first stack id of each (group, key): by key for the first group a
 * key comes in (keys are dense), in a map for the rare key of another. */
struct firsts {
    uint32_t *stack; /* by key: first stack id + 1, 0 none */
    uint32_t *image;
    size_t cap;
    struct ana_map other; /* ((image << 32 | key) + 1) -> first stack id */
};

static uint32_t first_of(struct cli_ana *a, struct firsts *f, uint32_t image, uint32_t stack)
{
    uint32_t key = cli_rows_key(a, stack);
    size_t cap = f->cap;
    int created;

    if (UTIL_ARRAY_RESERVE_ZERO(f->stack, f->cap, (size_t)key + 1, 1024) ||
        UTIL_ARRAY_RESERVE_ZERO(f->image, cap, (size_t)key + 1, 1024))
        cli_die("%s: out of memory", a->cmd);
    if (!f->stack[key]) {
        f->stack[key] = stack + 1;
        f->image[key] = image;
    }
    if (f->image[key] == image)
        return f->stack[key] - 1;
    uint32_t *first = ana_map_put(&f->other, ((uint64_t)image << 32 | key) + 1, &created);
    if (!first)
        cli_die("%s: out of memory", a->cmd);
    if (created)
        *first = stack;
    return *first;
}

uint32_t cli_rows_group(const struct cli_ana *a, enum cli_rows_by by, uint32_t image)
{
    switch (by) {
    case CLI_ROWS_BY_IMAGE:
        return image;
    case CLI_ROWS_BY_PROGRAM:
        return image < a->programs.nr_images ? a->programs.of_image[image] : UINT32_MAX;
    default:
        return 0;
    }
}

/* The site counters, which add up (the model's one list). */
static void add_counters(struct ana_site *to, const struct ana_site *s)
{
#define ADD(type, name) to->name += s->name;
    ANA_SITE_COUNTERS(ADD)
#undef ADD
}

/* For each stack id with a site that allocated or holds blocks, the
 * lowest stack id of its row: the sites of one group (cli_rows_group)
 * whose stacks read the same; UINT32_MAX for the others. A fresh array of
 * nr_sites entries; *nr_rows: how many rows, *nr_shared: how many of them
 * have more than one site. */
static uint32_t *first_ids(struct cli_ana *a, const struct ana_model *m, enum cli_rows_by by,
                           uint32_t *nr_rows, uint32_t *nr_shared)
{
    uint32_t n = ana_model_nr_sites(m);
    uint32_t *first = malloc(((size_t)n + 1) * sizeof(*first));
    uint8_t *shared = calloc((size_t)n + 1, 1);
    struct firsts fs = {0};

    if (!first || !shared)
        cli_die("%s: out of memory", a->cmd);
    *nr_rows = *nr_shared = 0;
    ana_map_init(&fs.other, sizeof(uint32_t));
    for (uint32_t id = 0; id < n; id++) {
        const struct ana_site *s = ana_model_site(m, id);

        first[id] = UINT32_MAX;
        if (!s || (!s->nr_allocs && !s->live_blocks))
            continue;
        uint32_t f = first[id] = first_of(a, &fs, cli_rows_group(a, by, s->image), id);
        if (f == id)
            ++*nr_rows;
        else if (!shared[f]++)
            ++*nr_shared;
    }
    free(shared);
    free(fs.stack);
    free(fs.image);
    ana_map_release(&fs.other);
    return first;
}

/* The rows of the per-program view, or of the whole tree: each a copy,
 * its peak the sites' bytes at the program's (the tree's) peak. */
static void make_grouped(struct cli_ana *a, const struct ana_model *m, enum cli_rows_by by,
                         struct cli_rows *out)
{
    uint32_t n = ana_model_nr_sites(m), nr_rows, nr_shared, k = 0;
    uint32_t *first = first_ids(a, m, by, &nr_rows, &nr_shared);

    out->row = calloc((size_t)n + 1, sizeof(*out->row));
    out->merged = calloc((size_t)nr_rows + 1, sizeof(*out->merged));
    if (!out->row || !out->merged)
        cli_die("%s: out of memory", a->cmd);
    for (uint32_t id = 0; id < n; id++)
        if (first[id] == id) {
            out->merged[k].image = ana_model_site(m, id)->image;
            out->row[id] = &out->merged[k++];
        }
    for (uint32_t id = 0; id < n; id++) {
        if (first[id] == UINT32_MAX)
            continue;
        struct ana_site *row = (struct ana_site *)out->row[first[id]];
        const struct ana_site *s = ana_model_site(m, id);
        add_counters(row, s);
        row->peak_bytes +=
            by == CLI_ROWS_BY_ALL ? s->peak_all_bytes : ana_model_site_program_peak(m, id);
        row->peak_all_bytes += s->peak_all_bytes;
    }
    out->first = first;
    out->nr = n;
}

void cli_rows_make_by(struct cli_ana *a, const struct ana_model *m, enum cli_rows_by by,
                      struct cli_rows *out)
{
    memset(out, 0, sizeof(*out));
    if (by == CLI_ROWS_BY_IMAGE)
        cli_rows_make(a, m, out);
    else
        make_grouped(a, m, by, out);
}

/* By process: a row of one site is the model's site itself; a row of
 * several is a sum in merged. */
void cli_rows_make(struct cli_ana *a, const struct ana_model *m, struct cli_rows *out)
{
    memset(out, 0, sizeof(*out));
    uint32_t n = ana_model_nr_sites(m), nr_rows, nr_shared, k = 0;
    uint32_t *first = first_ids(a, m, CLI_ROWS_BY_IMAGE, &nr_rows, &nr_shared);

    out->row = calloc((size_t)n + 1, sizeof(*out->row));
    out->merged = calloc((size_t)nr_shared + 1, sizeof(*out->merged));
    if (!out->row || !out->merged)
        cli_die("%s: out of memory", a->cmd);
    for (uint32_t id = 0; id < n; id++)
        if (first[id] != UINT32_MAX && first[id] != id && !out->row[first[id]]) {
            out->merged[k].image = ana_model_site(m, first[id])->image;
            out->row[first[id]] = &out->merged[k++];
        }
    for (uint32_t id = 0; id < n; id++) {
        uint32_t f = first[id];
        if (f == UINT32_MAX)
            continue;
        const struct ana_site *s = ana_model_site(m, id);
        if (!out->row[f]) { /* a row of one site (the shared ones are set) */
            out->row[f] = s;
            continue;
        }
        struct ana_site *row = (struct ana_site *)out->row[f];
        add_counters(row, s);
        row->peak_bytes += s->peak_bytes;
        row->peak_all_bytes += s->peak_all_bytes;
    }
    out->first = first;
    out->nr = n;
}

void cli_rows_from_fold(struct cli_ana *a, const struct ana_fold *f, enum cli_rows_by by,
                        struct cli_rows *out)
{
    uint32_t n;
    const struct ana_fold_row *v = ana_fold_rows(f,
                                                 by == CLI_ROWS_BY_ALL     ? ANA_FOLD_BY_ALL
                                                 : by == CLI_ROWS_BY_IMAGE ? ANA_FOLD_BY_IMAGE
                                                                           : ANA_FOLD_BY_PROGRAM,
                                                 &n);

    memset(out, 0, sizeof(*out));
    out->nr = n;
    out->row = calloc((size_t)n + 1, sizeof(*out->row));
    out->stack = malloc(((size_t)n + 1) * sizeof(*out->stack));
    out->live_stack = malloc(((size_t)n + 1) * sizeof(*out->live_stack));
    out->supp = malloc(((size_t)n + 1) * sizeof(*out->supp));
    out->lowest = malloc(((size_t)n + 1) * sizeof(*out->lowest));
    if (!out->row || !out->stack || !out->live_stack || !out->supp || !out->lowest)
        cli_die("%s: out of memory", a->cmd);
    for (uint32_t id = 0; id < n; id++) {
        out->row[id] = &v[id].s;
        out->lowest[id] = v[id].stack;
        out->stack[id] = v[id].made_stack;
        out->live_stack[id] = v[id].live_stack;
        out->supp[id] = v[id].tag != 0;
    }
}

void cli_rows_answer(struct cli_ana *a, const struct ana_model *m, enum cli_rows_by by,
                     struct cli_rows *out)
{
    if (a->fold)
        cli_rows_from_fold(a, a->fold, by, out);
    else
        cli_rows_make_by(a, m, by, out);
}

bool cli_rows_suppressed(struct cli_ana *a, const struct cli_rows *r, uint32_t id)
{
    return r->supp ? r->supp[id] : cli_ana_suppressed(a, cli_rows_stack(r, id));
}

void cli_rows_release(struct cli_rows *r)
{
    free(r->row);
    free(r->merged);
    free(r->first);
    free(r->stack);
    free(r->live_stack);
    free(r->supp);
    free(r->lowest);
    memset(r, 0, sizeof(*r));
}

struct ana_reach_sum *cli_rows_reach(const struct cli_rows *r, uint32_t nr_sites,
                                     const struct ana_reach *reach)
{
    struct ana_reach_sum *sum = calloc((size_t)nr_sites + 1, sizeof(*sum));

    if (!sum)
        cli_die("out of memory");
    for (uint32_t s = 0; s < nr_sites && s < reach->nr_sites; s++) {
        uint32_t id = r->first[s];
        if (id >= nr_sites)
            continue;
        for (unsigned c = 0; c < FMT_NR_REACH; c++) {
            sum[id].bytes[c] += reach->site[s].bytes[c];
            sum[id].blocks[c] += reach->site[s].blocks[c];
        }
    }
    return sum;
}

int cli_rows_cmp_leaked(const void *x, const void *y, void *arg)
{
    const struct ana_site *const *rows = arg;
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    int64_t va = rows[a]->live_bytes, vb = rows[b]->live_bytes;

    if (va != vb)
        return va < vb ? 1 : -1;
    return (a > b) - (a < b);
}

void cli_rows_set_se(const struct cli_ana *a, struct ana_table *t, const struct ana_site *s,
                     uint64_t peak_bytes, struct cli_rows_se_cols cols)
{
    struct ana_site_se se;
    const int col[] = {cols.peak, cols.leaked, cols.blocks, cols.allocs, cols.bytes};

    if (fmt_reader_sample_bytes(a->r) <= 1)
        return; /* exact, or --sample 1: every block recorded */
    ana_site_se(s, peak_bytes, &se);
    const double v[] = {se.peak, se.leaked, se.blocks, se.allocs, se.bytes};
    for (unsigned i = 0; i < sizeof(col) / sizeof(col[0]); i++)
        if (col[i] >= 0)
            ana_table_set_se(t, (unsigned)col[i], v[i]); /* allocates nothing */
}
