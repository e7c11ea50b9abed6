/* SPDX-License-Identifier: MIT */
/* A model's rows grouped for the tables of report and leaks: by process
 * image (the per-process view), by program (the per-program view: the
 * processes of one executable merged, a->programs) or all in one (the
 * tree's own tables). Each group's row ids are listed once, so a table
 * reads its group's rows only; rows whose leaks a suppression matches are
 * marked (listed apart). */
#ifndef CLI_VIEW_H
#define CLI_VIEW_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/model/ana_reach.h"
#include "cli/cli_ana.h"
#include "cli/cli_rows.h"

struct cli_view {
    enum cli_rows_by by;
    struct cli_rows rows; /* by row id (a stack id for a model's), as cli_rows.h */
    bool *suppressed;     /* by row id: leaks listed apart (ana_supp.h) */
    /* Row ids by group, ascending within each: group g's are
     * by_group[group_start[g] .. group_start[g + 1]). */
    uint32_t *by_group;
    uint32_t *group_start;
    uint32_t nr_groups;
    /* A fold's rows by image keep a few of each image's rows: the leaks
     * suppressions list apart, per group and all (at nr_groups), summed
     * when the image was folded (the caller's, not freed here). */
    const uint64_t (*supp_sums)[2];
};

/* The view of the command's answer by `by` (suppressions loaded:
 * cli_ana_supp_load): of the fold's rows where its model was folded into one
 * (a->fold, cli_fold.h), else of m's (cli_rows_answer). Dies on failure. */
void cli_view_answer(struct cli_ana *a, const struct ana_model *m, enum cli_rows_by by,
                     struct cli_view *v);
void cli_view_release(struct cli_view *v);

/* The stack row id shows (cli_rows_stack). */
static inline uint32_t cli_view_stack(const struct cli_view *v, uint32_t id)
{
    return cli_rows_stack(&v->rows, id);
}

/* The row ids of group g (UINT32_MAX: of every group). */
const uint32_t *cli_view_group(const struct cli_view *v, uint32_t g, uint32_t *n);

/* The leaked bytes and blocks of group g (UINT32_MAX: all) that
 * suppressions list apart. */
void cli_view_suppressed(const struct cli_view *v, uint32_t g, uint64_t *bytes, uint64_t *blocks);

/* A part's leaks split by the suppressions, the one definition report and
 * check share (docs/architecture.md, "Meanings"): suppressed, what they
 * list apart (the built-in rules: the runtime's one-time allocations), and
 * unsuppressed, the rest, which check's leak checks hold and report's JSON
 * names unsuppressed_*. The classes with record --reach's, else zero. */
struct cli_view_leaks {
    uint64_t bytes, blocks;           /* unsuppressed: leaked minus suppressed */
    uint64_t supp_bytes, supp_blocks; /* suppressed */
    bool classes;
    struct ana_reach_sum cls, supp_cls; /* the same by class */
};

/* Group g's (UINT32_MAX: all) of part scope s; classes: the part's
 * classes and reach the trace's (the view's rows must be a model's, not a
 * fold's, which keeps no classes), or both NULL. */
void cli_view_leaks(const struct cli_view *v, uint32_t g, const struct ana_scope *s,
                    const struct ana_reach_sum *classes, const struct ana_reach *reach,
                    struct cli_view_leaks *out);

#endif
