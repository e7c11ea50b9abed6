/* SPDX-License-Identifier: MIT */
/* The aggregator's interval tables (rec_agg_internal.h): its sites (image,
 * stack) and batch rows (thread, stack, size class), each an array found
 * through an index whose slots carry a generation. A cut empties both by
 * starting a new generation, without touching the slots: a cut costs
 * what the interval used, not the table's size (a period of 1 ms). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "recorder/rec_agg_internal.h"
#include "util/util_array.h"

#define REC_AGG_IX_FIRST 1024u

static inline uint32_t ix_home(const struct rec_agg_ix *x, uint64_t k1, uint64_t k2)
{
    uint64_t h = (k1 * 0x9e3779b97f4a7c15ull) ^ (k2 * 0xff51afd7ed558ccdull);

    return (uint32_t)(h >> 29) & x->mask;
}

/* The record of this generation in slot i, or 0 (the slot is empty). */
static inline uint32_t ix_at(const struct rec_agg_ix *x, uint32_t i)
{
    uint64_t v = x->slots[i];

    return (uint32_t)(v >> 32) == x->gen ? (uint32_t)v : 0;
}

/* Twice the slots (or the first ones), this generation's records put
 * again; key(i) gives record i's two key words. */
static int ix_grow(struct rec_agg_ix *x, const void *recs, size_t rec_size, uint32_t nr,
                   void (*key)(const void *rec, uint64_t *k1, uint64_t *k2))
{
    uint32_t cap = x->mask ? (x->mask + 1) * 2 : REC_AGG_IX_FIRST;
    uint64_t *n = calloc(cap, sizeof(*n));

    if (!n || !cap) {
        free(n);
        return -ENOMEM;
    }
    free(x->slots);
    x->slots = n;
    x->mask = cap - 1;
    x->gen = 1; /* slots of 0 are of no generation */
    for (uint32_t r = 0; r < nr; r++) {
        uint64_t k1, k2;

        key((const char *)recs + r * rec_size, &k1, &k2);
        uint32_t i = ix_home(x, k1, k2);
        while (ix_at(x, i))
            i = (i + 1) & x->mask;
        x->slots[i] = (uint64_t)x->gen << 32 | (r + 1);
    }
    return 0;
}

static void site_key(const void *rec, uint64_t *k1, uint64_t *k2)
{
    const struct rec_agg_site *s = rec;

    *k1 = s->image;
    *k2 = s->stack;
}

static void row_key(const void *rec, uint64_t *k1, uint64_t *k2)
{
    const struct rec_agg_row *r = rec;

    *k1 = (uint64_t)r->thread << 8 | r->cls;
    *k2 = r->stack;
}

uint32_t rec_agg_site(struct rec_agg *a, uint32_t image, uint32_t stack)
{
    struct rec_agg_ix *x = &a->site_ix;
    uint32_t i, r;

    if (2 * (a->nr_sites + 1) > x->mask + 1 &&
        ix_grow(x, a->sites, sizeof(*a->sites), a->nr_sites, site_key))
        return UINT32_MAX;
    for (i = ix_home(x, image, stack); (r = ix_at(x, i)) != 0; i = (i + 1) & x->mask)
        if (a->sites[r - 1].image == image && a->sites[r - 1].stack == stack)
            return r - 1;
    if (UTIL_ARRAY_RESERVE(a->sites, a->cap_sites, (size_t)a->nr_sites + 1, 256))
        return UINT32_MAX;
    /* No snapshot yet: its first change takes one (rec_agg.c). */
    a->sites[a->nr_sites] = (struct rec_agg_site){
        .image = image, .stack = stack, .snap_epoch = {UINT64_MAX, UINT64_MAX}};
    x->slots[i] = (uint64_t)x->gen << 32 | ++a->nr_sites;
    return a->nr_sites - 1;
}

struct rec_agg_row *rec_agg_row(struct rec_agg *a, uint32_t thread, uint32_t stack, uint32_t cls)
{
    struct rec_agg_ix *x = &a->row_ix;
    uint64_t k1 = (uint64_t)thread << 8 | cls;
    uint32_t i, r;

    if (2 * (a->nr_rows + 1) > x->mask + 1 &&
        ix_grow(x, a->rows, sizeof(*a->rows), a->nr_rows, row_key))
        return NULL;
    for (i = ix_home(x, k1, stack); (r = ix_at(x, i)) != 0; i = (i + 1) & x->mask) {
        struct rec_agg_row *row = &a->rows[r - 1];

        if (row->thread == thread && row->stack == stack && row->cls == cls)
            return row;
    }
    if (UTIL_ARRAY_RESERVE(a->rows, a->cap_rows, (size_t)a->nr_rows + 1, 256))
        return NULL;
    a->rows[a->nr_rows] = (struct rec_agg_row){.thread = thread, .stack = stack, .cls = cls};
    x->slots[i] = (uint64_t)x->gen << 32 | ++a->nr_rows;
    return &a->rows[a->nr_rows - 1];
}

static void ix_next_gen(struct rec_agg_ix *x)
{
    /* After 2^32 - 1 cuts a generation would come back: empty it for real. */
    if (++x->gen == 0) {
        if (x->slots)
            memset(x->slots, 0, ((size_t)x->mask + 1) * sizeof(*x->slots));
        x->gen = 1;
    }
}

void rec_agg_ix_reset(struct rec_agg *a)
{
    ix_next_gen(&a->site_ix);
    ix_next_gen(&a->row_ix);
    a->nr_sites = 0;
    a->nr_rows = 0;
}

void rec_agg_ix_free(struct rec_agg *a)
{
    free(a->site_ix.slots);
    free(a->row_ix.slots);
    free(a->sites);
    free(a->rows);
}
