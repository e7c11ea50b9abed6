/* SPDX-License-Identifier: MIT */
/* The writer's live heap blocks, keyed by (image, address): how a free or
 * realloc finds the block it ends. Memory is O(live blocks). */
#ifndef FMT_WLIVE_INTERNAL_H
#define FMT_WLIVE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/* A block (heap block or mapping) as the writer remembers it. */
struct fmt_wblock {
    uint64_t addr;
    uint64_t serial; /* 0 marks an empty hash slot */
    uint64_t size;
    uint64_t ts_ns;
    uint32_t stack;
    uint32_t ctx;
    uint32_t image;
    uint32_t ord; /* its index among the blocks its context started in the chunk */
};

struct fmt_wlive {
    struct fmt_wblock *slots;
    uint64_t mask; /* capacity - 1, capacity a power of two */
    uint64_t nr;
};

int fmt_wlive_init(struct fmt_wlive *l);
void fmt_wlive_destroy(struct fmt_wlive *l);

/* The lookups run once per heap event: inline here, with the rare growth
 * out of line. */
static inline uint64_t fmt_wlive_hash(uint32_t image, uint64_t addr)
{
    uint64_t h = (addr >> 4) ^ ((uint64_t)image << 40);

    h *= 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 29);
}

/* Copy a block given by the caller. Its 4-byte fields were just stored one
 * by one (start_heap); a struct copy loads them as one 16-byte vector,
 * which cannot be forwarded from those stores and stalled (a third of
 * insert's time on a malloc/free storm). The empty asm keeps the loads
 * 4 bytes wide. */
static inline void fmt_wlive_copy_new(struct fmt_wblock *d, const struct fmt_wblock *b)
{
    uint32_t stack = b->stack, ctx = b->ctx, image = b->image, ord = b->ord;

    __asm__("" : "+r"(stack), "+r"(ctx), "+r"(image), "+r"(ord));
    d->addr = b->addr;
    d->serial = b->serial;
    d->size = b->size;
    d->ts_ns = b->ts_ns;
    d->stack = stack;
    d->ctx = ctx;
    d->image = image;
    d->ord = ord;
}

/* Grow the table, then add b (the slow end of fmt_wlive_insert). */
int fmt_wlive_insert_grow(struct fmt_wlive *l, const struct fmt_wblock *b);

/* Add b (b->serial != 0). A live block at the same address is replaced:
 * its free was missed, and the new block is what a later free ends.
 * Returns 0 or -ENOMEM. */
static inline int fmt_wlive_insert(struct fmt_wlive *l, const struct fmt_wblock *b)
{
    uint64_t i = fmt_wlive_hash(b->image, b->addr) & l->mask;

    for (; l->slots[i].serial; i = (i + 1) & l->mask) {
        if (l->slots[i].addr == b->addr && l->slots[i].image == b->image) {
            fmt_wlive_copy_new(&l->slots[i], b);
            return 0;
        }
    }
    /* Keep the load at most 1/2: probes stay short. */
    if ((l->nr + 1) * 2 > l->mask + 1)
        return fmt_wlive_insert_grow(l, b);
    fmt_wlive_copy_new(&l->slots[i], b);
    l->nr++;
    return 0;
}

/* The live block at (image, addr), or NULL; valid until the next change. */
static inline struct fmt_wblock *fmt_wlive_find(struct fmt_wlive *l, uint32_t image, uint64_t addr)
{
    for (uint64_t i = fmt_wlive_hash(image, addr) & l->mask; l->slots[i].serial;
         i = (i + 1) & l->mask)
        if (l->slots[i].addr == addr && l->slots[i].image == image)
            return &l->slots[i];
    return NULL;
}

/* Remove the block at (image, addr) into *out. Returns 1, or 0 if none. */
static inline int fmt_wlive_take(struct fmt_wlive *l, uint32_t image, uint64_t addr,
                                 struct fmt_wblock *out)
{
    uint64_t mask = l->mask;
    uint64_t i = fmt_wlive_hash(image, addr) & mask;

    for (;; i = (i + 1) & mask) {
        if (!l->slots[i].serial)
            return 0;
        if (l->slots[i].addr == addr && l->slots[i].image == image)
            break;
    }
    *out = l->slots[i];
    /* Backward shift: move later members of the probe run into the hole
     * when their home slot allows it. */
    uint64_t hole = i;
    for (uint64_t j = (i + 1) & mask; l->slots[j].serial; j = (j + 1) & mask) {
        uint64_t home = fmt_wlive_hash(l->slots[j].image, l->slots[j].addr) & mask;
        /* j may move to hole if home is not in (hole, j] cyclically. */
        if (((j - home) & mask) >= ((j - hole) & mask)) {
            l->slots[hole] = l->slots[j];
            hole = j;
        }
    }
    l->slots[hole].serial = 0;
    l->nr--;
    return 1;
}

#endif
