/* SPDX-License-Identifier: MIT */
/* More threads alive at once (1100) than the collector has rings (1024):
 * each allocates 777 bytes once all of them exist. The threads beyond the
 * rings run untraced and are counted as dropped; nothing blocks. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define NR_THREADS 1100

static pthread_barrier_t all_started, all_done;

static void *run(void *arg)
{
    char *volatile p;

    (void)arg;
    pthread_barrier_wait(&all_started);
    p = malloc(777);
    free(p);
    pthread_barrier_wait(&all_done);
    return NULL;
}

int main(void)
{
    static pthread_t th[NR_THREADS];
    pthread_attr_t attr;

    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    pthread_barrier_init(&all_started, NULL, NR_THREADS);
    pthread_barrier_init(&all_done, NULL, NR_THREADS);
    for (int i = 0; i < NR_THREADS; i++)
        if (pthread_create(&th[i], &attr, run, NULL) != 0) {
            fprintf(stderr, "col_many: cannot create thread %d\n", i);
            return 1;
        }
    for (int i = 0; i < NR_THREADS; i++)
        pthread_join(th[i], NULL);
    return 0;
}
