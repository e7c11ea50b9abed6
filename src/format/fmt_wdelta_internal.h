/* SPDX-License-Identifier: MIT */
/* The writer's per-stack change of live heap bytes and blocks in the chunk
 * being built, for the chunk's summary: a list of the stacks touched in the
 * chunk and a map to it, so memory follows what one chunk touches, not
 * every stack of the trace. */
#ifndef FMT_WDELTA_INTERNAL_H
#define FMT_WDELTA_INTERNAL_H

#include <stdint.h>

struct fmt_wdelta {
    uint32_t stack;
    int64_t bytes;
    int64_t blocks;
};

struct fmt_wdslot {
    uint64_t gen; /* chunk number + 1; other values: empty */
    uint32_t stack;
    uint32_t idx;
};

struct fmt_wdeltas {
    struct fmt_wdelta *touched; /* stacks whose live heap changed in this chunk */
    uint32_t nr;
    uint32_t cap;
    struct fmt_wdslot *map; /* stack -> index in touched, for this chunk */
    uint32_t mask;
    /* The last stack fmt_wdelta_add() found: (chunk generation, stack,
     * index in touched). A loop's allocations and frees repeat one stack. */
    uint64_t last_gen;
    uint32_t last_stack;
    uint32_t last_idx;
};

/* fmt_wdelta_add() when the stack is not the last one. Returns 0 or
 * -ENOMEM. */
int fmt_wdelta_add_slow(struct fmt_wdeltas *d, uint64_t gen, uint32_t stack, int64_t bytes,
                        int64_t blocks);

/* Add to stack's live heap change in the chunk of generation gen (chunk
 * number + 1); the stack of the last call, the common case, without a
 * lookup. Returns 0 or -ENOMEM. */
static inline int fmt_wdelta_add(struct fmt_wdeltas *d, uint64_t gen, uint32_t stack, int64_t bytes,
                                 int64_t blocks)
{
    if (d->last_gen == gen && d->last_stack == stack) {
        d->touched[d->last_idx].bytes += bytes;
        d->touched[d->last_idx].blocks += blocks;
        return 0;
    }
    return fmt_wdelta_add_slow(d, gen, stack, bytes, blocks);
}

/* Sort the chunk's deltas by stack, for its summary. */
void fmt_wdelta_sort(struct fmt_wdeltas *d);

/* Forget the chunk's deltas (the map forgets them by generation). */
static inline void fmt_wdelta_clear(struct fmt_wdeltas *d)
{
    d->nr = 0;
}

void fmt_wdelta_destroy(struct fmt_wdeltas *d);

#endif
