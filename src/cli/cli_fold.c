/* SPDX-License-Identifier: MIT */
/* The fold of a command's model (see cli_fold.h). */
#include "cli/cli_fold.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/model/ana_fold.h"
#include "cli/cli.h"
#include "cli/cli_rows.h"
#include "util/util_array.h"

static int row_key(void *arg, uint32_t stack, uint32_t *key)
{
    *key = cli_rows_key(arg, stack);
    return 0;
}

/* The flame graph's: its frames are functions. */
static int flame_key(void *arg, uint32_t stack, uint32_t *key)
{
    return ana_stacks_key(cli_ana_stacks(arg), stack, 0, key);
}

/* A row made: whether a suppression matches it. */
static int row_made(void *arg, uint32_t stack, uint32_t *tag)
{
    struct cli_ana *a = arg;

    *tag = cli_ana_suppressed(a, stack);
    return 0;
}

/* A row stays to the end: its frames kept (ana_stacks_get) for then,
 * when the process's stacks are gone. */
static int row_stays(void *arg, uint32_t stack)
{
    return cli_fold_keep_frames(arg, stack);
}

int cli_fold_keep_frames(struct cli_ana *a, uint32_t stack)
{
    const struct ana_frame *f;
    int n = ana_stacks_get(cli_ana_stacks(a), stack, &f);

    return n < 0 ? n : 0;
}

/* Images folded whose stacks the reader still keeps, oldest first, in
 * a->let_go: each is let go once an image ends ANA_ENDED_LAG_NS after it
 * (an event that comes after its process's exit in the trace still finds
 * its stack). */
int cli_fold_let_go(struct cli_ana *a, uint32_t image, uint64_t end_ns)
{
    uint32_t due;
    uint64_t due_end;

    if (a->stacks)
        ana_stacks_drop_nodes(a->stacks);
    while (ana_ended_due(&a->let_go, end_ns, &due, &due_end)) {
        int rc = fmt_reader_forget_image(a->r, due);
        if (rc)
            return rc;
    }
    return ana_ended_push(&a->let_go, image, end_ns);
}

struct end_of {
    uint64_t end_ns;
    uint32_t image;
};

static int by_end(const void *x, const void *y)
{
    const struct end_of *a = x, *b = y;

    if (a->end_ns != b->end_ns)
        return a->end_ns < b->end_ns ? -1 : 1;
    return (a->image > b->image) - (a->image < b->image);
}

int cli_fold_let_go_before(struct cli_ana *a, uint64_t t_ns)
{
    uint32_t n = fmt_reader_nr_images(a->r), k = 0;
    struct end_of *v = malloc(((size_t)n + 1) * sizeof(*v));
    int rc = 0;

    if (!v)
        return -ENOMEM;
    for (uint32_t i = 0; i < n; i++) {
        const struct fmt_image_info *ii = fmt_reader_image(a->r, i);
        if (ii && ii->ended && ii->end_ns + ANA_ENDED_LAG_NS < t_ns)
            v[k++] = (struct end_of){ii->end_ns, i};
    }
    /* In the order they ended, each forgotten decodes the stacks defined
     * up to its last (the reader's table of stack images tells where):
     * only those of the processes running then are held. */
    qsort(v, k, sizeof(*v), by_end);
    for (uint32_t i = 0; i < k && !rc; i++)
        rc = fmt_reader_forget_image(a->r, v[i].image);
    free(v);
    return rc;
}

/* An image's sites into the fold; then its process's stacks are let go
 * (cli_fold_let_go). */
static int retire(void *arg, const struct ana_model *m, uint32_t image)
{
    struct cli_ana *a = arg;
    const struct ana_scope *s = ana_model_image(m, image);
    int rc = ana_fold_image(a->fold, m, image);

    if (rc)
        return rc;
    if (!s->ended) {
        if (a->stacks) /* at the end: nothing more to read */
            ana_stacks_drop_nodes(a->stacks);
        return 0;
    }
    return cli_fold_let_go(a, image, s->end_ns);
}

int cli_fold_let_go_fn(void *a, uint32_t image, uint64_t end_ns)
{
    return cli_fold_let_go(a, image, end_ns);
}

/* MEMSCRIBE_FOLD: "0" (fold nothing), "always" (from 2 processes), or
 * unset. */
static bool fold_env(const char *value)
{
    const char *env = getenv("MEMSCRIBE_FOLD");

    return env && !strcmp(env, value);
}

uint32_t cli_fold_min_images(void)
{
    return fold_env("always") ? 2 : 8;
}

bool cli_fold_wanted(void)
{
    return !fold_env("0");
}

bool cli_fold_trace(const struct fmt_reader *r)
{
    return cli_fold_wanted() && !fmt_reader_info(r)->aggregate_ns;
}

bool cli_fold_leaves_out(const struct cli_ana *a)
{
    return a->stacks_later && !ana_filter_is_empty(&a->filter) && !a->index &&
           fmt_reader_nr_images(a->r) >= cli_fold_min_images() && cli_fold_trace(a->r);
}

bool cli_fold_can(struct cli_ana *a, bool keeps_blocks)
{
    /* One process: nothing to let go, and the whole model may replay in
     * parallel ranges; so may a few processes without the per-program
     * view (a program started by a shell). */
    uint32_t n = fmt_reader_nr_images(a->r);
    if (n < 2 || (!a->by_program && (!a->fold_alone || n < cli_fold_min_images())) ||
        keeps_blocks || fmt_reader_nr_pools(a->r) || !cli_fold_trace(a->r)) {
        /* Every stack is read at the end, but those of the processes left
         * out, which go as they end. */
        int rc = a->stacks_later && !cli_fold_leaves_out(a) ? fmt_reader_load_stacks(a->r) : 0;
        if (rc)
            cli_ana_fail(a, rc);
        return false;
    }
    return true;
}

bool cli_fold_setup(struct cli_ana *a, struct ana_model_options *mo, enum cli_fold_for what)
{
    if (!cli_fold_can(a, mo->keep_blocks || mo->temporary_threshold)) {
        if (cli_fold_leaves_out(a))
            mo->retire = (struct ana_model_retire){.arg = a, .left_out = cli_fold_let_go_fn};
        return false;
    }
    if (!(a->fold = calloc(1, sizeof(*a->fold))))
        cli_die("%s: out of memory", a->cmd);
    if (what != CLI_FOLD_ROWS) {
        ana_fold_init(a->fold, &a->programs,
                      &(struct ana_fold_calls){.key = what == CLI_FOLD_PLACES ? row_key : flame_key,
                                               .stays = row_stays,
                                               .arg = a});
        a->fold->all_sites = what != CLI_FOLD_TREE;
    } else {
        cli_ana_supp_load(a); /* rows are matched as they are made */
        ana_fold_init(a->fold, &a->programs,
                      &(struct ana_fold_calls){
                          .key = row_key, .made = row_made, .stays = row_stays, .arg = a});
    }
    mo->retire = (struct ana_model_retire){retire, a, cli_fold_let_go_fn};
    return true;
}
