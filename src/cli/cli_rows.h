/* SPDX-License-Identifier: MIT */
/* Rows by what they show: call sites whose cleaned stacks name the same
 * places (function, file, line of every frame, in order) in one process
 * image are one row in every table, so an unrolled loop's three call
 * addresses on one source line are one row of Count 3, not three rows that
 * read the same. Grouping happens before ranking and cutting to --top, and
 * adds the per-stack numbers (they are additive). */
#ifndef CLI_ROWS_H
#define CLI_ROWS_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/model/ana_model.h"
#include "cli/cli_ana.h"

enum cli_rows_by { CLI_ROWS_BY_IMAGE, CLI_ROWS_BY_PROGRAM, CLI_ROWS_BY_ALL };

/* A key that is the same for two stacks exactly when their rows would show
 * the same frames: a string id of the place sequence. */
uint32_t cli_rows_key(struct cli_ana *a, uint32_t stack);

/* The model's sites merged into rows, indexed by stack id like
 * ana_model_site(): row[id] is the row whose first (lowest) stack id is id
 * (the model's site itself when no other site reads the same, else the
 * sums of those that do, in merged), NULL for every other id. nr_sites
 * entries. Dies on failure. */
struct cli_rows {
    const struct ana_site **row;
    struct ana_site *merged;
    uint32_t *first; /* first[id]: the id of the row site id is added to, UINT32_MAX: none */
    uint32_t nr;     /* ids are 0 .. nr - 1 */
    /* Rows of a fold (cli_rows_from_fold): ids are dense, in the order of
     * their lowest stack; stack[id] that stack, live_stack[id] the lowest
     * with live blocks (UINT32_MAX: none); first is NULL. NULL for rows of
     * a model, whose ids are stack ids. */
    uint32_t *stack;
    uint32_t *live_stack;
    uint32_t *lowest; /* lowest[id]: the lowest stack id of its sites */
    /* Rows of a fold: whether a suppression matches each (decided when it
     * was made, cli_fold.c); NULL: cli_rows_suppressed asks the rules (cli_ana_suppressed). */
    bool *supp;
};
void cli_rows_make(struct cli_ana *a, const struct ana_model *m, struct cli_rows *out);

/* The stack whose frames row id shows (every stack of a row reads the
 * same): a model's row's lowest, a fold's the one it was made of. */
static inline uint32_t cli_rows_stack(const struct cli_rows *r, uint32_t id)
{
    return r->stack ? r->stack[id] : id;
}

/* The stack id row id is known by (a CSV's stack_id): its sites' lowest,
 * which is the id of a model's row. */
static inline uint32_t cli_rows_lowest(const struct cli_rows *r, uint32_t id)
{
    return r->lowest ? r->lowest[id] : id;
}

/* Whether a suppression matches the leaks of row id (ana_supp.h). */
bool cli_rows_suppressed(struct cli_ana *a, const struct cli_rows *r, uint32_t id);

/* The rows of a fold (cli_ana_fold), by program or all in one: the same
 * rows cli_rows_make_by makes from a whole model, in the same order. */
struct ana_fold;
void cli_rows_from_fold(struct cli_ana *a, const struct ana_fold *f, enum cli_rows_by by,
                        struct cli_rows *out);

/* Rows of other groups than the image: the sites of one program (a->programs,
 * the per-program view) or of the whole trace that read the same are one
 * row, whose peak_bytes is its sites' live bytes at the program's peak
 * (ana_model_site_program_peak) or at the tree's (peak_all_bytes). Every
 * row is a copy (in merged); row->image is its first site's image. */
void cli_rows_make_by(struct cli_ana *a, const struct ana_model *m, enum cli_rows_by by,
                      struct cli_rows *out);

/* The rows of the command's answer by `by`: the fold's where its model
 * was folded into one at each image's end (a->fold, cli_fold.h), else m's
 * (cli_rows_make_by). The one place that chooses between them. */
void cli_rows_answer(struct cli_ana *a, const struct ana_model *m, enum cli_rows_by by,
                     struct cli_rows *out);

/* The group of a site of image in rows by `by`: the image, its program
 * (UINT32_MAX for an image the programs do not know), or 0. */
uint32_t cli_rows_group(const struct cli_ana *a, enum cli_rows_by by, uint32_t image);
void cli_rows_release(struct cli_rows *r);

/* The leak classes (ana_reach.h) of each row: by row id (the rows of
 * nr_sites sites), the sums of its sites' classes; a calloc'd array the
 * caller frees. One pass over the sites. Dies on failure. */
struct ana_reach;
struct ana_reach_sum *cli_rows_reach(const struct cli_rows *r, uint32_t nr_sites,
                                     const struct ana_reach *reach);

/* The columns of a table of rows that hold a site's estimates (-1: a
 * column the table has not). */
struct cli_rows_se_cols {
    int peak, leaked, blocks, allocs, bytes;
};
/* In a sampled trace, the standard errors (ana_site_se.h) of row s's
 * figures, its share of a peak being peak_bytes, set in the latest row of
 * t (ana_table_set_se); in an exact one nothing. */
struct ana_table;
void cli_rows_set_se(const struct cli_ana *a, struct ana_table *t, const struct ana_site *s,
                     uint64_t peak_bytes, struct cli_rows_se_cols cols);

/* qsort_r's comparison of two row ids (uint32_t) whose rows are arg's
 * (cli_rows.row): more leaked bytes (live_bytes) first, then the lower id. */
int cli_rows_cmp_leaked(const void *x, const void *y, void *arg);

#endif
