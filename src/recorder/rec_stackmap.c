/* SPDX-License-Identifier: MIT */
/* An image's process-local stack ids -> trace stack ids. Hashed, not an
 * array indexed by the id: the id comes from the program's memory, so a
 * scribbled id of 2^30 must not make the recorder allocate 4 GiB. The
 * table holds what STACK records defined and nothing more: at most 32
 * bytes per distinct id, each of which took a 16-byte record or more. */
#include <errno.h>
#include <stdlib.h>

#include "recorder/rec_internal.h"

static int rec_stackmap_grow(struct rec_stackmap *m)
{
    uint32_t cap = m->cap ? 2 * m->cap : 1024;
    struct rec_stackmap bigger = {.cap = cap, .slots = calloc(cap, sizeof(uint64_t))};

    if (!bigger.slots)
        return -ENOMEM;
    for (uint32_t i = 0; i < m->cap; i++) {
        uint64_t e = m->slots[i];
        uint32_t j;

        if (!e)
            continue;
        for (j = rec_stackmap_slot(&bigger, (uint32_t)(e >> 32)); bigger.slots[j];
             j = (j + 1) & (cap - 1))
            ;
        bigger.slots[j] = e;
    }
    bigger.nr_entries = m->nr_entries;
    free(m->slots);
    *m = bigger;
    return 0;
}

int rec_stackmap_put(struct rec_stackmap *m, uint32_t local, uint32_t gid)
{
    uint32_t j;

    if (local == 0)
        return -EINVAL;
    if (2 * (m->nr_entries + 1) > m->cap && rec_stackmap_grow(m) != 0)
        return -ENOMEM;
    for (j = rec_stackmap_slot(m, local); m->slots[j]; j = (j + 1) & (m->cap - 1))
        if ((uint32_t)(m->slots[j] >> 32) == local) {
            m->slots[j] = (uint64_t)local << 32 | gid;
            return 0;
        }
    m->slots[j] = (uint64_t)local << 32 | gid;
    m->nr_entries++;
    return 0;
}

void rec_stackmap_free(struct rec_stackmap *m)
{
    free(m->slots);
    *m = (struct rec_stackmap){0};
}
