/* SPDX-License-Identifier: MIT */
/* Open-addressing hash of live heap blocks with linear probing and
 * backward-shift deletion (no tombstones, so a long malloc/free storm does
 * not degrade the table). */
#include "format/fmt_wlive_internal.h"
#include "format/fmt_writer_internal.h"

#include <errno.h>
#include <stdlib.h>

#define WLIVE_MIN_CAP 1024

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

static void wlive_put(struct fmt_wblock *slots, uint64_t mask, const struct fmt_wblock *b)
{
    uint64_t i = fmt_wlive_hash(b->image, b->addr) & mask;

    while (slots[i].serial)
        i = (i + 1) & mask;
    fmt_wlive_copy_new(&slots[i], b);
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

int fmt_wlive_insert_grow(struct fmt_wlive *l, const struct fmt_wblock *b)
{
    int rc = wlive_grow(l);

    if (rc)
        return rc;
    wlive_put(l->slots, l->mask, b);
    l->nr++;
    return 0;
}

void fmt_writer_prefetch(const struct fmt_writer *w, uint32_t image, uint64_t addr)
{
    const struct fmt_wlive *l = &w->live;

    __builtin_prefetch(&l->slots[fmt_wlive_hash(image, addr) & l->mask]);
}
