/* SPDX-License-Identifier: MIT */
/* Whether a model is folded at its processes' ends (docs/architecture.md,
 * "Process trees: an image's state goes at its end"; ana_fold.h): a
 * query whose rows are the per-program view's or the tree's, of a trace of
 * many processes, hands each process's sites to a fold as it ends and lets
 * its stacks go (ana_letgo.h), which bounds a build's memory to its
 * running processes'. The planner's rule, one place for every command;
 * how a command's rows are keyed stays the command's. */
#ifndef ANA_PLAN_FOLD_H
#define ANA_PLAN_FOLD_H

#include <stdbool.h>
#include <stdint.h>

struct fmt_reader;

/* What the command's rows and options are, for the rule. */
struct ana_fold_ask {
    bool by_program;   /* the per-program view is on */
    bool alone;        /* its rows need no per-program view (rows by process, by key) */
    bool keeps_blocks; /* the model keeps every block, or the loose temporary rule */
    bool selection;    /* --pid, --exe or --thread leave processes out */
    bool index;        /* the query prefers the index */
    bool stacks_later; /* the trace was opened with FMT_OPEN_STACKS_LATER */
};

/* Whether r's model is folded for ask: the per-program view on (or rows
 * that fold alone, in a tree of ana_plan_fold_min_images processes or
 * more), two processes or more, no block kept, no pools, and
 * ana_plan_fold_trace. */
bool ana_plan_folds(const struct fmt_reader *r, const struct ana_fold_ask *ask);

/* Whether the processes ask's selection leaves out can have their stacks
 * let go as they end (ana_model_retire.left_out), whether or not the rest
 * folds: a trace opened with stacks_later, a tree, folding on, no index. */
bool ana_plan_fold_leaves_out(const struct fmt_reader *r, const struct ana_fold_ask *ask);

/* Whether r's sites may be folded at their images' ends: folding is on
 * and the trace is not aggregated (record --aggregate: a process's shares
 * of its peak come in rows after its end; its sites are few anyway). */
bool ana_plan_fold_trace(const struct fmt_reader *r);

/* Without the per-program view a trace of fewer processes than this is
 * replayed whole: its processes are a program and the shells that started
 * it, not a build. 8, or 2 with MEMSCRIBE_FOLD=always (tests fold small
 * trees so). */
uint32_t ana_plan_fold_min_images(void);

/* Whether folding is on: MEMSCRIBE_FOLD=0 turns it off (tests compare). */
bool ana_plan_fold_wanted(void);

#endif
