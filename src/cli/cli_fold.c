/* SPDX-License-Identifier: MIT */
/* The fold of a command's model (see cli_fold.h). */
#include "cli/cli_fold.h"

#include <stdlib.h>

#include "analysis/model/ana_fold.h"
#include "analysis/plan/ana_plan_fold.h"
#include "cli/cli.h"
#include "cli/cli_rows.h"

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

/* What a's command asks of the planner's rule (ana_plan_fold.h). */
static struct ana_fold_ask ask_of(const struct cli_ana *a, bool keeps_blocks)
{
    return (struct ana_fold_ask){.by_program = a->by_program,
                                 .alone = a->fold_alone,
                                 .keeps_blocks = keeps_blocks,
                                 .selection = !ana_filter_is_empty(&a->filter),
                                 .index = a->index,
                                 .stacks_later = a->stacks_later};
}

bool cli_fold_leaves_out(const struct cli_ana *a)
{
    struct ana_fold_ask ask = ask_of(a, false);

    return ana_plan_fold_leaves_out(a->r, &ask);
}

bool cli_fold_can(struct cli_ana *a, bool keeps_blocks)
{
    struct ana_fold_ask ask = ask_of(a, keeps_blocks);

    if (ana_plan_folds(a->r, &ask))
        return true;
    /* Every stack is read at the end, but those of the processes left out,
     * which go as they end. */
    int rc =
        a->stacks_later && !ana_plan_fold_leaves_out(a->r, &ask) ? fmt_reader_load_stacks(a->r) : 0;
    if (rc)
        cli_ana_fail(a, rc);
    return false;
}

bool cli_fold_setup(struct cli_ana *a, struct ana_model_options *mo, enum cli_fold_for what)
{
    if (!cli_fold_can(a, mo->keep_blocks || mo->temporary_threshold)) {
        if (cli_fold_leaves_out(a))
            mo->retire = (struct ana_model_retire){.arg = &a->letgo, .left_out = ana_letgo_fn};
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
    a->fold->letgo = &a->letgo;
    mo->retire = ana_fold_retire(a->fold);
    return true;
}
