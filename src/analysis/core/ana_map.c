/* SPDX-License-Identifier: MIT */
/* Open-addressing uint64 hash map (see ana_map.h). */
#include "analysis/core/ana_map.h"

#include <stdlib.h>
#include <string.h>

void ana_map_init(struct ana_map *m, size_t val_size)
{
    memset(m, 0, sizeof(*m));
    m->val_size = val_size;
}

void ana_map_release(struct ana_map *m)
{
    free(m->keys);
    free(m->vals);
    ana_map_init(m, m->val_size);
}

static inline size_t slot_of(uint64_t key, size_t cap)
{
    /* A full 64-bit finalizer (ana_map_mix): keys are dense serials and
     * stack ids, but also packed pairs such as (parent << 32 | label) whose
     * varied part sits in the high bits. A multiply alone keeps only the
     * low bits' influence on the low slot bits, which piled such keys into
     * long probe runs (flamegraph on 1.28M stacks: 22 s). */
    return (size_t)ana_map_mix(key) & (cap - 1);
}

void *ana_map_get(const struct ana_map *m, uint64_t key)
{
    if (!m->cap)
        return NULL;
    for (size_t i = slot_of(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
        if (m->keys[i] == key)
            return m->vals + i * m->val_size;
        if (!m->keys[i])
            return NULL;
    }
}

static int grow(struct ana_map *m)
{
    size_t cap = m->cap ? m->cap * 2 : 64;
    uint64_t *keys = calloc(cap, sizeof(*keys));
    unsigned char *vals = malloc(cap * m->val_size);

    if (!keys || !vals) {
        free(keys);
        free(vals);
        return -1;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->keys[i])
            continue;
        size_t j = slot_of(m->keys[i], cap);
        while (keys[j])
            j = (j + 1) & (cap - 1);
        keys[j] = m->keys[i];
        memcpy(vals + j * m->val_size, m->vals + i * m->val_size, m->val_size);
    }
    free(m->keys);
    free(m->vals);
    m->keys = keys;
    m->vals = vals;
    m->cap = cap;
    return 0;
}

void *ana_map_put(struct ana_map *m, uint64_t key, int *created)
{
    if (created)
        *created = 0;
    /* Keep the load under 1/2: probes stay short. */
    if ((m->nr + 1) * 2 > m->cap && grow(m))
        return NULL;
    size_t i = slot_of(key, m->cap);
    for (; m->keys[i]; i = (i + 1) & (m->cap - 1))
        if (m->keys[i] == key)
            return m->vals + i * m->val_size;
    m->keys[i] = key;
    memset(m->vals + i * m->val_size, 0, m->val_size);
    m->nr++;
    if (created)
        *created = 1;
    return m->vals + i * m->val_size;
}

int ana_map_del(struct ana_map *m, uint64_t key)
{
    if (!m->cap)
        return 0;
    size_t mask = m->cap - 1, i = slot_of(key, m->cap);
    while (m->keys[i] != key) {
        if (!m->keys[i])
            return 0;
        i = (i + 1) & mask;
    }
    /* Backward shift: move later members of the probe run into the hole
     * when their home slot allows it, so lookups need no tombstones. */
    for (size_t j = i;;) {
        j = (j + 1) & mask;
        if (!m->keys[j])
            break;
        size_t home = slot_of(m->keys[j], m->cap);
        /* Can j's entry move to i? Only if home is not in (i, j]. */
        if (((j - home) & mask) >= ((j - i) & mask)) {
            m->keys[i] = m->keys[j];
            memcpy(m->vals + i * m->val_size, m->vals + j * m->val_size, m->val_size);
            i = j;
        }
    }
    m->keys[i] = 0;
    m->nr--;
    return 1;
}
