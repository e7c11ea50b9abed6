/* SPDX-License-Identifier: MIT */
/* Fragments a 32-bit address space until a large allocation fails: maps
 * chunks of 1 MiB + 4 KiB (not a multiple of 64 KiB) until the space is
 * full, unmaps every other one, then asks malloc for 64 MiB, which no hole
 * can hold. Prints "chunks N" and "large allocation failed". Built -m32. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#define CHUNK ((1u << 20) + 4096u)
#define MAX_CHUNKS 8192

static void *chunks[MAX_CHUNKS];

__attribute__((noinline)) static int fill_address_space(void)
{
    int n = 0;

    while (n < MAX_CHUNKS) {
        void *p = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

        if (p == MAP_FAILED)
            break;
        chunks[n++] = p;
    }
    return n;
}

__attribute__((noinline)) static void punch_holes(int n)
{
    for (int i = 0; i < n; i += 2)
        munmap(chunks[i], CHUNK);
}

int main(void)
{
    int n = fill_address_space();
    void *big;

    printf("chunks %d\n", n);
    punch_holes(n);
    big = malloc(64u << 20);
    printf(big ? "large allocation succeeded\n" : "large allocation failed\n");
    free(big);
    return 0;
}
