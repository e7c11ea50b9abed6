/* SPDX-License-Identifier: MIT */
/* Call sites of known bytes for the standard errors of record --sample
 * (tests/e2e/record_sample_se.sh): each site_N function allocates its own
 * number of blocks of its own sizes (one size, or a spread), all of them
 * before any is freed, so the heap's peak holds every block; then every
 * site frees all but every LEAK_EVERY-th block. Prints each site's truth:
 * "site_N allocations bytes leaked_bytes leaked_blocks" (its share of the
 * peak is its bytes). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define LEAK_EVERY 3
#define MAX_BLOCKS 60000

struct site {
    unsigned n;          /* blocks */
    size_t size, spread; /* sizes size .. size + spread - 1 */
};

/* From a few bytes (many blocks, each far below the rate) to blocks
 * larger than the rate (each recorded for sure). */
static const struct site sites[] = {
    {60000, 16, 0},   {30000, 48, 0},    {20000, 100, 0},    {8000, 256, 0},
    {4000, 1000, 0},  {2000, 4000, 0},   {1000, 10000, 0},   {300, 30000, 0},
    {100, 100000, 0}, {20000, 16, 2000}, {3000, 1000, 8000}, {40, 200000, 300000},
};
#define NR_SITES (sizeof(sites) / sizeof(sites[0]))

static void *blocks[NR_SITES][MAX_BLOCKS];
static size_t sizes[NR_SITES][MAX_BLOCKS];
static uint64_t rng = 42;

static size_t size_of(const struct site *s)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return s->spread ? s->size + (size_t)(rng >> 33) % s->spread : s->size;
}

/* One function per site: each is its own call site in the trace. */
#define SITE(k)                                                                                    \
    static __attribute__((noinline)) uint64_t site_##k(void)                                       \
    {                                                                                              \
        uint64_t bytes = 0;                                                                        \
        for (unsigned i = 0; i < sites[k].n; i++) {                                                \
            size_t size = size_of(&sites[k]);                                                      \
            if (!(blocks[k][i] = malloc(size)))                                                    \
                exit(1);                                                                           \
            sizes[k][i] = size;                                                                    \
            bytes += size;                                                                         \
        }                                                                                          \
        __asm__ volatile("" ::: "memory"); /* no tail call: site_k stays on the stack */           \
        return bytes;                                                                              \
    }
SITE(0)
SITE(1)
SITE(2)
SITE(3)
SITE(4)
SITE(5)
SITE(6)
SITE(7)
SITE(8)
SITE(9)
SITE(10)
SITE(11)

int main(void)
{
    static uint64_t (*const fn[NR_SITES])(void) = {site_0, site_1, site_2,  site_3,
                                                   site_4, site_5, site_6,  site_7,
                                                   site_8, site_9, site_10, site_11};
    uint64_t bytes[NR_SITES];

    for (unsigned k = 0; k < NR_SITES; k++)
        bytes[k] = fn[k]();
    for (unsigned k = 0; k < NR_SITES; k++) {
        uint64_t leaked = 0, nr_leaked = 0;
        for (unsigned i = 0; i < sites[k].n; i++) {
            if (i % LEAK_EVERY == 0) {
                leaked += sizes[k][i];
                nr_leaked++;
                continue;
            }
            free(blocks[k][i]);
        }
        printf("site_%u %u %llu %llu %llu\n", k, sites[k].n, (unsigned long long)bytes[k],
               (unsigned long long)leaked, (unsigned long long)nr_leaked);
    }
    return 0;
}
