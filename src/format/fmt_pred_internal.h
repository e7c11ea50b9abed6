/* SPDX-License-Identifier: MIT */
/* Heap address prediction (docs/format-encoding.md, "Address prediction").
 *
 * glibc hands a thread back the chunks it freed, last in first out per size
 * class: first from the tcache (7 chunks per class), then for small chunks
 * from the fastbins (refilling the tcache from them as it goes). A model of
 * those LIFOs predicts most allocation addresses exactly; otherwise "right
 * after the last chunk carved" predicts carving from the top chunk. The
 * ADDR column stores the difference to the prediction, which then is mostly
 * zero. Writer and reader run this same code at the same points, per
 * context, reset every chunk: it is part of the format. */
#ifndef FMT_PRED_INTERNAL_H
#define FMT_PRED_INTERNAL_H

#include <stdint.h>

#include "format/fmt_rank_internal.h"

#define FMT_PRED_CLASSES 64        /* glibc chunk sizes 0..1023 in 16-byte classes */
#define FMT_PRED_TCACHE 7          /* glibc's tcache keeps 7 chunks per class */
#define FMT_PRED_FAST_CLASSES 9    /* fastbins: chunk sizes up to 128 (classes 2..8) */
#define FMT_PRED_FAST 64           /* fastbin entries remembered per class (a power of 2) */
#define FMT_PRED_SHADOW_CLASSES 32 /* freed-address candidates: chunk sizes below 512 */
#define FMT_PRED_SHADOW 64         /* freed addresses remembered per class (a power of 2) */

/* At most this many contexts (threads) have events in one chunk: the
 * writer ends a chunk early rather than exceed it, so that the state kept
 * per active context stays bounded however many threads a program runs. */
#define FMT_MAX_ACTIVE_CTX 4096
#define FMT_SLOT_BITS 12 /* a slot index below FMT_MAX_ACTIVE_CTX */

struct fmt_pred {
    uint64_t top; /* where the next fresh chunk is expected */
    /* Format 1.7 (FMT_FEAT_REALLOC_PRED): per class, the end of the last
     * block of that class carved (taken from neither LIFO): glibc carves
     * from its top chunk and from the remainder of a split one, and a
     * program that takes both (perl: strings from a remainder, arrays from
     * the top) moves the one top back and forth. Kept by every version. */
    uint64_t ctop[FMT_PRED_CLASSES];
    uint32_t nr_started; /* blocks and mappings this context started in the chunk */
    uint16_t nr[FMT_PRED_CLASSES];
    uint16_t nr_fast[FMT_PRED_FAST_CLASSES];
    /* A class's fastbin is a ring: its oldest entry at fast_head, the
     * newest nr_fast - 1 after it, so that a full one forgets its oldest
     * without moving the other 63 (python3's JSON round trip: on a quarter
     * of its events, 21 of the writer's ~460 instructions an event). */
    uint8_t fast_head[FMT_PRED_FAST_CLASSES];
    uint64_t bin[FMT_PRED_CLASSES][FMT_PRED_TCACHE];
    uint64_t fast[FMT_PRED_FAST_CLASSES][FMT_PRED_FAST];
    /* Format 1.1 (FMT_FEAT_ADDR_CANDS): per class, in a ring (the i-th
     * most recent at shadow_head - 1 - i), the freed addresses the model
     * let go: ended past a full tcache and fastbin, or dropped as stale.
     * Where the model misses, glibc mostly hands out one of these (chunks
     * it moved back into its tcache from its bins, which the model does
     * not follow). Only the model's rarer paths touch it. */
    uint8_t shadow_head[FMT_PRED_SHADOW_CLASSES];
    uint8_t nr_shadow[FMT_PRED_SHADOW_CLASSES];
    uint64_t shadow[FMT_PRED_SHADOW_CLASSES][FMT_PRED_SHADOW];
    /* Format 1.5 (FMT_FEAT_FREE_RANKS): which of the blocks this context
     * started in the chunk are live, for references by rank. Its arrays
     * outlive the chunk (fmt_rank_free when the slot goes). */
    struct fmt_rank rank;
};

