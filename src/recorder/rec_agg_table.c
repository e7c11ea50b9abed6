/* SPDX-License-Identifier: MIT */
/* The aggregator's live blocks (rec_agg_internal.h): a slab of blocks
 * whose entries never move while live (the pending list and a thread's
 * latest block name them), an index by (image, heap, address) with linear
 * probing and backward-shift deletion, the pending blocks in arrival order,
 * and the other fields of allocations that are not plain mallocs. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "recorder/rec_agg_internal.h"
#include "util/util_array.h"

#define REC_AGG_FIRST_SLOTS 4096u
/* The pending list is compacted when the blocks that ended in it are more
 * than those still there and than this. */
#define REC_AGG_PEND_SLACK 1024u

static inline uint32_t blk_home(uint32_t mask, uint32_t image, uint32_t heap, uint64_t addr)
{
    /* Heap addresses are 16-byte aligned: the low bits say nothing. */
    uint64_t h =
        ((addr >> 4) ^ ((uint64_t)image << 44) ^ ((uint64_t)heap << 54)) * 0x9e3779b97f4a7c15ull;

    return (uint32_t)(h >> 32) & mask;
}

uint32_t rec_agg_find(const struct rec_agg *a, uint32_t image, uint32_t heap, uint64_t addr)
{
    uint32_t i = blk_home(a->bix_mask, image, heap, addr);

    for (; a->bix[i]; i = (i + 1) & a->bix_mask) {
        const struct rec_agg_blk *b = &a->blks[a->bix[i]];

        if (b->addr == addr && b->image == image && b->heap == heap)
            return i;
    }
    return i;
}

/* Twice the slots, every live block put again. */
static int bix_grow(struct rec_agg *a)
{
    uint32_t cap = (a->bix_mask + 1) * 2;
    uint32_t *n = calloc(cap, sizeof(*n));

    if (!n || cap == 0) {
        free(n);
        return -ENOMEM;
    }
    for (uint32_t i = 0; i <= a->bix_mask; i++) {
        uint32_t k = a->bix[i];

        if (!k)
            continue;
        const struct rec_agg_blk *b = &a->blks[k];
        uint32_t j = blk_home(cap - 1, b->image, b->heap, b->addr);

        while (n[j])
            j = (j + 1) & (cap - 1);
        n[j] = k;
    }
    free(a->bix);
    a->bix = n;
    a->bix_mask = cap - 1;
    return 0;
}

uint32_t rec_agg_blk_new(struct rec_agg *a, uint32_t image, uint32_t heap, uint64_t addr)
{
    uint32_t k;

    if (!a->bix) {
        if (!(a->bix = calloc(REC_AGG_FIRST_SLOTS, sizeof(*a->bix))))
            return 0;
        a->bix_mask = REC_AGG_FIRST_SLOTS - 1;
    }
    /* At most half full: probes stay short. */
    if (2 * (a->bix_nr + 1) > a->bix_mask + 1 && bix_grow(a))
        return 0;
    if (a->free_blk) {
        k = a->free_blk;
        a->free_blk = a->blks[k].site;
    } else {
        if (UTIL_ARRAY_RESERVE(a->blks, a->cap_blks, (size_t)a->nr_blks + 2, 4096))
            return 0;
        k = ++a->nr_blks; /* slot 0 stays unused: 0 is "none" */
    }
    struct rec_agg_blk *b = &a->blks[k];
    memset(b, 0, sizeof(*b));
    b->addr = addr;
    b->image = image;
    b->heap = heap;
    a->bix[rec_agg_find(a, image, heap, addr)] = k;
    a->bix_nr++;
    return k;
}

void rec_agg_unindex(struct rec_agg *a, uint32_t slot)
{
    uint32_t mask = a->bix_mask, hole = slot;

    for (uint32_t j = (slot + 1) & mask; a->bix[j]; j = (j + 1) & mask) {
        const struct rec_agg_blk *b = &a->blks[a->bix[j]];
        uint32_t home = blk_home(mask, b->image, b->heap, b->addr);

        /* j may fill the hole unless its home lies in (hole, j]. */
        if (((j - home) & mask) >= ((j - hole) & mask)) {
            a->bix[hole] = a->bix[j];
            hole = j;
        }
    }
    a->bix[hole] = 0;
    a->bix_nr--;
}

