/* SPDX-License-Identifier: MIT */
/* Live heap blocks by (image, address) (win_live.h). */
#include "win_live.h"

#include <errno.h>
#include <stdlib.h>

static size_t slot_of(const struct win_live *l, uint32_t image, uint64_t addr)
{
    uint64_t h = (addr ^ ((uint64_t)image << 48)) * 0x9e3779b97f4a7c15ull;

    return (size_t)(h >> 20) & (l->cap - 1);
}

static size_t find(const struct win_live *l, uint32_t image, uint64_t addr)
{
    size_t i = slot_of(l, image, addr);

    while (l->v[i].addr && (l->v[i].addr != addr || l->v[i].image != image))
        i = (i + 1) & (l->cap - 1);
    return i;
}

static int grow(struct win_live *l)
{
    struct win_live old = *l;

    l->cap = old.cap ? old.cap * 2 : 1024;
    l->v = calloc(l->cap, sizeof(*l->v));
    if (!l->v) {
        *l = old;
        return -ENOMEM;
    }
    for (size_t i = 0; i < old.cap; i++)
        if (old.v[i].addr)
            l->v[find(l, old.v[i].image, old.v[i].addr)] = old.v[i];
    free(old.v);
    return 0;
}

int win_live_put(struct win_live *l, uint32_t image, uint64_t addr, uint64_t val)
{
    if ((l->nr + 1) * 2 > l->cap && grow(l))
        return -ENOMEM;
    size_t i = find(l, image, addr);

    if (!l->v[i].addr)
        l->nr++;
    l->v[i] = (struct win_live_ent){addr, val, image};
    return 0;
}

void win_live_del(struct win_live *l, uint32_t image, uint64_t addr)
{
    if (!l->cap)
        return;
    size_t i = find(l, image, addr);

    if (!l->v[i].addr)
        return;
    l->nr--;
    /* Backward shift: move later entries of the run into the hole when
     * their home slot does not lie between the hole and them. */
    for (size_t j = (i + 1) & (l->cap - 1); l->v[j].addr; j = (j + 1) & (l->cap - 1)) {
        size_t home = slot_of(l, l->v[j].image, l->v[j].addr);

        if (((j - home) & (l->cap - 1)) >= ((j - i) & (l->cap - 1))) {
            l->v[i] = l->v[j];
            i = j;
        }
    }
    l->v[i].addr = 0;
}

const struct win_live_ent *win_live_get(const struct win_live *l, uint32_t image, uint64_t addr)
{
    if (!l->cap)
        return NULL;
    size_t i = find(l, image, addr);

    return l->v[i].addr ? &l->v[i] : NULL;
}

void win_live_release(struct win_live *l)
{
    free(l->v);
    l->v = NULL;
    l->cap = l->nr = 0;
}
