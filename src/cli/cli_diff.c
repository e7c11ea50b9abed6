/* SPDX-License-Identifier: MIT */
/* The base run of a differential flame graph (cli_diff.h). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/diff/ana_diff_flame.h"
#include "analysis/diff/ana_diff_site.h"
#include "analysis/html/ana_html.h"
#include "analysis/model/ana_fold.h"
#include "analysis/model/ana_model.h"
#include "analysis/model/ana_reach.h"
#include "cli/cli.h"
#include "cli/cli_diff.h"

int64_t *cli_diff_flame_base(struct cli_ana *nw, const char *base_path, const struct ana_tree *t,
                             enum ana_flame_cost cost, int inverted)
{
    struct ana_model_options mo = {0};
    char *argv[] = {(char *)base_path, NULL};
    struct ana_model *m;
    struct ana_stacks *st;
    struct ana_tree tb;
    struct cli_ana b;
    int64_t *out = NULL;
    int rc;

    cli_ana_init(&b, nw->cmd, 0);
    b.sym = nw->sym;
    b.format = nw->format;
    cli_ana_open(&b, 1, argv, 0);
    if (cost == ANA_FLAME_TEMPORARY)
        cli_ana_want_temporary(&b, "--cost temporary");
    struct ana_scan_options so;
    cli_ana_scan_options(&b, UINT64_MAX, &so);
    rc = ana_model_build(&m, b.r, &mo, &so);
    cli_ana_progress_done(&b);
    if (rc)
        cli_ana_fail(&b, rc);
    st = cli_ana_stacks(&b);
    if ((rc = ana_tree_init(&tb, ANA_FLAME_NR_COSTS, 0)) ||
        (rc = ana_flame_build(&tb, m, st, inverted, NULL)) ||
        (rc = ana_flame_sort(&tb, ana_stacks_str_fn, st)) ||
        (rc = ana_diff_flame_match(t, ana_stacks_str_fn, cli_ana_stacks(nw), &tb, ana_stacks_str_fn,
                                   st, cost, &out)))
        cli_ana_fail(&b, rc);
    ana_tree_release(&tb);
    ana_model_destroy(m);
    cli_ana_close(&b);
    return out;
}

void cli_diff_html_base(struct cli_ana *nw, const char *path, struct cli_ana *b,
                        struct ana_html_base *out)
{
    struct ana_model_options mo = {0};
    char *argv[] = {(char *)path, NULL};

    cli_ana_init(b, nw->cmd, 0);
    b->sym = nw->sym;
    cli_ana_open(b, 1, argv, 0);
    out->trace_name = path;
    out->model = cli_ana_model(b, &mo, UINT64_MAX);
    out->stacks = cli_ana_stacks(b);
    fmt_reader_counts(b->r, &out->counts);
    out->sample_bytes = fmt_reader_sample_bytes(b->r);
}

/* One site (or row) of stack, its values v, into side which of d. */
static void add_one(struct cli_ana *a, struct ana_diff *d, enum ana_diff_side which, int lines,
                    uint32_t stack, const uint64_t v[ANA_DIFF_NR_METRICS], char **key, size_t *cap)
{
    struct ana_stacks *st = cli_ana_stacks(a);
    long len = ana_diff_site_key(st, stack, lines, key, cap);

    if (len < 0)
        cli_die("%s: %s: stack %" PRIu32 ": %s", a->cmd, a->path, stack, strerror((int)-len));
    if (ana_diff_add(d, which, len ? *key : ana_stacks_str(st, 0), v))
        cli_die("%s: out of memory", a->cmd);
}

/* A site's leaks and classes taken out of v: suppressions list them apart. */
static void leaks_apart(uint64_t v[ANA_DIFF_NR_METRICS])
{
    v[ANA_DIFF_LEAKED] = v[ANA_DIFF_LEAKED_BLOCKS] = 0;
    v[ANA_DIFF_LOST] = v[ANA_DIFF_DEFINITE] = v[ANA_DIFF_LOST_BLOCKS] = v[ANA_DIFF_POSSIBLE] = 0;
}

void cli_diff_add_sites(struct cli_ana *a, const struct ana_model *m, struct ana_diff *d,
                        enum ana_diff_side which, int lines, const bool *supp,
                        const struct ana_reach *reach)
{
    char *key = NULL;
    size_t cap = 0;

    for (uint32_t id = 0; id < ana_model_nr_sites(m); id++) {
        const struct ana_site *site = ana_model_site(m, id);
        uint64_t v[ANA_DIFF_NR_METRICS];

        if (!site || !ana_diff_site_values(site, v))
            continue;
        if (reach && id < reach->nr_sites) {
            const struct ana_reach_sum *c = &reach->site[id];
            v[ANA_DIFF_LOST] = ana_reach_lost_bytes(c);
            v[ANA_DIFF_DEFINITE] = c->bytes[FMT_REACH_DEFINITE];
            v[ANA_DIFF_LOST_BLOCKS] = ana_reach_lost_blocks(c);
            v[ANA_DIFF_POSSIBLE] = c->bytes[FMT_REACH_POSSIBLE];
        }
        if (supp && supp[id])
            leaks_apart(v);
        add_one(a, d, which, lines, id, v, &key, &cap);
    }
    free(key);
}