/* ADDR codes of a heap block's address (format 1.1): 0 the prediction,
 * 1..FMT_PRED_SHADOW the freed address of that rank + 1 in its class's
 * ring, FMT_PRED_ADDR_ESCAPE the address itself follows in ADDR, from
 * FMT_PRED_ADDR_DIFF + 1 on FMT_PRED_ADDR_DIFF + zigzag(address -
 * prediction): 128 keeps the low 7 bits of the difference as they were
 * (what the first varint byte holds), so misses compress as in 1.0. The
 * codes between are corrupt. */
#define FMT_PRED_ADDR_ESCAPE (FMT_PRED_SHADOW + 1)
#define FMT_PRED_ADDR_DIFF 128
/* Format 1.5: the address of the heap block that ended a rank (in
 * ADDR_REC) ago in the chunk (fmt_recent_internal.h). */
#define FMT_PRED_ADDR_RECENT (FMT_PRED_SHADOW + 2)
/* Format 1.7: the class's own top (fmt_pred.ctop); and for a realloc of
 * a block (whose code 0 is its old address: in place) the prediction. */
#define FMT_PRED_ADDR_CTOP (FMT_PRED_SHADOW + 3)
#define FMT_PRED_ADDR_GUESS (FMT_PRED_SHADOW + 4)

/* glibc's chunk size for a request: size + 8, rounded up to 16, at least
 * 32. Wraps harmlessly for absurd sizes (the result is only a guess). */
static inline uint64_t fmt_pred_csize(uint64_t size)
{
    uint64_t c = (size + 8 + 15) & ~(uint64_t)15;

    return c < 32 ? 32 : c;
}

/* A context's state at its first event in a chunk. */
static inline void fmt_pred_reset(struct fmt_pred *p)
{
    for (int i = 0; i < FMT_PRED_CLASSES; i++)
        p->nr[i] = 0;
    for (int i = 0; i < FMT_PRED_FAST_CLASSES; i++)
        p->nr_fast[i] = p->fast_head[i] = 0;
    for (int i = 0; i < FMT_PRED_SHADOW_CLASSES; i++)
        p->nr_shadow[i] = p->shadow_head[i] = 0;
    p->top = 0;
    for (int i = 0; i < FMT_PRED_CLASSES; i++)
        p->ctop[i] = 0;
    p->nr_started = 0;
    fmt_rank_clear(&p->rank);
}

/* A freed address the model lets go of becomes the most recent of its
 * class's ring (a full ring forgets its oldest). */
static inline void fmt_pred_shadow_push(struct fmt_pred *p, uint64_t cls, uint64_t addr)
{
    if (cls >= FMT_PRED_SHADOW_CLASSES)
        return;
    p->shadow[cls][p->shadow_head[cls]++ & (FMT_PRED_SHADOW - 1)] = addr;
    p->nr_shadow[cls] += p->nr_shadow[cls] < FMT_PRED_SHADOW;
}

/* A LIFO of n entries dropped as stale: to the ring, oldest first. */
static inline void fmt_pred_shadow_drop(struct fmt_pred *p, uint64_t cls, const uint64_t *v,
                                        uint16_t *n)
{
    for (unsigned i = 0; i < *n; i++)
        fmt_pred_shadow_push(p, cls, v[i]);
    *n = 0;
}

/* Where the i-th oldest entry of class cls's fastbin ring is. */
static inline unsigned fmt_pred_fast_at(const struct fmt_pred *p, uint64_t cls, unsigned i)
{
    return (p->fast_head[cls] + i) & (FMT_PRED_FAST - 1);
}

/* A fastbin dropped as stale: to the shadow ring, oldest first. */
static inline void fmt_pred_fast_drop(struct fmt_pred *p, uint64_t cls)
{
    for (unsigned i = 0; i < p->nr_fast[cls]; i++)
        fmt_pred_shadow_push(p, cls, p->fast[cls][fmt_pred_fast_at(p, cls, i)]);
    p->nr_fast[cls] = 0;
    p->fast_head[cls] = 0;
}

/* Take addr out of class cls's fastbin (the newer entries move down one);
 * returns 1 if it was there. */
