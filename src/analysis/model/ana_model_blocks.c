/* SPDX-License-Identifier: MIT */
/* The heap model's live blocks (ana_model_options.keep_blocks): a map of
 * each image's, since a free ends a block of its own process (the writer
 * matches frees by address within one image: docs/format.md, "Known
 * limits"), so an image's blocks are at hand when it ends. With
 * blocks_first, an ended image's map gives way to its blocks among the
 * first blocks_first of all ended images, kept in one array of at most
 * twice as many: a listing of the first N blocks of a build's thousand
 * processes holds the running processes' blocks, not every leak of the
 * tree (leaks --all). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/model/ana_model_internal.h"
#include "util/util_array.h"

struct ana_block *ana_model_block_put(struct ana_model *m, uint32_t image, uint64_t serial)
{
    uint32_t old = m->nr_block_maps;

    if (image >= old) {
        if (UTIL_ARRAY_RESERVE_ZERO(m->block_maps, m->nr_block_maps, (size_t)image + 1, 16))
            return NULL;
        for (uint32_t i = old; i < m->nr_block_maps; i++)
            ana_map_init(&m->block_maps[i], sizeof(struct ana_block));
    }
    return ana_map_put(&m->block_maps[image], serial, NULL);
}

void ana_model_block_del(struct ana_model *m, uint32_t image, uint64_t serial)
{
    if (image < m->nr_block_maps)
        ana_map_del(&m->block_maps[image], serial);
}

static int by_serial(const void *a, const void *b)
{
    const struct ana_block *x = a, *y = b;

    return (x->serial > y->serial) - (x->serial < y->serial);
}

/* The kept array cut to its first blocks_first by serial; those after
 * them can never be among the first. */
static void kept_cut(struct ana_model *m)
{
    uint32_t n = m->opt.blocks_first;

    qsort(m->kept, m->nr_kept, sizeof(*m->kept), by_serial);
    if (m->nr_kept > n)
        m->nr_kept = n;
    if (m->nr_kept == n)
        m->kept_above = m->kept[n - 1].serial;
}

int ana_model_blocks_image_end(struct ana_model *m, uint32_t image)
{
    if (!m->opt.blocks_first || image >= m->nr_block_maps)
        return 0;
    struct ana_map *map = &m->block_maps[image];
    for (size_t i = 0; i < map->cap; i++) {
        const struct ana_block *b = ana_map_slot_val(map, i);
        if (!ana_map_slot_key(map, i) || (m->kept_above && b->serial > m->kept_above))
            continue;
        if (UTIL_ARRAY_RESERVE(m->kept, m->cap_kept, m->nr_kept + 1, 2 * m->opt.blocks_first))
            return -ENOMEM;
        m->kept[m->nr_kept++] = *b;
        if (m->nr_kept >= 2 * (size_t)m->opt.blocks_first)
            kept_cut(m);
    }
    ana_map_release(map);
    ana_map_init(map, sizeof(struct ana_block));
    return 0;
}

int ana_model_each_block_of(const struct ana_model *m, uint32_t image, ana_model_block_fn *fn,
                            void *arg)
{
    int rc = 0;

    for (size_t i = 0; i < m->nr_kept && !rc; i++)
        if (m->kept[i].image == image)
            rc = fn(arg, &m->kept[i]);
    if (image >= m->nr_block_maps)
        return rc;
    const struct ana_map *map = &m->block_maps[image];
    for (size_t i = 0; i < map->cap && !rc; i++)
        if (ana_map_slot_key(map, i))
            rc = fn(arg, ana_map_slot_val(map, i));
    return rc;
}

long ana_model_blocks(const struct ana_model *m, struct ana_block **out)
{
    size_t n = m->nr_kept;

    for (uint32_t k = 0; k < m->nr_block_maps; k++)
        n += m->block_maps[k].nr;
    struct ana_block *v = malloc((n ? n : 1) * sizeof(*v));
    if (!v)
        return -ENOMEM;
    n = m->nr_kept;
    if (n)
        memcpy(v, m->kept, n * sizeof(*v));
    for (uint32_t k = 0; k < m->nr_block_maps; k++) {
        const struct ana_map *map = &m->block_maps[k];
        for (size_t i = 0; i < map->cap; i++)
            if (ana_map_slot_key(map, i))
                v[n++] = *(const struct ana_block *)ana_map_slot_val(map, i);
    }
    if (n)
        qsort(v, n, sizeof(*v), by_serial);
    *out = v;
    return (long)n;
}

void ana_model_blocks_release(struct ana_model *m)
{
    for (uint32_t k = 0; k < m->nr_block_maps; k++)
        ana_map_release(&m->block_maps[k]);
    free(m->block_maps);
    free(m->kept);
}
