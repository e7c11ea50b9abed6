/* SPDX-License-Identifier: MIT */
/* String interning (ana_strtab.h). */
#include "analysis/core/ana_strtab.h"
#include "util/util_array.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint32_t str_hash(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */

    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return (uint32_t)(h ^ h >> 32);
}

static int strtab_grow(struct ana_strtab *t)
{
    uint32_t cap = t->slots ? (t->mask + 1) * 2 : 1024;
    uint32_t *slots = calloc(cap, sizeof(*slots));

    if (!slots)
        return -ENOMEM;
    for (uint32_t i = 0; i < t->nr; i++) {
        uint32_t j = str_hash(t->strs[i]) & (cap - 1);
        while (slots[j])
            j = (j + 1) & (cap - 1);
        slots[j] = i + 1;
    }
    free(t->slots);
    t->slots = slots;
    t->mask = cap - 1;
    return 0;
}

int ana_strtab_intern(struct ana_strtab *t, const char *s, uint32_t *id)
{
    uint32_t i;

    if ((!t->slots || (t->nr + 1) * 2 > t->mask + 1) && strtab_grow(t))
        return -ENOMEM;
    for (i = str_hash(s) & t->mask; t->slots[i]; i = (i + 1) & t->mask) {
        if (!strcmp(t->strs[t->slots[i] - 1], s)) {
            *id = t->slots[i] - 1;
            return 0;
        }
    }
    if (UTIL_ARRAY_RESERVE(t->strs, t->cap, (size_t)t->nr + 1, 256))
        return -ENOMEM;
    if (!(t->strs[t->nr] = strdup(s)))
        return -ENOMEM;
    t->slots[i] = ++t->nr;
    *id = t->nr - 1;
    return 1;
}

void ana_strtab_release(struct ana_strtab *t)
{
    for (uint32_t i = 0; i < t->nr; i++)
        free(t->strs[i]);
    free(t->strs);
    free(t->slots);
    memset(t, 0, sizeof(*t));
}
