/* SPDX-License-Identifier: MIT */
/* Heap address prediction (docs/format.md, "Address prediction").
 *
 * glibc's tcache hands a thread back the chunk it freed last in the same
 * size class, so "the last block this thread freed in this class" predicts
 * most allocation addresses exactly; otherwise "right after the previous
 * block" predicts carving from the top chunk. The ADDR column stores the
 * difference to the prediction, which then is mostly zero. Writer and reader
 * run this same code at the same points, per context, reset every chunk. */
#ifndef FMT_PRED_INTERNAL_H
#define FMT_PRED_INTERNAL_H

#include <stdint.h>

#define FMT_PRED_SLOTS 64 /* glibc chunk sizes 0..1023 in 16-byte classes */

struct fmt_pred {
    uint64_t gen; /* chunk generation this state belongs to */
    uint64_t last_addr;
    uint64_t last_csize;
    uint64_t slot[FMT_PRED_SLOTS];
};

/* glibc's chunk size for a request: size + 8, rounded up to 16, at least
 * 32. Wraps harmlessly for absurd sizes (the result is only a guess). */
static inline uint64_t fmt_pred_csize(uint64_t size)
{
    uint64_t c = (size + 8 + 15) & ~(uint64_t)15;

    return c < 32 ? 32 : c;
}

static inline void fmt_pred_touch(struct fmt_pred *p, uint64_t gen)
{
    if (p->gen != gen) {
        for (int i = 0; i < FMT_PRED_SLOTS; i++)
            p->slot[i] = 0;
        p->last_addr = 0;
        p->last_csize = 0;
        p->gen = gen;
    }
}

static inline uint64_t fmt_pred_guess(const struct fmt_pred *p, uint64_t size)
{
    uint64_t cls = fmt_pred_csize(size) >> 4;

    if (cls < FMT_PRED_SLOTS && p->slot[cls])
        return p->slot[cls];
    return p->last_addr + p->last_csize;
}

/* A block of size started at addr. */
static inline void fmt_pred_start(struct fmt_pred *p, uint64_t addr, uint64_t size)
{
    uint64_t cls = fmt_pred_csize(size) >> 4;

    p->last_addr = addr;
    p->last_csize = fmt_pred_csize(size);
    if (cls < FMT_PRED_SLOTS && p->slot[cls] == addr)
        p->slot[cls] = 0;
}

/* A block of size at addr ended (free, or the old block of a realloc). */
static inline void fmt_pred_end(struct fmt_pred *p, uint64_t addr, uint64_t size)
{
    uint64_t cls = fmt_pred_csize(size) >> 4;

    if (cls < FMT_PRED_SLOTS)
        p->slot[cls] = addr;
}

#endif
