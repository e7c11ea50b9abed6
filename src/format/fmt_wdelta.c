/* SPDX-License-Identifier: MIT */
/* The writer's per-stack heap deltas of the chunk being built: the map from
 * stack to its entry, grown as the chunk touches more stacks. */
#include "format/fmt_wdelta_internal.h"
#include "util/util_array.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int dmap_grow(struct fmt_wdeltas *d, uint64_t gen)
{
    uint32_t cap = d->map ? (d->mask + 1) * 2 : 1024;
    struct fmt_wdslot *m = calloc(cap, sizeof(*m));

    if (!m)
        return -ENOMEM;
    for (uint32_t i = 0; i < d->nr; i++) {
        uint32_t h = fmt_wdelta_home(d->touched[i].stack, cap - 1);
        while (m[h].gen == gen)
            h = (h + 1) & (cap - 1);
        m[h] = (struct fmt_wdslot){gen, d->touched[i].stack, i};
    }
    free(d->map);
    d->map = m;
    d->mask = cap - 1;
    return 0;
}

__attribute__((noinline)) struct fmt_wdelta *fmt_wdelta_at_slow(struct fmt_wdeltas *d, uint64_t gen,
                                                                uint32_t stack)
{
    if ((!d->map || (d->nr + 1) * 2 > d->mask + 1) && dmap_grow(d, gen))
        return NULL;
    uint32_t h = fmt_wdelta_home(stack, d->mask);
    for (; d->map[h].gen == gen; h = (h + 1) & d->mask) {
        if (d->map[h].stack == stack) {
            d->last_gen = gen;
            d->last_stack = stack;
            d->last_idx = d->map[h].idx;
            return &d->touched[d->last_idx];
        }
    }
    if (UTIL_ARRAY_RESERVE(d->touched, d->cap, (size_t)d->nr + 1, 256))
        return NULL;
    d->map[h] = (struct fmt_wdslot){gen, stack, d->nr};
    d->last_gen = gen;
    d->last_stack = stack;
    d->last_idx = d->nr;
    d->touched[d->nr] = (struct fmt_wdelta){.stack = stack};
    return &d->touched[d->nr++];
}

static int cmp_stack(const void *a, const void *b)
{
    uint32_t x = ((const struct fmt_wdelta *)a)->stack, y = ((const struct fmt_wdelta *)b)->stack;

    return x < y ? -1 : x > y;
}

/* A chunk of python3 touches tens of thousands of stacks, and qsort's
 * merge sort with a call per comparison took 3 % of the recorder's
 * instructions; from this many a radix sort (11 bits a pass, the passes
 * where every stack has the same digit skipped) instead. The stacks of a
 * chunk's deltas are distinct, so every sort gives the same order. */
#define RADIX_FROM 256
#define RADIX_BITS 11
#define RADIX_PASSES 3 /* 33 bits: a whole stack id */

static int radix_sort(struct fmt_wdelta *v, uint32_t n)
{
    uint32_t(*count)[1u << RADIX_BITS] = calloc(RADIX_PASSES, sizeof(*count));
    struct fmt_wdelta *tmp = malloc((size_t)n * sizeof(*tmp)), *from = v, *to = tmp;
    const uint32_t mask = (1u << RADIX_BITS) - 1;

    if (!tmp || !count) {
        free(tmp);
        free(count);
        return -ENOMEM;
    }
    for (uint32_t i = 0; i < n; i++)
        for (int k = 0; k < RADIX_PASSES; k++)
            count[k][v[i].stack >> (k * RADIX_BITS) & mask]++;
    for (int k = 0; k < RADIX_PASSES; k++) {
        uint32_t *c = count[k], sum = 0;

        if (c[from[0].stack >> (k * RADIX_BITS) & mask] == n)
            continue; /* one digit for all: the order stays */
        for (uint32_t j = 0; j <= mask; j++) {
            uint32_t x = c[j];

            c[j] = sum;
            sum += x;
        }
        for (uint32_t i = 0; i < n; i++)
            to[c[from[i].stack >> (k * RADIX_BITS) & mask]++] = from[i];
        struct fmt_wdelta *t = from;
        from = to;
        to = t;
    }
    if (from != v)
        memcpy(v, from, (size_t)n * sizeof(*v));
    free(tmp);
    free(count);
    return 0;
}

void fmt_wdelta_sort(struct fmt_wdeltas *d)
{
    d->last_gen = 0; /* the sort moves what the memo points at */
    if (d->nr && (d->nr < RADIX_FROM || radix_sort(d->touched, d->nr)))
        qsort(d->touched, d->nr, sizeof(*d->touched), cmp_stack);
}

void fmt_wdelta_destroy(struct fmt_wdeltas *d)
{
    free(d->touched);
    free(d->map);
}
