/* SPDX-License-Identifier: MIT */
/* A map from (image, address) to a value: the live heap blocks of Windows
 * processes with the heap each came from (what a HeapDestroy ends), the
 * sizes of mapped views. Open addressing, linear probing, backward-shift
 * deletion. */
#ifndef WIN_LIVE_H
#define WIN_LIVE_H

#include <stddef.h>
#include <stdint.h>

struct win_live_ent {
    uint64_t addr; /* 0: empty */
    uint64_t val;  /* the heap handle, or a view's size */
    uint32_t image;
};

struct win_live {
    struct win_live_ent *v;
    size_t cap, nr; /* cap a power of two or 0 */
};

/* Returns 0 or -ENOMEM. */
int win_live_put(struct win_live *l, uint32_t image, uint64_t addr, uint64_t val);
void win_live_del(struct win_live *l, uint32_t image, uint64_t addr);
/* The entry of (image, addr), or NULL. */
const struct win_live_ent *win_live_get(const struct win_live *l, uint32_t image, uint64_t addr);
void win_live_release(struct win_live *l);

#endif
