/* SPDX-License-Identifier: MIT */
/* Reserves 1 GiB with PROT_NONE, commits two parts with mprotect,
 * decommits the first with mprotect and releases everything with munmap.
 * Prints the commit lifetimes `memscribe vmem` must show, one per line:
 * "0xLO-0xHI" in commit order. */
#include <stdio.h>
#include <sys/mman.h>

#define MIB (1ul << 20)

__attribute__((noinline)) static void commit(char *p, size_t len)
{
    mprotect(p, len, PROT_READ | PROT_WRITE);
    p[0] = 1;
}

int main(void)
{
    char *base =
        mmap(NULL, 1024 * MIB, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

    if (base == MAP_FAILED)
        return 1;
    commit(base + 1 * MIB, 2 * MIB);
    commit(base + 100 * MIB, 8 * MIB);
    mprotect(base + 1 * MIB, 2 * MIB, PROT_NONE); /* decommits the first */
    munmap(base, 1024 * MIB);                     /* decommits the second */
    printf("%p-%p\n%p-%p\n", (void *)(base + 1 * MIB), (void *)(base + 3 * MIB),
           (void *)(base + 100 * MIB), (void *)(base + 108 * MIB));
    return 0;
}
