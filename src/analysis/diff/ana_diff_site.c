/* SPDX-License-Identifier: MIT */
/* Call-site keys and numbers for matching two runs (ana_diff_site.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/diff/ana_diff_site.h"

long ana_diff_site_key(struct ana_stacks *st, uint32_t stack, int lines, char **buf, size_t *cap)
{
    const struct ana_frame *f;
    int n = ana_stacks_get(st, stack, &f);
    size_t len = 0;

    if (n < 0)
        return n;
    for (int i = 0; i < n; i++) {
        const char *str = ana_stacks_str(st, lines ? f[i].place : f[i].function);
        size_t l = strlen(str);

        if (len + l + 2 > *cap) {
            char *b = realloc(*buf, (len + l + 2) * 2);

            if (!b)
                return -ENOMEM;
            *buf = b;
            *cap = (len + l + 2) * 2;
        }
        if (len)
            (*buf)[len++] = '\n';
        memcpy(*buf + len, str, l);
        len += l;
    }
    if (!*cap) {
        if (!(*buf = malloc(1)))
            return -ENOMEM;
        *cap = 1;
    }
    (*buf)[len] = 0;
    return (long)len;
}

int ana_diff_site_values(const struct ana_site *site, uint64_t v[ANA_DIFF_NR_METRICS])
{
    v[ANA_DIFF_ALLOCS] = site->nr_allocs;
    v[ANA_DIFF_BYTES] = site->alloc_bytes;
    v[ANA_DIFF_PEAK] = site->peak_all_bytes;
    v[ANA_DIFF_LEAKED] = site->live_bytes > 0 ? (uint64_t)site->live_bytes : 0;
    v[ANA_DIFF_TEMPORARY] = site->nr_temporary;
    v[ANA_DIFF_LEAKED_BLOCKS] = site->live_blocks > 0 ? (uint64_t)site->live_blocks : 0;
    /* The classes are the caller's, from ana_reach.h. */
    v[ANA_DIFF_LOST] = v[ANA_DIFF_DEFINITE] = v[ANA_DIFF_LOST_BLOCKS] = v[ANA_DIFF_POSSIBLE] = 0;
    return site->nr_allocs || site->live_bytes > 0 || site->peak_all_bytes;
}
