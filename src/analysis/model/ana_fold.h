/* SPDX-License-Identifier: MIT */
/* Rows folded at each image's end: bounded memory on process trees
 * (docs/architecture.md, "Process trees: an image's state goes at its
 * end").
 *
 * A model asked to retire its sites (ana_model_options.retire) hands each
 * image's sites over when the image ends; the fold adds them into rows by
 * (program, key) and by key alone (and, asked, by image: the caller keeps
 * the few each image's tables show), the key a caller's function of a stack
 * that is the same for two stacks exactly when their rows read the same
 * (cli_rows_key). The model then drops them, so what a tree's replay
 * holds is the running images' sites and the rows, not every site of
 * every process the build ran.
 *
 * The rows are those the per-program view and the tree's tables make
 * from a whole model (cli_rows.h): counters summed; peak_bytes the sites'
 * live bytes at their program's peak (at the tree's, by key alone),
 * peak_all_bytes at the tree's. A site's share at a peak is known at its
 * image's end only for the peak reached so far: a later peak of its
 * program (of the tree) comes when the image no longer runs, and makes it
 * 0. So each row keeps the shares saved at the latest peak generation it
 * saw, and ana_fold_finish keeps them where that generation is the last. */
#ifndef ANA_FOLD_H
#define ANA_FOLD_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/core/ana_letgo.h"
#include "analysis/core/ana_map.h"
#include "analysis/core/ana_programs.h"
#include "analysis/model/ana_model.h"

/* *key: the row key of stack (0 for none). Returns 0 or -errno. */
typedef int ana_fold_key_fn(void *arg, uint32_t stack, uint32_t *key);

/* A row was made of a site of stack, whose image is being folded (its
 * stack still readable): *tag, kept in the row (a suppression's verdict).
 * Returns 0 or -errno. */
typedef int ana_fold_made_fn(void *arg, uint32_t stack, uint32_t *tag);

/* A row made of stack stays to the end: keep what it shows of it (its
 * frames, as ana_stacks_get keeps them). Returns 0 or -errno. */
typedef int ana_fold_stays_fn(void *arg, uint32_t stack);

/* Rows by image: image's n rows (its sites that read the same, by stack),
 * made at its end; set keep[i] for those to keep (a report's tables show
 * the first few by each ranking), the others are dropped. Returns 0 or
 * -errno. */
struct ana_fold_row;
typedef int ana_fold_keep_fn(void *arg, uint32_t image, const struct ana_fold_row *rows, uint32_t n,
                             bool *keep);

/* What a fold asks its caller. */
struct ana_fold_calls {
    ana_fold_key_fn *key;
    ana_fold_made_fn *made;   /* NULL: every tag 0 */
    ana_fold_stays_fn *stays; /* NULL: nothing to keep */
    void *arg;
    ana_fold_keep_fn *image_rows; /* NULL: no rows by image */
    void *image_arg;
};

enum ana_fold_by { ANA_FOLD_BY_PROGRAM, ANA_FOLD_BY_ALL, ANA_FOLD_BY_IMAGE, ANA_FOLD_NR };

struct ana_fold_row {
    /* Counters summed; image: the image of the row's lowest stack;
     * peak_bytes and peak_all_bytes set by ana_fold_finish. */
    struct ana_site s;
    uint32_t stack;      /* the lowest stack id of its sites */
    uint32_t live_stack; /* the lowest among those with live blocks; UINT32_MAX: none */
    uint32_t made_stack; /* the stack it was made of (ana_fold_made_fn): its frames */
    uint32_t tag;        /* ana_fold_made_fn's */
    uint32_t key;        /* its key (ana_fold_key_fn) */
    uint32_t nr_sites;   /* the sites added into it */
    /* Its sites' live bytes at the end, those above 0 only (s.live_bytes
     * sums them all): a site that freed more than it allocated (blocks
     * made before tracing, or before a window) leaked nothing, as the
     * flame graph and diff count a site's leak. */
    uint64_t leaked_bytes;
    /* private: the shares at the latest peak generation seen */
    uint64_t gen_prog_, bytes_prog_, gen_all_, bytes_all_;
};

struct ana_fold_rows {
    struct ana_fold_row *v;
    uint32_t nr, cap;
    struct ana_map index; /* ((group << 32 | key) + 1) -> row + 1 */
};

struct ana_fold {
    const struct ana_programs *programs;
    /* Which sites make rows: those the tables of report and leaks show
     * (allocations or live blocks: cli_rows.c), or with all_sites every
     * site with a number (the flame graph's: ana_flame_tree.c). */
    bool all_sites;
    struct ana_fold_calls calls;
    struct ana_fold_rows by[ANA_FOLD_NR];
    struct ana_fold_rows img; /* the rows of the image being folded */
    /* Set by the caller: each image's stacks let go once it is folded
     * (a trace opened with FMT_OPEN_STACKS_LATER); NULL: kept. */
    struct ana_letgo *letgo;
};

/* BY_IMAGE rows are made only with calls->image_rows; their peak_bytes is
 * their sites' at their image's own peak. */
void ana_fold_init(struct ana_fold *f, const struct ana_programs *programs,
                   const struct ana_fold_calls *calls);
void ana_fold_release(struct ana_fold *f);

/* Add image's sites, about to be dropped by m, into f's rows: the retire
 * callback (ana_model_retire_fn). Returns 0 or -errno. */
int ana_fold_image(void *f, const struct ana_model *m, uint32_t image);

/* The model option that feeds f (ana_model_options.retire); with
 * f->letgo set, the images the filter leaves out are let go as they end
 * too. */
struct ana_model_retire ana_fold_retire(struct ana_fold *f);

/* After the model's finish (every image retired): resolve the shares by
 * m's last peaks and order each list's rows by stack. Returns 0. */
int ana_fold_finish(struct ana_fold *f, const struct ana_model *m);

/* The rows by `by`, ordered by stack; *n their number. */
const struct ana_fold_row *ana_fold_rows(const struct ana_fold *f, enum ana_fold_by by,
                                         uint32_t *n);

#endif
