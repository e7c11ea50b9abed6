/* SPDX-License-Identifier: MIT */
/* A small deterministic program for the export e2e tests: 15 temporary
 * allocations, a realloc, a clear peak (110000 bytes live at once), a
 * thread that runs alone, leaks of 222 and 333 bytes (plus what libc and
 * ld.so keep), a reserved mapping partly committed. Built -O0 -fno-inline by ms_test_program; the
 * tests compare every export with `memscribe report` on its recording. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static void *keep[4];

__attribute__((noinline)) static void *make(size_t n)
{
    return malloc(n);
}

/* n temporary allocations: each freed before the next. */
__attribute__((noinline)) static void churn(int n)
{
    for (int i = 0; i < n; i++) {
        char *p = malloc(64);
        memset(p, i, 64);
        free(p);
    }
}

__attribute__((noinline)) static void grow(void)
{
    char *p = malloc(100);
    keep[0] = realloc(p, 1000);
}

/* The peak: 100000 + 10000 bytes live together, then freed. */
__attribute__((noinline)) static void peak(void)
{
    void *a = malloc(100000);
    void *b = calloc(10, 1000);
    memset(a, 1, 100000);
    free(b);
    free(a);
}

/* Virtual memory: 3 pages reserved, one committed, all unmapped. */
__attribute__((noinline)) static void reserve(void)
{
    char *p = mmap(NULL, 3 * 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

    if (p == MAP_FAILED || mprotect(p, 4096, PROT_READ | PROT_WRITE))
        abort();
    p[0] = 1;
    munmap(p, 3 * 4096);
}

static void *worker(void *arg)
{
    (void)arg;
    churn(5);
    keep[1] = make(222);
    return NULL;
}

int main(void)
{
    pthread_t t;

    churn(10);
    grow();
    peak();
    reserve();
    if (pthread_create(&t, NULL, worker, NULL) || pthread_join(t, NULL))
        return 1;
    keep[2] = make(333);
    free(keep[0]);
    return 0;
}
