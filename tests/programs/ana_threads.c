/* SPDX-License-Identifier: MIT */
/* Threads for the --thread filters (tests/e2e/ana_threads.sh): "leaker"
 * leaks 100 blocks of 64 bytes; "maker" allocates 7 blocks of 1000 bytes
 * that the main thread frees after joining it (blocks belong to the thread
 * that allocated them, so they stay maker's). */
#include <pthread.h>
#include <stdlib.h>

static void escape(void *p)
{
    __asm__ volatile("" : : "g"(p) : "memory");
}

static void *made[7];

__attribute__((noinline)) static void *leaker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 100; i++) {
        void *p = malloc(64);
        escape(p);
    }
    return NULL;
}

__attribute__((noinline)) static void *maker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 7; i++) {
        made[i] = malloc(1000);
        escape(made[i]);
    }
    return NULL;
}

int main(void)
{
    pthread_t a, b;

    if (pthread_create(&a, NULL, leaker, NULL) || pthread_join(a, NULL))
        return 1;
    if (pthread_create(&b, NULL, maker, NULL) || pthread_join(b, NULL))
        return 1;
    for (int i = 0; i < 7; i++)
        free(made[i]);
    return 0;
}
