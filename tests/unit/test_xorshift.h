/* SPDX-License-Identifier: MIT */
/* The tests' deterministic generator, so that failures reproduce:
 * Marsaglia's xorshift64 (shifts 13, 7, 17). Each caller keeps its own
 * state, seeded with a non-zero value; the next number is also the new
 * state. */
#ifndef TEST_XORSHIFT_H
#define TEST_XORSHIFT_H

#include <stdint.h>

static inline uint64_t test_xorshift64(uint64_t *state)
{
    uint64_t x = *state;

    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *state = x;
}

#endif