static inline int fmt_pred_fast_take(struct fmt_pred *p, uint64_t cls, uint64_t addr)
{
    uint64_t *v = p->fast[cls];
    unsigned n = p->nr_fast[cls];

    for (unsigned i = n; i-- > 0;) {
        if (v[fmt_pred_fast_at(p, cls, i)] == addr) {
            for (unsigned j = i + 1; j < n; j++)
                v[fmt_pred_fast_at(p, cls, j - 1)] = v[fmt_pred_fast_at(p, cls, j)];
            p->nr_fast[cls]--;
            return 1;
        }
    }
    return 0;
}

static inline uint64_t fmt_pred_guess(const struct fmt_pred *p, uint64_t size)
{
    uint64_t cls = fmt_pred_csize(size) >> 4;

    if (cls < FMT_PRED_CLASSES && p->nr[cls])
        return p->bin[cls][p->nr[cls] - 1];
    if (cls < FMT_PRED_FAST_CLASSES && p->nr_fast[cls])
        return p->fast[cls][fmt_pred_fast_at(p, cls, p->nr_fast[cls] - 1u)];
    return p->top;
}

/* Take addr out of a LIFO of n entries; returns its index or -1. */
static inline int fmt_pred_take(uint64_t *v, uint16_t *n, uint64_t addr)
{
    for (int i = *n; i-- > 0;) {
        if (v[i] == addr) {
            for (int j = i + 1; j < *n; j++)
                v[j - 1] = v[j];
            (*n)--;
            return i;
        }
    }
    return -1;
}

/* A block of size started at addr: handed out from the tcache, or from a
 * fastbin (glibc then moves the rest of that fastbin into the tcache, top
 * first, while there is room), or carved (the top moves past it). glibc
 * looks in the tcache first and in the fastbin next, so a block that did
 * not come from one means that one was empty: entries the model still
 * holds there are stale (consolidated, or handed out as another size) and
 * are dropped, which keeps the model in step. Inline even into the
 * reader's large decoders, where it was a call per allocation. */
static inline __attribute__((always_inline)) void
fmt_pred_start_bins(struct fmt_pred *p, uint64_t addr, uint64_t size, uint64_t cls)
{
    /* A large request (not in glibc's small-bin range, 1024 bytes) makes
     * malloc_consolidate() merge every fastbin chunk away. */
    if (fmt_pred_csize(size) >= 1024)
        for (uint64_t i = 0; i < FMT_PRED_FAST_CLASSES; i++)
            fmt_pred_fast_drop(p, i);
    if (cls < FMT_PRED_FAST_CLASSES) {
        if (fmt_pred_fast_take(p, cls, addr)) {
            while (p->nr[cls] < FMT_PRED_TCACHE && p->nr_fast[cls])
                p->bin[cls][p->nr[cls]++] =
                    p->fast[cls][fmt_pred_fast_at(p, cls, --p->nr_fast[cls])];
            return;
        }
        fmt_pred_fast_drop(p, cls);
    }
    p->top = addr + fmt_pred_csize(size);
    if (cls < FMT_PRED_CLASSES)
        p->ctop[cls] = p->top;
}

static inline __attribute__((always_inline)) void fmt_pred_start(struct fmt_pred *p, uint64_t addr,
                                                                 uint64_t size)
{
    uint64_t cls = fmt_pred_csize(size) >> 4;

    if (cls < FMT_PRED_CLASSES) {
        if (fmt_pred_take(p->bin[cls], &p->nr[cls], addr) >= 0)
            return;
        fmt_pred_shadow_drop(p, cls, p->bin[cls], &p->nr[cls]);
    }
    fmt_pred_start_bins(p, addr, size, cls);
}

/* Format 1.7: glibc's realloc moves a block through _int_malloc, which
 * does not look in the tcache: the prediction skips it (the fastbin's
 * top, else the top), and a block found there leaves the tcache's other
 * entries as they are (they are not stale). */
static inline uint64_t fmt_pred_guess_realloc(const struct fmt_pred *p, uint64_t size)
{
    uint64_t cls = fmt_pred_csize(size) >> 4;

    if (cls < FMT_PRED_FAST_CLASSES && p->nr_fast[cls])
        return p->fast[cls][fmt_pred_fast_at(p, cls, p->nr_fast[cls] - 1u)];
    return p->top;
}