void cli_diff_add_fold(struct cli_ana *a, const struct ana_fold *f, struct ana_diff *d,
                       enum ana_diff_side which, int lines)
{
    uint32_t n;
    const struct ana_fold_row *rows = ana_fold_rows(f, ANA_FOLD_BY_ALL, &n);
    char *key = NULL;
    size_t cap = 0;

    for (uint32_t i = 0; i < n; i++) {
        const struct ana_fold_row *r = &rows[i];
        uint64_t v[ANA_DIFF_NR_METRICS];

        if (!ana_diff_site_values(&r->s, v) && !r->leaked_bytes)
            continue;
        v[ANA_DIFF_LEAKED] = r->leaked_bytes;
        /* A row whose leaks a suppression matches (cli_fold.c's tag). */
        if (r->tag && r->live_stack != UINT32_MAX)
            leaks_apart(v);
        add_one(a, d, which, lines, r->made_stack, v, &key, &cap);
    }
    free(key);
}

/* The class of a line of a site's key (a frame's function or place) as
 * the run whose stacks know it gave it (ana_stacks_class), else user. */
static uint8_t line_class(struct cli_ana *const sides[2], const char *line)
{
    for (unsigned k = 0; k < 2; k++) {
        uint32_t id;

        if (!sides[k] || !sides[k]->r)
            continue;
        if (ana_stacks_intern(cli_ana_stacks(sides[k]), line, &id))
            cli_die("%s: out of memory", sides[k]->cmd);
        enum ana_frame_class c = ana_stacks_class(sides[k]->stacks, id);
        if (c != ANA_FRAME_USER)
            return (uint8_t)c;
    }
    return ANA_FRAME_USER;
}

void cli_diff_set_site(struct cli_ana *nw, struct cli_ana *base, struct ana_table *t, unsigned col,
                       const char *key, unsigned frames)
{
    struct cli_ana *const sides[2] = {nw, base};
    char *copy = strdup(key), *save = NULL, (*marks)[48];
    size_t n = 1;

    for (const char *p = key; *p; p++)
        n += *p == '\n';
    const char **lines = malloc(n * sizeof(*lines)), **items = malloc((n + 1) * sizeof(*items));
    uint8_t *cls = malloc(n);
    struct ana_interest_item *it = malloc(n * sizeof(*it));
    marks = malloc((n + 1) * sizeof(*marks));
    if (!copy || !lines || !items || !cls || !it || !marks)
        cli_die("out of memory");
    n = 0;
    for (char *tok = strtok_r(copy, "\n", &save); tok; tok = strtok_r(NULL, "\n", &save))
        lines[n++] = tok;
    unsigned nr = 0, interest;
    if (nw->format == CLI_FMT_TEXT && !nw->sym.so.show_internal) {
        /* a row as every command lays it out (ana_interest.h) */
        struct ana_interest_row row;

        for (size_t i = 0; i < n; i++)
            cls[i] = line_class(sides, lines[i]);
        ana_interest_row(cls, (uint32_t)n, frames, it, &row);
        interest = 0;
        for (uint32_t i = 0; i < row.nr_items; i++) {
            if (it[i].first == row.interest)
                interest = nr;
            if (it[i].folded) {
                ana_interest_mark(marks[nr], sizeof(marks[nr]), it[i].nr);
                items[nr] = marks[nr];
            } else {
                items[nr] = lines[it[i].first];
            }
            nr++;
        }
        if (row.nr_more) {
            snprintf(marks[nr], sizeof(marks[nr]), "... %u more", row.nr_more);
            items[nr] = marks[nr];
            nr++;
        }
    } else {
        for (size_t i = 0; i < n; i++)
            cls[i] = line_class(sides, lines[i]);
        interest = ana_interest_find(cls, (uint32_t)n);
        nr = frames && n > frames ? frames : (unsigned)n;
        for (unsigned i = 0; i < nr; i++)
            items[i] = lines[i];
        if (nr < n) {
            snprintf(marks[nr], sizeof(marks[nr]), "... %zu more", n - nr);
            items[nr] = marks[nr];
            nr++;
        }
    }
    if (ana_table_set_stack(t, col, items, nr, interest))
        cli_die("out of memory");
    free(copy);
    free(lines);
    free(items);
    free(cls);
    free(it);
    free(marks);
}
