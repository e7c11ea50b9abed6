/* SPDX-License-Identifier: MIT */
/* Workload "deep": allocations from deep recursion along many distinct call stacks.
 *
 * Usage: bench_deep WALKS DEPTH
 * Each walk recurses DEPTH levels; every level mallocs a block, calls one of
 * DEEP_NR_FNS functions picked by a fixed-seed PRNG, then frees the block. The
 * sequence of functions (hence of return addresses) differs from walk to walk,
 * so nearly every allocation has a call stack never seen before: this is what
 * makes a tracer's stack table grow. Prints "bench-events: E", E = 2 * WALKS *
 * DEPTH, the exact number of malloc and free calls made by construction. */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_rand.h"

#define DEEP_NR_FNS 8
#define DEEP_MAX_DEPTH 100000

struct deep_walk {
    uint64_t seed;
    unsigned depth;
    uint64_t nr_mallocs;
    uint64_t nr_frees;
};

typedef void deep_fn(struct deep_walk *w, unsigned level);
static deep_fn *const deep_fns[DEEP_NR_FNS];

/* One level of the recursion. Each of the DEEP_NR_FNS copies asks for a
 * different size, so the compiler cannot fold them into one function (the
 * copies must keep distinct return addresses). The free after the call keeps
 * it from being a tail call, which would drop the frame from the stack. */
#define DEEP_LEVEL(k)                                                                              \
    static void deep_level_##k(struct deep_walk *w, unsigned level)                                \
    {                                                                                              \
        uint64_t r;                                                                                \
        char *p;                                                                                   \
                                                                                                   \
        if (level == w->depth)                                                                     \
            return;                                                                                \
        r = bench_rand(&w->seed);                                                                  \
        p = malloc(16 + 8 * (k) + (size_t)(r >> 58));                                              \
        if (!p) {                                                                                  \
            fprintf(stderr, "bench_deep: malloc failed\n");                                        \
            exit(1);                                                                               \
        }                                                                                          \
        p[0] = (char)level;                                                                        \
        __asm__ volatile("" : : "r"(p) : "memory");                                                \
        w->nr_mallocs++;                                                                           \
        deep_fns[r % DEEP_NR_FNS](w, level + 1);                                                   \
        free(p);                                                                                   \
        w->nr_frees++;                                                                             \
    }

DEEP_LEVEL(0)
DEEP_LEVEL(1)
DEEP_LEVEL(2)
DEEP_LEVEL(3)
DEEP_LEVEL(4)
DEEP_LEVEL(5)
DEEP_LEVEL(6)
DEEP_LEVEL(7)

static deep_fn *const deep_fns[DEEP_NR_FNS] = {
    deep_level_0, deep_level_1, deep_level_2, deep_level_3,
    deep_level_4, deep_level_5, deep_level_6, deep_level_7,
};

static uint64_t parse_count(const char *s, const char *what, uint64_t max)
{
    char *end;
    unsigned long long v;

    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno || end == s || *end || v == 0 || v > max) {
        fprintf(stderr, "bench_deep: %s: not an integer in 1..%" PRIu64 ": '%s'\n", what, max, s);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    struct deep_walk w = {.seed = 0x2545F4914F6CDD1DULL};
    uint64_t nr_walks, i;

    if (argc != 3) {
        fprintf(stderr, "usage: bench_deep WALKS DEPTH\n");
        return 2;
    }
    nr_walks = parse_count(argv[1], "WALKS", UINT64_MAX);
    w.depth = (unsigned)parse_count(argv[2], "DEPTH", DEEP_MAX_DEPTH);
    for (i = 0; i < nr_walks; i++)
        deep_fns[bench_rand(&w.seed) % DEEP_NR_FNS](&w, 0);
    printf("bench-mallocs: %" PRIu64 "\nbench-frees: %" PRIu64 "\nbench-events: %" PRIu64 "\n",
           w.nr_mallocs, w.nr_frees, w.nr_mallocs + w.nr_frees);
    return 0;
}
