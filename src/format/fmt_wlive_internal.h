/* SPDX-License-Identifier: MIT */
/* The writer's live heap blocks, keyed by (image, address): how a free or
 * realloc finds the block it ends. Memory is O(live blocks). */
#ifndef FMT_WLIVE_INTERNAL_H
#define FMT_WLIVE_INTERNAL_H

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

/* Add b (b->serial != 0). A live block at the same address is replaced:
 * its free was missed, and the new block is what a later free ends.
 * Returns 0 or -ENOMEM. */
int fmt_wlive_insert(struct fmt_wlive *l, const struct fmt_wblock *b);

/* Remove the block at (image, addr) into *out. Returns 1, or 0 if none. */
int fmt_wlive_take(struct fmt_wlive *l, uint32_t image, uint64_t addr, struct fmt_wblock *out);

#endif
