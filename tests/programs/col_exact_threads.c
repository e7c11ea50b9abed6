/* SPDX-License-Identifier: MIT */
/* The exact counters of record --sample with threads and a fork
 * (tests/e2e/record_sample_exact.sh): four threads allocate and free at
 * once (heaps updated from several threads), each freeing a quarter of its
 * blocks at once (temporary), reallocating some and leaking every tenth;
 * then a forked child allocates and leaks on its own. Each process prints
 * the usable bytes it leaves (malloc_usable_size), with write(2). */
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define THREADS 4
#define N 20000

static _Atomic uint64_t left;

static void *work(void *arg)
{
    uint64_t x = (uintptr_t)arg * 7919 + 1;
    void **kept = malloc(N * sizeof(*kept));
    unsigned n = 0;

    if (!kept)
        exit(1);
    for (unsigned i = 0; i < N; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        void *p = malloc(1 + (size_t)(x >> 40) % 3000);
        if (!p)
            exit(1);
        if (i % 4 == 0) {
            free(p); /* temporary */
            continue;
        }
        if (i % 6 == 1 && !(p = realloc(p, 5000)))
            exit(1);
        kept[n++] = p;
    }
    for (unsigned i = 0; i < n; i++) {
        if (i % 10 == 0)
            atomic_fetch_add(&left, malloc_usable_size(kept[i]));
        else
            free(kept[i]);
    }
    free(kept);
    return NULL;
}

static void say(const char *who, uint64_t v)
{
    char line[64];
    int len = snprintf(line, sizeof(line), "%s %llu\n", who, (unsigned long long)v);

    if (write(1, line, (size_t)len) != len)
        exit(1);
}

int main(void)
{
    pthread_t th[THREADS];

    for (uintptr_t i = 0; i < THREADS; i++)
        if (pthread_create(&th[i], NULL, work, (void *)i))
            return 1;
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    pid_t pid = fork();
    if (pid == 0) {
        uint64_t mine = 0;
        for (unsigned i = 0; i < 1000; i++) {
            void *p = malloc(100 + i);
            if (!p)
                _exit(1);
            if (i % 2)
                free(p);
            else
                mine += malloc_usable_size(p);
        }
        say("child_usable", mine);
        _exit(0);
    }
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
        return 1;
    say("parent_usable", atomic_load(&left));
    return 0;
}
