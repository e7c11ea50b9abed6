/* SPDX-License-Identifier: MIT */
/* Heap in phases with pauses between them, for record --snapshot-every
 * and for the counts of record --sample (tests/e2e/record_snapshot.sh,
 * record_sample.sh). Every block is 64 KiB or more, far above the rates
 * the tests sample at, so each is sampled with probability 1 (to the
 * double's precision) and the sampled trace's counts are exact.
 *   phase 1: 16 blocks of 64 KiB (1 MiB), kept; pause
 *   phase 2: 8 blocks of 256 KiB (2 MiB), kept; the first 8 of phase 1
 *            freed (in use: 2.5 MiB); pause
 *   phase 3: 4 blocks of 128 KiB made and freed at once (temporary);
 *            the rest of phase 1 freed (in use: 2 MiB, the leak)
 * The pause is argv[1] milliseconds (default 0). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};

    while (ms > 0 && nanosleep(&ts, &ts))
        ;
}

static void *block(size_t size)
{
    void *p = malloc(size);

    if (!p)
        exit(1);
    memset(p, 1, size); /* in RSS too */
    return p;
}

int main(int argc, char **argv)
{
    long ms = argc > 1 ? strtol(argv[1], NULL, 10) : 0;
    void *small[16], *big[8];

    for (int i = 0; i < 16; i++)
        small[i] = block(64 * 1024);
    pause_ms(ms);
    for (int i = 0; i < 8; i++)
        big[i] = block(256 * 1024);
    for (int i = 0; i < 8; i++)
        free(small[i]);
    pause_ms(ms);
    for (int i = 0; i < 4; i++)
        free(block(128 * 1024));
    for (int i = 8; i < 16; i++)
        free(small[i]);
    __asm__ volatile("" ::"r"(big) : "memory"); /* the leak stays */
    return 0;
}
