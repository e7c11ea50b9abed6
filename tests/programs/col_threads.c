/* SPDX-License-Identifier: MIT */
/* 8 threads x 200,000 malloc/free pairs. Thread t allocates sizes
 * 1000 + 100 t + (k % 64), so a script can check the count and the order
 * of each thread's calls exactly. Usage: col_threads [threads] [per_thread] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static long per_thread = 200000;

static void *worker(void *arg)
{
    long t = (long)arg;

    for (long k = 0; k < per_thread; k++) {
        char *p = malloc((size_t)(1000 + 100 * t + (k % 64)));

        p[0] = (char)k;
        free(p);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    long nr = argc > 1 ? atol(argv[1]) : 8;
    pthread_t th[64];

    if (argc > 2)
        per_thread = atol(argv[2]);
    if (nr < 1 || nr > 64)
        return 2;
    for (long t = 0; t < nr; t++)
        if (pthread_create(&th[t], NULL, worker, (void *)t) != 0)
            return 1;
    for (long t = 0; t < nr; t++)
        pthread_join(th[t], NULL);
    return 0;
}
