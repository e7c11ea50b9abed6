/* SPDX-License-Identifier: MIT */
/* Heap address prediction (docs/format.md, "Address prediction").
 *
 * glibc's tcache hands a thread back the chunk it freed last in the same
 * size class (a LIFO of up to 7 per class), so a model of those LIFOs
 * predicts most allocation addresses exactly; otherwise "right after the
 * last block that did not come from such a LIFO" predicts carving from the
 * top chunk. The ADDR column stores the
 * difference to the prediction, which then is mostly zero. Writer and reader
 * run this same code at the same points, per context, reset every chunk. */
#ifndef FMT_PRED_INTERNAL_H
#define FMT_PRED_INTERNAL_H

#include <stdint.h>

#define FMT_PRED_CLASSES 64 /* glibc chunk sizes 0..1023 in 16-byte classes */
#define FMT_PRED_DEPTH 7    /* glibc's tcache keeps 7 chunks per class */

/* One tcache-like LIFO of freed addresses per size class. */
struct fmt_pred {
    uint64_t gen;        /* chunk generation this state belongs to */
    uint64_t top;        /* where the next fresh chunk is expected */
    uint32_t nr_started; /* blocks and mappings this context started in the chunk */
    uint8_t nr[FMT_PRED_CLASSES];
    uint64_t bin[FMT_PRED_CLASSES][FMT_PRED_DEPTH];
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
        for (int i = 0; i < FMT_PRED_CLASSES; i++)
            p->nr[i] = 0;
        p->top = 0;
        p->nr_started = 0;
        p->gen = gen;
    }
}

static inline uint64_t fmt_pred_guess(const struct fmt_pred *p, uint64_t size)
{
    uint64_t cls = fmt_pred_csize(size) >> 4;

    if (cls < FMT_PRED_CLASSES && p->nr[cls])
        return p->bin[cls][p->nr[cls] - 1];
    return p->top;
}

/* A block of size started at addr: if the class's LIFO holds addr, it was
 * handed out from there; otherwise it was carved, and the next fresh
 * chunk is expected right after it. */
static inline void fmt_pred_start(struct fmt_pred *p, uint64_t addr, uint64_t size)
{
    uint64_t cls = fmt_pred_csize(size) >> 4;

    if (cls < FMT_PRED_CLASSES) {
        for (int i = p->nr[cls]; i-- > 0;) {
            if (p->bin[cls][i] == addr) {
                for (int j = i + 1; j < p->nr[cls]; j++)
                    p->bin[cls][j - 1] = p->bin[cls][j];
                p->nr[cls]--;
                return;
            }
        }
    }
    p->top = addr + fmt_pred_csize(size);
}

/* A block of size at addr ended (free, or the old block of a realloc). As
 * in glibc, a full LIFO takes no more (the chunk goes to other bins). */
static inline void fmt_pred_end(struct fmt_pred *p, uint64_t addr, uint64_t size)
{
    uint64_t cls = fmt_pred_csize(size) >> 4;

    if (cls >= FMT_PRED_CLASSES)
        return;
    if (p->nr[cls] < FMT_PRED_DEPTH)
        p->bin[cls][p->nr[cls]++] = addr;
}

#endif
