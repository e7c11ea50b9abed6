/* SPDX-License-Identifier: MIT */
/* The writer's pools (format 1.4, feature bit POOLS): the live blocks of
 * the program's own pools, apart from malloc's. A pool block may lie
 * inside a block malloc handed out (its arena) and share its address, and
 * two pools may hand out the same address, so pool blocks are keyed by
 * (pool, address), where a pool is its (image, handle). */
#ifndef FMT_WPOOL_INTERNAL_H
#define FMT_WPOOL_INTERNAL_H

#include <stdint.h>

#include "format/fmt_wlive_internal.h"

struct fmt_wpool {
    struct fmt_wlive blocks; /* live pool blocks; a block's image field holds its pool id */
    struct fmt_wlive ids;    /* (image, handle) -> pool id, in the serial field */
    uint32_t nr_ids;
};

/* Pool blocks' times are multiples of time_unit_ns. 0 or -ENOMEM. */
int fmt_wpool_init(struct fmt_wpool *p, uint32_t time_unit_ns);
void fmt_wpool_destroy(struct fmt_wpool *p);

/* The id of pool handle of image (from 1), given at its first sight
 * (*created set to 1 then, else 0). Returns 0 or -ENOMEM. */
int fmt_wpool_id(struct fmt_wpool *p, uint32_t image, uint64_t handle, uint32_t *id, int *created);

/* The live blocks of pool id, oldest first (by serial), into a calloc'd
 * array *out (free it) of *nr. Returns 0 or -ENOMEM. */
int fmt_wpool_blocks(struct fmt_wpool *p, uint32_t id, struct fmt_wblock **out, uint64_t *nr);

#endif
