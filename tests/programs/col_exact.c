/* SPDX-License-Identifier: MIT */
/* A deterministic program for the exact counters of record --sample
 * (tests/e2e/record_sample_exact.sh): mallocs of many sizes, a quarter freed
 * at once (temporary), callocs, reallocs that grow and shrink, aligned
 * blocks, free(NULL), and most blocks freed at the end, some leaked. It
 * follows its own heap in usable bytes (malloc_usable_size, read before
 * each free) and prints its peak and what is left, with write(2): stdio
 * would allocate a buffer of its own. */
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define N 40000

static void *kept[N];
static uint64_t heap, peak;

static void *got(void *p)
{
    if (!p)
        exit(1);
    heap += malloc_usable_size(p);
    if (heap > peak)
        peak = heap;
    return p;
}

static void drop(void *p)
{
    heap -= malloc_usable_size(p);
    free(p);
}

int main(void)
{
    uint64_t x = 7;
    unsigned n = 0;

    for (unsigned i = 0; i < N; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        size_t size = 1 + (size_t)(x >> 40) % (i % 100 == 0 ? 300000 : 2000);
        void *p = got(i % 7 == 0 ? calloc(1, size) : malloc(size));
        if (i % 4 == 0) {
            drop(p); /* freed at once: temporary */
            continue;
        }
        kept[n++] = p;
        if (i % 5 == 0) { /* grow, then shrink: in place or moved */
            size_t usable = malloc_usable_size(kept[n - 1]);
            void *q = realloc(kept[n - 1], size * 3);
            if (!q)
                return 1;
            heap -= usable;
            kept[n - 1] = got(q);
            usable = malloc_usable_size(kept[n - 1]);
            q = realloc(kept[n - 1], size / 2 + 1);
            if (!q)
                return 1;
            heap -= usable;
            kept[n - 1] = got(q);
        }
        if (i % 1000 == 1) {
            void *a = NULL;
            if (posix_memalign(&a, 256, size) != 0)
                return 1;
            kept[n++] = got(a);
            free(NULL);
        }
    }
    for (unsigned i = 0; i < n; i++)
        if (i % 10 != 0) /* every tenth kept block leaks */
            drop(kept[i]);
    char line[128];
    int len = snprintf(line, sizeof(line), "peak_usable %llu\nheap_usable %llu\n",
                       (unsigned long long)peak, (unsigned long long)heap);
    return write(1, line, (size_t)len) == len ? 0 : 1;
}
