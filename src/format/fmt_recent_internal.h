/* SPDX-License-Identifier: MIT */
/* The chunk's recently freed addresses (format 1.5, feature bit
 * FREE_RANKS; docs/format-encoding.md, "Address prediction"). Where the model of
 * glibc's tcache and fastbins misses, and the freed block is not in its
 * class's ring either, glibc nearly always hands out a chunk freed a little
 * earlier as another size (merged with a neighbour, or split): 91 % of
 * those misses on the pool storm, 99 % on sqlite3. Its address is then
 * named by how many heap blocks ended in the chunk since (a few hundred at
 * most, where the difference to the prediction took 18-20 bits). Writer and
 * reader keep the same ring of the chunk's last FMT_RECENT ended addresses,
 * all contexts together; the writer also a table from address to position,
 * to find the rank without a search. */
#ifndef FMT_RECENT_INTERNAL_H
#define FMT_RECENT_INTERNAL_H

#include <stdint.h>

#define FMT_RECENT 4096             /* ended addresses remembered (a power of 2) */
#define FMT_RECENT_INDEX (1u << 14) /* the writer's table: entries (a power of 2) */

struct fmt_recent {
    uint32_t nr; /* heap blocks ended in the chunk so far */
    uint64_t ring[FMT_RECENT];
};

/* The chunk's first event: nothing ended yet. */
static inline void fmt_recent_reset(struct fmt_recent *r)
{
    r->nr = 0;
}

/* A heap block at addr ended (with a reference): the most recent entry. */
static inline void fmt_recent_push(struct fmt_recent *r, uint64_t addr)
{
    r->ring[r->nr++ & (FMT_RECENT - 1)] = addr;
}

/* The address of rank i (0: the last ended) into *addr. Returns 0 if the
 * ring has no such entry. */
static inline int fmt_recent_get(const struct fmt_recent *r, uint64_t i, uint64_t *addr)
{
    if (i >= r->nr || i >= FMT_RECENT)
        return 0;
    *addr = r->ring[(r->nr - 1 - i) & (FMT_RECENT - 1)];
    return 1;
}

/* The writer's table: per address hash, the last position an address of
 * that hash was pushed at. Only a hint, checked against the ring, so
 * collisions and entries of earlier chunks are harmless. It keeps no
 * address: the ring holds the one pushed at each position, and where the
 * position is among the last FMT_RECENT pushed in this chunk, that is the
 * address of the entry's last put (a table of addresses beside it, which
 * this replaced, cost a second cache line a free; the ranks are the same). */
struct fmt_recent_index {
    uint32_t at[FMT_RECENT_INDEX];
};

static inline uint32_t fmt_recent_hash(uint64_t addr)
{
    return (uint32_t)(((addr >> 4) * 0x9e3779b97f4a7c15ull) >> (64 - 14));
}

_Static_assert(FMT_RECENT_INDEX == 1u << 14, "fmt_recent_hash gives 14 bits");

static inline void fmt_recent_put(struct fmt_recent *r, struct fmt_recent_index *x, uint64_t addr)
{
    x->at[fmt_recent_hash(addr)] = r->nr;
    fmt_recent_push(r, addr);
}

/* The rank of addr in the ring, or -1 if the table does not know it there. */
static inline int64_t fmt_recent_rank(const struct fmt_recent *r, const struct fmt_recent_index *x,
                                      uint64_t addr)
{
    uint32_t at = x->at[fmt_recent_hash(addr)];

    if (at >= r->nr || r->nr - at > FMT_RECENT || r->ring[at & (FMT_RECENT - 1)] != addr)
        return -1;
    return (int64_t)(r->nr - 1 - at);
}

#endif
