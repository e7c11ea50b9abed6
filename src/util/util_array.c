/* SPDX-License-Identifier: MIT */
/* Growing arrays (see util_array.h). */
#include "util/util_array.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void *util_array_grow(void *p, size_t size, size_t *cap, size_t need, size_t first, size_t max,
                      int zero)
{
    size_t n = *cap ? *cap : first;

    if (need > max)
        return NULL;
    if (*cap) {
        if (n > SIZE_MAX / 2)
            return NULL;
        n *= 2;
    }
    if (n > max)
        n = max;
    if (n < need)
        n = need;
    if (!size || n > SIZE_MAX / size)
        return NULL;
    unsigned char *v = realloc(p, n * size);
    if (!v)
        return NULL;
    if (zero)
        memset(v + *cap * size, 0, (n - *cap) * size);
    *cap = n;
    return v;
}
