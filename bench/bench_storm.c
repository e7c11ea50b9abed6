/* SPDX-License-Identifier: MIT */
/* Workload "storm": N malloc/free pairs of mixed small sizes, split over T threads.
 *
 * Usage: bench_storm THREADS PAIRS [POOL]
 * Without POOL each thread frees its oldest of 16 live blocks. With POOL each
 * thread keeps POOL blocks live and every free hits one picked at random, so
 * frees land all over the heap (and all over a tracer's table of live blocks).
 * Prints "bench-events: E" with E = 2 * PAIRS, the exact number of malloc and
 * free calls this program makes by construction (thread start-up and stdio add
 * a few more that the program does not count; bench_count counts those). */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_rand.h"

/* Each thread keeps its last few blocks alive, so blocks overlap in time as in
 * a real program and the allocator cannot hand back the same chunk every call. */
#define STORM_RING 16
#define STORM_MIN_SIZE 8
#define STORM_MAX_SIZE 512
#define STORM_MAX_POOL (1u << 24)

struct storm_thread {
    pthread_t tid;
    uint64_t seed;
    uint64_t nr_pairs;
    uint64_t pool; /* live blocks; 0: the ring of STORM_RING, oldest freed first */
    void **blocks; /* pool slots, or NULL for the ring */
    uint64_t nr_mallocs;
    uint64_t nr_frees;
};

static size_t storm_size(uint64_t *s)
{
    return STORM_MIN_SIZE + (size_t)(bench_rand(s) % (STORM_MAX_SIZE - STORM_MIN_SIZE + 1));
}

static void *storm_alloc(struct storm_thread *t)
{
    char *p = malloc(storm_size(&t->seed));

    if (!p) {
        fprintf(stderr, "bench_storm: malloc failed\n");
        exit(1);
    }
    /* Touch the block and hide the pointer from the optimiser: gcc may
     * otherwise drop a malloc/free pair whose block is never used. */
    p[0] = 1;
    __asm__ volatile("" : : "r"(p) : "memory");
    t->nr_mallocs++;
    return p;
}

static void storm_free(struct storm_thread *t, void *p)
{
    free(p);
    t->nr_frees++;
}

static void *storm_run(void *arg)
{
    struct storm_thread *t = arg;
    void *ring[STORM_RING];
    void **slots = t->blocks ? t->blocks : ring;
    uint64_t nr_slots = t->blocks ? t->pool : STORM_RING;
    uint64_t i, slot, nr_fill = t->nr_pairs < nr_slots ? t->nr_pairs : nr_slots;

    for (i = 0; i < nr_fill; i++)
        slots[i] = storm_alloc(t);
    /* Steady state: free the oldest block (ring) or a random one (pool), and
     * allocate a new one in its slot. */
    for (; i < t->nr_pairs; i++) {
        slot = t->blocks ? bench_rand(&t->seed) % nr_fill : i % STORM_RING;
        storm_free(t, slots[slot]);
        slots[slot] = storm_alloc(t);
    }
    for (i = 0; i < nr_fill; i++)
        storm_free(t, slots[i]);
    return NULL;
}

static uint64_t parse_count(const char *s, const char *what)
{
    char *end;
    unsigned long long v;

    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno || end == s || *end || v == 0) {
        fprintf(stderr, "bench_storm: %s: not a positive integer: '%s'\n", what, s);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    struct storm_thread *th;
    uint64_t nr_threads, nr_pairs, pool = 0, nr_mallocs = 0, nr_frees = 0, i;
    int rc;

    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: bench_storm THREADS PAIRS [POOL]\n");
        return 2;
    }
    nr_threads = parse_count(argv[1], "THREADS");
    nr_pairs = parse_count(argv[2], "PAIRS");
    if (argc == 4)
        pool = parse_count(argv[3], "POOL");
    if (pool > STORM_MAX_POOL) {
        fprintf(stderr, "bench_storm: POOL: at most %u\n", STORM_MAX_POOL);
        return 2;
    }
    if (nr_threads > 256) {
        fprintf(stderr, "bench_storm: THREADS: at most 256\n");
        return 2;
    }
    th = calloc(nr_threads, sizeof(*th));
    if (!th) {
        fprintf(stderr, "bench_storm: out of memory\n");
        return 1;
    }
    for (i = 0; i < nr_threads; i++) {
        /* The first threads take the remainder, so the pairs add up exactly. */
        th[i].nr_pairs = nr_pairs / nr_threads + (i < nr_pairs % nr_threads);
        th[i].seed = 0x9E3779B97F4A7C15ULL * (i + 1);
        th[i].pool = pool;
        /* The slot arrays are heap calls too, outside bench-events (as th). */
        if (pool) {
            th[i].blocks = calloc(pool, sizeof(void *));
            if (!th[i].blocks) {
                fprintf(stderr, "bench_storm: out of memory\n");
                return 1;
            }
        }
    }
    if (nr_threads == 1) {
        storm_run(&th[0]);
    } else {
        for (i = 0; i < nr_threads; i++) {
            rc = pthread_create(&th[i].tid, NULL, storm_run, &th[i]);
            if (rc) {
                fprintf(stderr, "bench_storm: pthread_create: %s\n", strerror(rc));
                return 1;
            }
        }
        for (i = 0; i < nr_threads; i++)
            pthread_join(th[i].tid, NULL);
    }
    for (i = 0; i < nr_threads; i++) {
        nr_mallocs += th[i].nr_mallocs;
        nr_frees += th[i].nr_frees;
        free(th[i].blocks);
    }
    free(th);
    printf("bench-mallocs: %" PRIu64 "\nbench-frees: %" PRIu64 "\nbench-events: %" PRIu64 "\n",
           nr_mallocs, nr_frees, nr_mallocs + nr_frees);
    return 0;
}
