/* SPDX-License-Identifier: MIT */
/* The fold of a command's model (see cli_fold.h). */
#include "cli/cli_fold.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/model/ana_fold.h"
#include "cli/cli.h"
#include "cli/cli_rows.h"
#include "cli/cli_supp.h"

static int row_key(void *arg, uint32_t stack, uint32_t *key)
{
    *key = cli_rows_key(arg, stack);
    return 0;
}

/* A row made: its frames kept (ana_stacks_get) for the end, when the
 * process's stacks are gone, and whether a suppression matches it. */
static int row_made(void *arg, uint32_t stack, uint32_t *tag)
{
    struct cli_ana *a = arg;
    const struct ana_frame *f;
    int rc = ana_stacks_get(cli_ana_stacks(a), stack, &f);

    if (rc < 0)
        return rc;
    *tag = cli_supp_match(&a->supp, a, stack) != NULL;
    return 0;
}

/* An image's sites into the fold; then the stack nodes its keys read,
 * of a process that ended, are dropped (ana_stacks_drop_nodes). */
static int retire(void *arg, const struct ana_model *m, uint32_t image)
{
    struct cli_ana *a = arg;
    int rc = ana_fold_image(a->fold, m, image);

    if (a->stacks)
        ana_stacks_drop_nodes(a->stacks);
    return rc;
}

bool cli_fold_setup(struct cli_ana *a, struct ana_model_options *mo)
{
    const char *env = getenv("MEMSCRIBE_FOLD");

    if (!a->by_program || mo->keep_blocks || mo->temporary_threshold || a->index ||
        (env && !strcmp(env, "0")))
        return false;
    if (!(a->fold = malloc(sizeof(*a->fold))))
        cli_die("%s: out of memory", a->cmd);
    cli_supp_load(&a->supp, a); /* rows are matched as they are made */
    ana_fold_init(a->fold, &a->programs, row_key, row_made, a);
    mo->retire = (struct ana_model_retire){retire, a};
    return true;
}
