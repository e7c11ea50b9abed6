/* SPDX-License-Identifier: MIT */
/* Bounded memory on process trees (docs/architecture.md, "Process trees:
 * an image's state goes at its end"): a command whose
 * tables are the per-program view's and the tree's asks the model to hand
 * each image's sites to a fold at the image's end and drop them
 * (ana_fold.h), and reads its rows from the fold (cli_rows_answer). */
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
 * (html): whether the per-program view is on, no block is kept
 * (keeps_blocks false), the trace has no pools and cli_fold_trace says
 * yes. When not, a trace opened with stacks_later
 * has every stack decoded now. Dies on failure. */
bool cli_fold_can(struct cli_ana *a, bool keeps_blocks);

/* Whether r's sites may be folded at their images' ends: folding is on
 * and the trace is not aggregated (record --aggregate: a process's shares
 * of its peak come in rows after its end; its sites are few anyway). */
bool cli_fold_trace(const struct fmt_reader *r);

/* Without the per-program view a trace of fewer processes than this is
 * replayed whole (in parallel ranges where the options allow): its
 * processes are a program and the shells that started it, not a build.
 * 8, or 2 with MEMSCRIBE_FOLD=always (tests fold small trees so). */
uint32_t cli_fold_min_images(void);

/* Whether the processes a's --pid, --exe or --thread leave out can have
 * their stacks let go as they end (ana_model_retire.left_out; a trace
 * opened with stacks_later, folding on), whether or not the rest folds. */
bool cli_fold_leaves_out(const struct cli_ana *a);

/* Whether folding is on: MEMSCRIBE_FOLD=0 turns it off (tests compare). */
bool cli_fold_wanted(void);

/* Image ended at end_ns and was folded: the stack nodes its rows read
 * are dropped (ana_stacks_drop_nodes), and the reader lets its process's
 * stacks go once an image ends a second after it (fmt_reader_forget_image:
 * a trace opened with a->stacks_later). Returns 0 or -errno. */
int cli_fold_let_go(struct cli_ana *a, uint32_t image, uint64_t end_ns);

/* A command that reads the trace from t_ns on (an index's answer): the
 * stacks of the images that ended over ANA_ENDED_LAG_NS before it are let
 * go now, in the order they ended, so that decoding the stacks of those
 * still running does not keep every earlier process's (a trace opened
 * with a->stacks_later). Returns 0 or -errno. */
int cli_fold_let_go_before(struct cli_ana *a, uint64_t t_ns);

/* cli_fold_let_go as a callback of the analysis (arg: the cli_ana), for
 * ana_model_retire.left_out, ana_html_options.let_go and
 * ana_export_options.image_done. */
int cli_fold_let_go_fn(void *a, uint32_t image, uint64_t end_ns);

/* Keep stack's frames (ana_stacks_get) for when its process's stacks are
 * gone: the rows and tables a command prints at the end. Returns 0 or
 * -errno. */
int cli_fold_keep_frames(struct cli_ana *a, uint32_t stack);

#endif
