/* SPDX-License-Identifier: MIT */
/* Open-addressing hash of live heap blocks with linear probing and
 * backward-shift deletion (no tombstones, so a long malloc/free storm does
 * not degrade the table). */
#include "format/fmt_wlive_internal.h"

#include <errno.h>
#include <stdlib.h>

#define WLIVE_MIN_CAP 1024

static inline uint64_t wlive_hash(uint32_t image, uint64_t addr)
{
    uint64_t h = (addr >> 4) ^ ((uint64_t)image << 40);

    h *= 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 29);
}

int fmt_wlive_init(struct fmt_wlive *l)
{
    l->slots = calloc(WLIVE_MIN_CAP, sizeof(*l->slots));
    if (!l->slots)
        return -ENOMEM;
    l->mask = WLIVE_MIN_CAP - 1;
    l->nr = 0;
    return 0;
}

void fmt_wlive_destroy(struct fmt_wlive *l)
{
    free(l->slots);
    l->slots = NULL;
}

/* Copy a block given by the caller. Its 4-byte fields were just stored one
 * by one (start_heap); a struct copy loads them as one 16-byte vector,
 * which cannot be forwarded from those stores and stalled (a third of
 * insert's time on a malloc/free storm). The empty asm keeps the loads
 * 4 bytes wide. */
static inline void wlive_copy_new(struct fmt_wblock *d, const struct fmt_wblock *b)
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

static void wlive_put(struct fmt_wblock *slots, uint64_t mask, const struct fmt_wblock *b)
{
    uint64_t i = wlive_hash(b->image, b->addr) & mask;

    while (slots[i].serial)
        i = (i + 1) & mask;
    wlive_copy_new(&slots[i], b);
}

static int wlive_grow(struct fmt_wlive *l)
{
    uint64_t cap = (l->mask + 1) * 2;
    struct fmt_wblock *slots = calloc(cap, sizeof(*slots));

    if (!slots)
        return -ENOMEM;
    for (uint64_t i = 0; i <= l->mask; i++)
        if (l->slots[i].serial)
            wlive_put(slots, cap - 1, &l->slots[i]);
    free(l->slots);
    l->slots = slots;
    l->mask = cap - 1;
    return 0;
}

int fmt_wlive_insert(struct fmt_wlive *l, const struct fmt_wblock *b)
{
    uint64_t i = wlive_hash(b->image, b->addr) & l->mask;

    for (; l->slots[i].serial; i = (i + 1) & l->mask) {
        if (l->slots[i].addr == b->addr && l->slots[i].image == b->image) {
            wlive_copy_new(&l->slots[i], b);
            return 0;
        }
    }
    /* Keep the load at most 1/2: probes stay short. */
    if ((l->nr + 1) * 2 > l->mask + 1) {
        int rc = wlive_grow(l);
        if (rc)
            return rc;
        wlive_put(l->slots, l->mask, b);
    } else {
        wlive_copy_new(&l->slots[i], b);
    }
    l->nr++;
    return 0;
}

int fmt_wlive_take(struct fmt_wlive *l, uint32_t image, uint64_t addr, struct fmt_wblock *out)
{
    uint64_t mask = l->mask;
    uint64_t i = wlive_hash(image, addr) & mask;

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
        uint64_t home = wlive_hash(l->slots[j].image, l->slots[j].addr) & mask;
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
