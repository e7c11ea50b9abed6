/* SPDX-License-Identifier: MIT */
/* Many allocations of known sizes for record --sample
 * (tests/e2e/record_sample.sh): 200,000 blocks of 16 to 4,111 bytes from a
 * fixed sequence, every tenth kept (a leak), the others freed; then
 * reallocs of kept blocks. Prints the bytes main allocated and leaked. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define NR_BLOCKS 200000

int main(void)
{
    static void *keep[NR_BLOCKS / 10];
    static size_t keep_size[NR_BLOCKS / 10];
    uint64_t x = 12345, allocated = 0, leaked = 0;
    unsigned nr_keep = 0;

    for (unsigned i = 0; i < NR_BLOCKS; i++) {
        size_t size;
        void *p;

        x = x * 6364136223846793005ull + 1442695040888963407ull;
        size = 16 + (size_t)(x >> 33) % 4096;
        p = malloc(size);
        if (!p)
            return 1;
        allocated += size;
        if (i % 10 == 0) {
            keep_size[nr_keep] = size;
            keep[nr_keep++] = p;
        } else {
            free(p);
        }
    }
    /* Resize the first hundred kept blocks: each realloc allocates its
     * new size and ends the old block. */
    for (unsigned i = 0; i < 100; i++) {
        size_t size;
        void *p;

        x = x * 6364136223846793005ull + 1442695040888963407ull;
        size = 16 + (size_t)(x >> 33) % 4096;
        p = realloc(keep[i], size);
        if (!p)
            return 1;
        keep[i] = p;
        keep_size[i] = size;
        allocated += size;
    }
    for (unsigned i = 0; i < nr_keep; i++)
        leaked += keep_size[i];
    printf("allocated %llu leaked %llu in %u blocks\n", (unsigned long long)allocated,
           (unsigned long long)leaked, nr_keep);
    return 0;
}
