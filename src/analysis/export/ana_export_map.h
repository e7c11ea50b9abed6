/* SPDX-License-Identifier: MIT */
/* The exporters' tables from a non-zero 64-bit key (a serial, an
 * address, a pair of indexes) to a 32-bit value: the analysis core's hash
 * map (ana_map.h) with uint32_t values. A zeroed struct ana_map is ready. */
#ifndef ANA_EXPORT_MAP_H
#define ANA_EXPORT_MAP_H

#include <errno.h>
#include <stdint.h>

#include "analysis/core/ana_map.h"

/* 1 and *val (if val is not NULL) when key is there, else 0. */
static inline int ana_xmap_get(const struct ana_map *m, uint64_t key, uint32_t *val)
{
    const uint32_t *v = m->val_size ? (const uint32_t *)ana_map_get(m, key) : NULL;

    if (v && val)
        *val = *v;
    return v != NULL;
}

/* 0 or -ENOMEM. */
static inline int ana_xmap_put(struct ana_map *m, uint64_t key, uint32_t val)
{
    uint32_t *v;

    if (!m->val_size)
        ana_map_init(m, sizeof(uint32_t));
    if (!(v = (uint32_t *)ana_map_put(m, key, NULL)))
        return -ENOMEM;
    *v = val;
    return 0;
}

#endif
