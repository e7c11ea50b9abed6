/* SPDX-License-Identifier: MIT */
/* Growing arrays, the way every layer keeps its tables: the capacity
 * doubles (from a first size) until it holds what is needed. */
#ifndef UTIL_ARRAY_H
#define UTIL_ARRAY_H

#include <errno.h>
#include <stddef.h>

/* The array p of *cap elements of size bytes, reallocated to hold at least
 * need: the new capacity is need or twice *cap (first when *cap is 0),
 * whichever is larger, but no more than max (the largest count the
 * caller's capacity type holds). With zero, the new elements are zeroed.
 * Returns the array and sets *cap, or returns NULL (p and *cap untouched)
 * when out of memory, need is above max or the size would overflow. */
void *util_array_grow(void *p, size_t size, size_t *cap, size_t need, size_t first, size_t max,
                      int zero);

/* Make array v (capacity cap, of any unsigned type) hold at least need
 * elements, growing it as util_array_grow does, the capacity never beyond
 * what cap's type holds. Returns 0 or -ENOMEM (v and cap untouched). A
 * table indexed by id whose count is its capacity (the model's images,
 * sites and threads) grows with UTIL_ARRAY_RESERVE_ZERO(v, nr, id + 1, 16). */
#define UTIL_ARRAY_RESERVE(v, cap, need, first) util_array_reserve_((v), (cap), (need), (first), 0)

/* The same, the new elements zeroed. */
#define UTIL_ARRAY_RESERVE_ZERO(v, cap, need, first)                                               \
    util_array_reserve_((v), (cap), (need), (first), 1)

#define util_array_reserve_(v, cap, need, first, zero)                                             \
    __extension__({                                                                                \
        size_t util_cap_ = (cap);                                                                  \
        int util_rc_ = 0;                                                                          \
        if ((size_t)(need) > util_cap_) {                                                          \
            __typeof__(v) util_p_ =                                                                \
                util_array_grow((v), sizeof(*(v)), &util_cap_, (need), (first),                    \
                                (size_t)(__typeof__(cap))~(__typeof__(cap))0, (zero));             \
            if (util_p_) {                                                                         \
                (v) = util_p_;                                                                     \
                (cap) = (__typeof__(cap))util_cap_;                                                \
            } else {                                                                               \
                util_rc_ = -ENOMEM;                                                                \
            }                                                                                      \
        }                                                                                          \
        util_rc_;                                                                                  \
    })

#endif
