/* SPDX-License-Identifier: MIT */
/* The analysis tests' pseudo-random numbers for synthetic traces: Knuth's
 * MMIX linear congruential generator, its high bits. Each test sets
 * rnd_state, so its trace is the same on every run. */
#ifndef TEST_ANA_RND_H
#define TEST_ANA_RND_H

#include <stdint.h>

static uint64_t rnd_state;

static inline uint64_t rnd(void)
{
    rnd_state = rnd_state * 6364136223846793005ull + 1442695040888963407ull;
    return rnd_state >> 33;
}

#endif
