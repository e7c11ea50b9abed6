/* SPDX-License-Identifier: MIT */
/* Bounded memory on process trees (docs/architecture.md, "Process trees:
 * an image's state goes at its end"): a command whose tables are the
 * per-program view's and the tree's asks the model to hand each image's
 * sites to a fold at the image's end and drop them (ana_fold.h), and
 * reads its rows from the fold (cli_rows_answer). Whether it folds is the
 * planner's rule (ana_plan_fold.h), and the stacks are let go by
 * ana_letgo.h; what is here is how a command's rows are keyed. */
#ifndef CLI_FOLD_H
#define CLI_FOLD_H

#include <stdbool.h>

#include "analysis/model/ana_model.h"
#include "cli/cli_ana.h"

/* After cli_ana_programs: when the per-program view is on and mo keeps no
 * blocks, make a->fold and set mo->retire to feed it (from the replay, or
 * from the index image by image: leaks --index); cli_ana_answer then
 * finishes it.
 * MEMSCRIBE_FOLD=0 in the environment keeps every site instead (tests
 * compare the two). With a->stacks_later, the reader lets each folded
 * process's stacks go a second after it ended; without a fold, every
 * stack is decoded now, but those of processes a filter leaves out, which
 * mo->retire.left_out lets go as they end (cli_fold_leaves_out). Returns
 * whether a->fold is set. Dies on failure. */
enum cli_fold_for {
    CLI_FOLD_ROWS,   /* the tables of report and leaks: rows read the same by place */
    CLI_FOLD_FLAME,  /* the flame graph's paths: by functions, every site with a number */
    CLI_FOLD_TREE,   /* the call tree's paths: by functions, the sites the tables show */
    CLI_FOLD_PLACES, /* diff --lines: by places, every site with a number */
};
bool cli_fold_setup(struct cli_ana *a, struct ana_model_options *mo, enum cli_fold_for what);

/* cli_fold_setup's test, for a command whose analysis folds by itself
 * (html): the planner's rule (ana_plan_folds) for a's rows and options,
 * keeps_blocks whether the model keeps every block. When not, a trace
 * opened with stacks_later has every stack decoded now. Dies on failure. */
bool cli_fold_can(struct cli_ana *a, bool keeps_blocks);

/* Whether the processes a's --pid, --exe or --thread leave out can have
 * their stacks let go as they end (ana_plan_fold_leaves_out). */
bool cli_fold_leaves_out(const struct cli_ana *a);

/* Keep stack's frames (ana_stacks_get) for when its process's stacks are
 * gone: the rows and tables a command prints at the end. Returns 0 or
 * -errno. */
int cli_fold_keep_frames(struct cli_ana *a, uint32_t stack);

#endif
