/* SPDX-License-Identifier: MIT */
/* Binary search over arrays sorted by an address: symbol tables, line
 * tables, ranges of code and of mappings. Inline, so each caller's element
 * size and key offset become constants. */
#ifndef UTIL_SEARCH_H
#define UTIL_SEARCH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Of nr elements, size bytes apart from v and sorted by the uint64_t key
 * at offset off in each, the index of the first whose key is above x (nr
 * if none): how many keys are at most x. The last element starting at or
 * before an address is the one before it. */
static inline size_t util_search_above(const void *v, size_t nr, size_t size, size_t off,
                                       uint64_t x)
{
    const unsigned char *b = v;
    size_t lo = 0, hi = nr;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint64_t key;

        memcpy(&key, b + mid * size + off, sizeof(key));
        if (key <= x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

#endif
