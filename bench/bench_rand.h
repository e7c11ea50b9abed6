/* SPDX-License-Identifier: MIT */
/* The workloads' generator: xorshift64* from a fixed seed, so that every
 * run asks for the same sizes and takes the same paths. Each caller keeps
 * its own non-zero state. */
#ifndef BENCH_RAND_H
#define BENCH_RAND_H

#include <stdint.h>

static inline uint64_t bench_rand(uint64_t *s)
{
    uint64_t x = *s;

    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 2685821657736338717ULL;
}

#endif