void rec_agg_blk_free(struct rec_agg *a, uint32_t k)
{
    struct rec_agg_blk *b = &a->blks[k];

    if (b->ext)
        rec_agg_ext_free(a, b->ext);
    b->ext = 0;
    b->pend = 0;
    b->site = a->free_blk;
    a->free_blk = k;
}

/* Drop the ended blocks' places, the others keep their order. */
static void pend_compact(struct rec_agg *a)
{
    uint32_t n = 0;

    for (uint32_t i = 0; i < a->nr_pend; i++) {
        uint32_t k = a->pend[i];

        if (!k)
            continue;
        a->pend[n] = k;
        a->blks[k].pend = ++n;
    }
    a->nr_pend = n;
    a->nr_pend_dead = 0;
}

int rec_agg_pend_add(struct rec_agg *a, uint32_t k)
{
    if (UTIL_ARRAY_RESERVE(a->pend, a->cap_pend, (size_t)a->nr_pend + 1, 4096))
        return -ENOMEM;
    a->pend[a->nr_pend++] = k;
    a->blks[k].pend = a->nr_pend;
    return 0;
}

void rec_agg_pend_drop(struct rec_agg *a, uint32_t k)
{
    struct rec_agg_blk *b = &a->blks[k];

    if (!b->pend)
        return;
    a->pend[b->pend - 1] = 0;
    b->pend = 0;
    if (++a->nr_pend_dead > REC_AGG_PEND_SLACK && 2 * a->nr_pend_dead > a->nr_pend)
        pend_compact(a);
}

uint32_t rec_agg_ext_new(struct rec_agg *a, const uint64_t arg[2], uint16_t flags)
{
    uint32_t k;

    if (a->free_ext) {
        k = a->free_ext;
        a->free_ext = a->exts[k - 1].next_free;
    } else {
        if (UTIL_ARRAY_RESERVE(a->exts, a->cap_exts, (size_t)a->nr_exts + 1, 64))
            return 0;
        k = ++a->nr_exts;
    }
    a->exts[k - 1] = (struct rec_agg_ext){.arg = {arg[0], arg[1]}, .flags = flags};
    return k;
}

void rec_agg_ext_free(struct rec_agg *a, uint32_t k)
{
    a->exts[k - 1].next_free = a->free_ext;
    a->free_ext = k;
}

void rec_agg_table_free(struct rec_agg *a)
{
    free(a->blks);
    free(a->bix);
    free(a->exts);
    free(a->pend);
}

void rec_agg_block_event(const struct rec_agg *a, uint32_t k, struct fmt_event *ev)
{
    const struct rec_agg_blk *b = &a->blks[k];
    const struct fmt_writer_who *who = &a->threads[b->thread].who;
    const struct rec_agg_ext *x = b->ext ? &a->exts[b->ext - 1] : NULL;

    *ev = (struct fmt_event){.ts_ns = b->ts,
                             .kind = (uint16_t)(b->kind & ~REC_AGG_ORPHAN),
                             .flags = x ? x->flags : 0,
                             .image = who->image,
                             .thread = who->thread,
                             .pid = who->pid,
                             .tid = who->tid,
                             .stack = b->stack,
                             .addr = b->addr,
                             .size = b->size,
                             .arg = {x ? x->arg[0] : 0, x ? x->arg[1] : 0}};
}

int rec_agg_live_each(const struct rec_agg *a, rec_agg_block_fn *fn, void *arg)
{
    for (uint32_t j = 0; a->bix && j <= a->bix_mask; j++) {
        uint32_t k = a->bix[j];
        int rc = k ? fn(arg, k, a->blks[k].ts, a->blks[k].image) : 0;

        if (rc)
            return rc;
    }
    /* The orphans, live for ever in the trace (rec_agg_orphan_kept). */
    for (uint32_t i = 0; i < a->nr_orphans; i++) {
        uint32_t k = a->orphans[i];
        int rc = fn(arg, k, a->blks[k].ts, a->blks[k].image);

        if (rc)
            return rc;
    }
    return 0;
}

void rec_agg_keep_fields(struct rec_agg *a)
{
    a->keep_fields = 1;
}
