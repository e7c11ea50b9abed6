/* SPDX-License-Identifier: MIT */
/* A deterministic program for comparing memscribe with heaptrack
 * (tests/e2e/ana_heaptrack.sh): temporary allocations, a realloc chain,
 * every aligned allocator, a peak made by one big block, and leaks. Its
 * numbers are exact, and so are the differences the test expects:
 * heaptrack does not hook memalign, pvalloc or reallocarray (glibc's
 * reallocarray calls its realloc internally, past the PLT). */
#include <malloc.h>
#include <stdlib.h>

/* Keep the compiler from dropping allocations whose memory is unused. */
static void escape(void *p)
{
    __asm__ volatile("" : : "g"(p) : "memory");
}

#define NR_TEMPORARY 1000

__attribute__((noinline)) static void temporaries(void)
{
    for (int i = 0; i < NR_TEMPORARY; i++) {
        char *p = malloc(100);
        escape(p);
        free(p); /* temporary: nothing allocated in between */
    }
}

#define NR_NODES 5

/* A std::map erase in miniature: each node is freed right after another
 * block, so neither is temporary for heaptrack (its "last allocation" is
 * forgotten at every free), nor for memscribe's strict rule. */
__attribute__((noinline)) static void map_nodes(void)
{
    void *old[NR_NODES];

    for (int i = 0; i < NR_NODES; i++) {
        old[i] = malloc(32);
        escape(old[i]);
    }
    for (int i = 0; i < NR_NODES; i++) {
        char *node = malloc(96);
        escape(node);
        free(old[i]);
        free(node);
    }
}

__attribute__((noinline)) static void *realloc_chain(void)
{
    char *p = malloc(10);
    escape(p);
    p = realloc(p, 20); /* ends the 10: temporary */
    escape(p);
    p = realloc(p, 30); /* ends the 20: temporary */
    escape(p);
    return p; /* the 30 is freed later, after other allocations */
}

__attribute__((noinline)) static void *aligned_ones(void **later)
{
    void *q = NULL;
    if (posix_memalign(&q, 64, 512)) /* seen by both */
        abort();
    escape(q);
    *later = q;
    void *a = aligned_alloc(64, 128); /* seen by both; leaked */
    escape(a);
    void *m = memalign(64, 256); /* memscribe only; leaked */
    escape(m);
    void *pv = pvalloc(100); /* memscribe only; leaked */
    escape(pv);
    void *ra = reallocarray(NULL, 10, 8); /* memscribe only; leaked */
    escape(ra);
    void *v = valloc(4096); /* seen by both; freed below */
    escape(v);
    return v;
}

__attribute__((noinline)) static void peak(void)
{
    char *big = malloc(1000000); /* the peak: everything leaked so far + 1 MB */
    escape(big);
    free(big); /* temporary too */
}

int main(void)
{
    void *later;

    temporaries();
    map_nodes();
    void *chain = realloc_chain();
    void *v = aligned_ones(&later);
    void *kept = calloc(10, 10); /* leaked */
    escape(kept);
    free(v);
    free(later);
    free(chain);
    peak();
    return 0;
}
