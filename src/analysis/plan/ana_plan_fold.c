/* SPDX-License-Identifier: MIT */
/* The rule for folding a model at its processes' ends (see
 * ana_plan_fold.h). */
#include "analysis/plan/ana_plan_fold.h"

#include <stdlib.h>
#include <string.h>

#include "memscribe/trace.h"

/* MEMSCRIBE_FOLD: "0" (fold nothing), "always" (from 2 processes), or
 * unset. */
static bool fold_env(const char *value)
{
    const char *env = getenv("MEMSCRIBE_FOLD");

    return env && !strcmp(env, value);
}

uint32_t ana_plan_fold_min_images(void)
{
    return fold_env("always") ? 2 : 8;
}

bool ana_plan_fold_wanted(void)
{
    return !fold_env("0");
}

bool ana_plan_fold_trace(const struct fmt_reader *r)
{
    return ana_plan_fold_wanted() && !fmt_reader_info(r)->aggregate_ns;
}

bool ana_plan_fold_leaves_out(const struct fmt_reader *r, const struct ana_fold_ask *ask)
{
    return ask->stacks_later && ask->selection && !ask->index &&
           fmt_reader_nr_images(r) >= ana_plan_fold_min_images() && ana_plan_fold_trace(r);
}

bool ana_plan_folds(const struct fmt_reader *r, const struct ana_fold_ask *ask)
{
    /* One process: nothing to let go, and the whole model may replay in
     * parallel ranges; so may a few processes without the per-program
     * view (a program started by a shell). */
    uint32_t n = fmt_reader_nr_images(r);

    return n >= 2 && (ask->by_program || (ask->alone && n >= ana_plan_fold_min_images())) &&
           !ask->keeps_blocks && !fmt_reader_nr_pools(r) && ana_plan_fold_trace(r);
}
