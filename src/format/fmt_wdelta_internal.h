/* SPDX-License-Identifier: MIT */
/* The writer's per-stack change of live heap bytes and blocks in the chunk
 * being built, for the chunk's summary: a list of the stacks touched in the
 * chunk and a map to it, so memory follows what one chunk touches, not
 * every stack of the trace. */
#ifndef FMT_WDELTA_INTERNAL_H
#define FMT_WDELTA_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fmt_wdelta {
    uint32_t stack;
    int64_t bytes;
    int64_t blocks;
    /* Format 1.10's TOTALS (fmt_wtotals_internal.h): the blocks the stack
     * started in the chunk (not a snapshot's copies) and their bytes, and
     * its temporary allocations ended in the chunk and their bytes. */
    uint64_t allocs, alloc_bytes, temps, temp_bytes;
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

/* The map's home slot of stack. */
static inline uint32_t fmt_wdelta_home(uint32_t stack, uint32_t mask)
{
    return (uint32_t)((stack * 0x9e3779b97f4a7c15ull) >> 32) & mask;
}

/* fmt_wdelta_at() when the stack is not the last one: NULL if out of
 * memory. */
struct fmt_wdelta *fmt_wdelta_at_slow(struct fmt_wdeltas *d, uint64_t gen, uint32_t stack);

/* Stack's entry in the chunk of generation gen (chunk number + 1), made
 * (all zero) if new; the stack of the last call, the common case, without
 * a lookup. NULL if out of memory. */
static inline struct fmt_wdelta *fmt_wdelta_at(struct fmt_wdeltas *d, uint64_t gen, uint32_t stack)
{
    uint32_t idx = d->last_idx;

    if (d->last_gen != gen || d->last_stack != stack) {
        /* A stack at its home slot: the common other case, without a call
         * (sqlite3 interleaves dozens of stacks). */
        const struct fmt_wdslot *m = d->map ? &d->map[fmt_wdelta_home(stack, d->mask)] : NULL;

        if (!m || m->gen != gen || m->stack != stack)
            return fmt_wdelta_at_slow(d, gen, stack);
        idx = m->idx;
        d->last_gen = gen;
        d->last_stack = stack;
        d->last_idx = idx;
    }
    return &d->touched[idx];
}

/* Add to stack's live heap change in the chunk of generation gen. Returns
 * 0 or -ENOMEM. */
static inline int fmt_wdelta_add(struct fmt_wdeltas *d, uint64_t gen, uint32_t stack, int64_t bytes,
                                 int64_t blocks)
{
    struct fmt_wdelta *e = fmt_wdelta_at(d, gen, stack);

    if (!e)
        return -ENOMEM;
    e->bytes += bytes;
    e->blocks += blocks;
    return 0;
}

/* The writer's: a block of size bytes of stack starts (made: a call's,
 * counted among its allocations), or ends (temp: a temporary one). 0 or
 * -ENOMEM. */
static inline int fmt_wdelta_start(struct fmt_wdeltas *d, uint64_t gen, uint32_t stack,
                                   uint64_t size, bool made)
{
    struct fmt_wdelta *e = fmt_wdelta_at(d, gen, stack);

    if (__builtin_expect(!e, 0))
        return -ENOMEM;
    e->bytes += (int64_t)size;
    e->blocks++;
    e->allocs += made;
    e->alloc_bytes += size & -(uint64_t)made;
    return 0;
}

static inline int fmt_wdelta_end(struct fmt_wdeltas *d, uint64_t gen, uint32_t stack, uint64_t size,
                                 bool temp)
{
    struct fmt_wdelta *e = fmt_wdelta_at(d, gen, stack);

    if (__builtin_expect(!e, 0))
        return -ENOMEM;
    e->bytes -= (int64_t)size;
    e->blocks--;
    e->temps += temp;
    e->temp_bytes += size & -(uint64_t)temp;
    return 0;
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