static inline void fmt_pred_start_realloc(struct fmt_pred *p, uint64_t addr, uint64_t size)
{
    uint64_t cls = fmt_pred_csize(size) >> 4;

    if (cls < FMT_PRED_CLASSES && fmt_pred_take(p->bin[cls], &p->nr[cls], addr) >= 0)
        return;
    fmt_pred_start_bins(p, addr, size, cls);
}

/* A block of size at addr ended (free, or the old block of a realloc): to
 * the tcache while it has room, else to the fastbin for small chunks (a
 * full model fastbin forgets its oldest entry). */
static inline void fmt_pred_end(struct fmt_pred *p, uint64_t addr, uint64_t size)
{
    uint64_t cls = fmt_pred_csize(size) >> 4;

    if (cls >= FMT_PRED_CLASSES)
        return;
    if (p->nr[cls] < FMT_PRED_TCACHE) {
        p->bin[cls][p->nr[cls]++] = addr;
        return;
    }
    if (cls >= FMT_PRED_FAST_CLASSES) {
        fmt_pred_shadow_push(p, cls, addr);
        return;
    }
    if (p->nr_fast[cls] == FMT_PRED_FAST) {
        fmt_pred_shadow_push(p, cls, p->fast[cls][p->fast_head[cls]]);
        p->fast_head[cls] = (uint8_t)fmt_pred_fast_at(p, cls, 1);
        p->nr_fast[cls]--;
    }
    p->fast[cls][fmt_pred_fast_at(p, cls, p->nr_fast[cls]++)] = addr;
}

/* Format 1.7: a realloc kept its block's address. glibc grew the chunk
 * in place, or shrank it and freed the rest (if at least 32 bytes) as a
 * chunk of its own, which goes where an ended block goes. */
static inline void fmt_pred_in_place(struct fmt_pred *p, uint64_t addr, uint64_t old_size,
                                     uint64_t size)
{
    uint64_t co = fmt_pred_csize(old_size), cn = fmt_pred_csize(size);

    if (co >= cn + 32)
        fmt_pred_end(p, addr + cn, co - cn - 16); /* a request of that chunk size */
}

/* Take the entry of rank i out of class cls's ring. */
static inline void fmt_pred_shadow_remove(struct fmt_pred *p, uint64_t cls, unsigned i)
{
    uint64_t *v = p->shadow[cls];
    unsigned h = p->shadow_head[cls], m = FMT_PRED_SHADOW - 1;

    for (unsigned j = i; j > 0; j--)
        v[(h - 1 - j) & m] = v[(h - j) & m];
    p->shadow_head[cls]--;
    p->nr_shadow[cls]--;
}

/* The rank of addr among the freed addresses of its class (0: the most
 * recent), which is then taken out of the ring; -1 if it is not there. */
static inline int fmt_pred_shadow_take(struct fmt_pred *p, uint64_t addr, uint64_t size)
{
    uint64_t cls = fmt_pred_csize(size) >> 4;

    if (cls >= FMT_PRED_SHADOW_CLASSES)
        return -1;
    const uint64_t *v = p->shadow[cls];
    unsigned h = p->shadow_head[cls], n = p->nr_shadow[cls];
    for (unsigned i = 0; i < n; i++) {
        if (v[(h - 1 - i) & (FMT_PRED_SHADOW - 1)] == addr) {
            fmt_pred_shadow_remove(p, cls, i);
            return (int)i;
        }
    }
    return -1;
}

/* The freed address of rank i in size's class into *addr, taken out of
 * the ring. Returns 0 if there is no such entry. */
static inline int fmt_pred_shadow_get(struct fmt_pred *p, uint64_t size, unsigned i, uint64_t *addr)
{
    uint64_t cls = fmt_pred_csize(size) >> 4;

    if (cls >= FMT_PRED_SHADOW_CLASSES || i >= p->nr_shadow[cls])
        return 0;
    *addr = p->shadow[cls][(p->shadow_head[cls] - 1 - i) & (FMT_PRED_SHADOW - 1)];
    fmt_pred_shadow_remove(p, cls, i);
    return 1;
}

#endif
