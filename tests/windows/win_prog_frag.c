/* SPDX-License-Identifier: MIT */
/* What 32-bit Firefox did to its address space (seed 000): reservations
 * whose size is not a multiple of Windows' 64 KiB allocation granularity.
 * Each takes a whole 64 KiB slot and strands the rest of it, which no
 * other reservation can ever use. Two sites make them until the space is
 * full: small_buffer commits 4 KiB (60 KiB stranded after it) and
 * odd_table reserves 68 KiB (60 KiB stranded after its second slot). Then
 * every other small buffer is released, leaving 64 KiB holes, and a
 * 64 MiB reservation, which the free bytes could hold many times over,
 * fails: no hole is that large. The program's ledger goes to stdout, after
 * the calls (stdio allocates):
 *   site small_buffer live N size 4096 stranded S
 *   site odd_table live N size 69632 stranded S
 *   large 67108864 failed
 * where S is the bytes after each live block up to the next 64 KiB
 * boundary, summed. Built 32-bit (i686-w64-mingw32) with frame pointers:
 * Wine's i386 stack walk follows them. */
#include <stdio.h>
#include <windows.h>

#define GRANULARITY 0x10000u
#define SMALL 0x1000u
#define ODD (GRANULARITY + 0x1000u)
#define LARGE (64u << 20)
#define MAX_BLOCKS 65536

static void *small_blocks[MAX_BLOCKS], *odd_blocks[MAX_BLOCKS];
static unsigned nr_small, nr_odd;

__attribute__((noinline)) static void *small_buffer(void)
{
    return VirtualAlloc(NULL, SMALL, MEM_RESERVE | MEM_COMMIT, PAGE_READWRITE);
}

__attribute__((noinline)) static void *odd_table(void)
{
    return VirtualAlloc(NULL, ODD, MEM_RESERVE, PAGE_NOACCESS);
}

/* Bytes after a block of size bytes at p up to the next granularity
 * boundary (reservations start on one). */
static unsigned long stranded(unsigned size)
{
    return (GRANULARITY - size % GRANULARITY) % GRANULARITY;
}

int main(void)
{
    unsigned long small_stranded = 0, odd_stranded = 0, live_small = 0;
    int full = 0;

    while (!full && nr_small < MAX_BLOCKS && nr_odd < MAX_BLOCKS) {
        void *a = small_buffer(), *b = a ? odd_table() : NULL;

        if (a)
            small_blocks[nr_small++] = a;
        if (b)
            odd_blocks[nr_odd++] = b;
        full = !a || !b;
    }
    /* Release every other small buffer: 64 KiB holes, each too small. */
    for (unsigned i = 0; i < nr_small; i += 2) {
        VirtualFree(small_blocks[i], 0, MEM_RELEASE);
        small_blocks[i] = NULL;
    }
    for (unsigned i = 0; i < nr_small; i++)
        if (small_blocks[i]) {
            live_small++;
            small_stranded += stranded(SMALL);
        }
    for (unsigned i = 0; i < nr_odd; i++)
        odd_stranded += stranded(ODD);
    void *large = VirtualAlloc(NULL, LARGE, MEM_RESERVE, PAGE_NOACCESS);

    printf("site small_buffer live %lu size %u stranded %lu\n", live_small, SMALL, small_stranded);
    printf("site odd_table live %u size %u stranded %lu\n", nr_odd, ODD, odd_stranded);
    printf("large %u %s\n", LARGE, large ? "reserved" : "failed");
    fflush(stdout);
    return large ? 1 : 0;
}
