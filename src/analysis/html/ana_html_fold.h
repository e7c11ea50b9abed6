/* SPDX-License-Identifier: MIT */
/* The HTML page on a process tree: what its pass keeps of each process is
 * folded at the process's end (docs/architecture.md, "Process trees: an
 * image's state goes at its end").
 *
 * In the per-program view the page's sites are rows by (program, places)
 * and its flame graphs paths by functions, ranked by function chain. The
 * model hands each image's sites over at the image's end (its retire
 * option) to two folds (ana_fold.h): `rows` keyed by places, tagged with
 * the chain of functions, and `flame` keyed by functions over every site,
 * which the flame graphs are drawn from and which picks the rows the page
 * lists. The window cells (ana_html_wpa) are kept per row from the start
 * ("row ids": a row's (program, place key), numbered as first met), so
 * nothing the page reads is per stack once a process has ended, and the
 * reader's stacks of an ended process can go (the let_go callback). */
#ifndef ANA_HTML_FOLD_H
#define ANA_HTML_FOLD_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/core/ana_map.h"
#include "analysis/core/ana_programs.h"
#include "analysis/core/ana_stacks.h"
#include "analysis/html/ana_html_options.h"
#include "analysis/model/ana_fold.h"
#include "analysis/model/ana_heap_replay.h"
#include "analysis/model/ana_model.h"

struct ana_html_fold {
    struct ana_fold rows;  /* the page's sites: by (program, places); tag: function key */
    struct ana_fold flame; /* the flame graphs: by functions, every site */
    struct ana_stacks *st;
    const struct ana_programs *programs;
    /* Row ids: ((program << 32 | place key) + 1) -> id; per id its place
     * key and function key. */
    struct ana_map row_index;
    uint32_t *place, *function;
    uint32_t nr_ids, cap_ids;
    struct ana_map id_of_stack; /* stack + 1 -> row id, the running images' stacks */
    const struct ana_html_options *o;
    /* private: what the folds' callbacks get (the image being folded) */
    struct ana_html_fold_ctx {
        struct ana_html_fold *h;
        uint32_t image;
    } ctx_;
};

/* Fold for the page of st's trace, per the programs of o (o->programs
 * set); o->let_go is told of each image ended. */
void ana_html_fold_init(struct ana_html_fold *h, struct ana_stacks *st,
                        const struct ana_html_options *o);
void ana_html_fold_release(struct ana_html_fold *h);

/* Set mo->retire to feed h, and subscribe to p what keeps the frames of
 * the stacks that commit memory (the commit lifetimes' keys name them
 * at the end). Returns 0 or -errno. */
int ana_html_fold_subscribe(struct ana_html_fold *h, struct ana_model_options *mo,
                            struct ana_heap_replay *p);

/* The window cells' key of a block of stack in image: its row id
 * (ana_html_wpa.key_of). Returns 0 or -errno. */
int ana_html_fold_cell_key(void *h, uint32_t stack, uint32_t image, uint32_t *key);

/* After the model's finish: the folds' rows resolved (ana_fold_finish).
 * Returns 0 or -errno. */
int ana_html_fold_finish(struct ana_html_fold *h, const struct ana_model *m);

/* The row id of a row of h->rows by program (UINT32_MAX: none). */
uint32_t ana_html_fold_row_id(const struct ana_html_fold *h, const struct ana_fold_row *r);

#endif
