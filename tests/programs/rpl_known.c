/* SPDX-License-Identifier: MIT */
/* Known heap sequences for memscribe replay (tests/e2e/replay_*.sh).
 *   seq      every call of the family once, a malloc(0), a free(NULL), and
 *            1000 malloc/free pairs: 2015 calls; 5 blocks of 6772 bytes live
 *   threads  4 threads allocate 2000 blocks each, then each frees the blocks
 *            of the next thread and leaks one block of 1000 * (t + 1)
 *            bytes: 16008 calls by the four, 10000 bytes in 4 blocks live
 *   fork     the parent allocates 10, 20 and 30 bytes and forks; the child
 *            frees those three (blocks it did not allocate) and mallocs
 *            and frees 40 bytes
 *   big N    N frees (8 of NULL) and mallocs, then 8 frees: 2N + 8 calls,
 *            at most 8 blocks live
 *   hold N S N mallocs of S bytes, all live at the end (S such as 2^40 under
 *            librpl_huge.so, which makes them succeed: rpl_huge_lib.c)
 * Prints nothing: stdio would allocate. */
#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NR_THREADS 4
#define PER_THREAD 2000

static void escape(void *p)
{
    __asm__ volatile("" : : "g"(p) : "memory");
}

static int seq(void)
{
    void *a = malloc(100);
    void *b = calloc(10, 30);
    void *c, *d = NULL, *e, *f, *g, *h, *z;
    void *volatile null = NULL; /* a literal free(NULL) is folded away */

    b = realloc(b, 5000);
    c = reallocarray(NULL, 20, 8);
    if (posix_memalign(&d, 64, 200))
        return 1;
    e = aligned_alloc(256, 512);
    f = memalign(32, 100);
    g = valloc(1000);
    h = pvalloc(100);
    z = malloc(0);
    free(z);
    free(null);
    for (int i = 0; i < 1000; i++) {
        void *p = malloc((size_t)(i % 200 + 1));
        escape(p);
        free(p);
    }
    free(d);
    free(f);
    free(h);
    escape(a), escape(b), escape(c), escape(e), escape(g);
    return 0;
}

static void *blocks[NR_THREADS][PER_THREAD];
static pthread_barrier_t barrier;

static void *thread_main(void *arg)
{
    int t = (int)(long)arg, next = (t + 1) % NR_THREADS;

    for (int i = 0; i < PER_THREAD; i++)
        blocks[t][i] = malloc((size_t)((t + 1) * 16 + i % 64));
    pthread_barrier_wait(&barrier);
    for (int i = 0; i < PER_THREAD; i++)
        free(blocks[next][i]);
    escape(malloc((size_t)(1000 * (t + 1))));
    return NULL;
}

static int threads(void)
{
    pthread_t pt[NR_THREADS];

    pthread_barrier_init(&barrier, NULL, NR_THREADS);
    for (long t = 0; t < NR_THREADS; t++)
        if (pthread_create(&pt[t], NULL, thread_main, (void *)t))
            return 1;
    for (int t = 0; t < NR_THREADS; t++)
        pthread_join(pt[t], NULL);
    return 0;
}

static int forked(void)
{
    void *a = malloc(10), *b = malloc(20), *c = malloc(30);
    pid_t pid = fork();

    if (pid < 0)
        return 1;
    if (pid == 0) {
        free(a);
        free(b);
        free(c);
        void *p = malloc(40);
        escape(p);
        free(p);
        _exit(0);
    }
    waitpid(pid, NULL, 0);
    escape(a), escape(b), escape(c);
    return 0;
}

static int big(long n)
{
    void *live[8] = {0};

    for (long i = 0; i < n; i++) {
        free(live[i & 7]);
        live[i & 7] = malloc((size_t)(i % 512 + 1));
    }
    for (int i = 0; i < 8; i++)
        free(live[i]);
    return 0;
}

static int hold(long n, size_t size)
{
    for (long i = 0; i < n; i++)
        escape(malloc(size));
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "seq"))
        return seq();
    if (argc >= 2 && !strcmp(argv[1], "threads"))
        return threads();
    if (argc >= 2 && !strcmp(argv[1], "fork"))
        return forked();
    if (argc >= 3 && !strcmp(argv[1], "big"))
        return big(atol(argv[2]));
    if (argc >= 4 && !strcmp(argv[1], "hold"))
        return hold(atol(argv[2]), (size_t)strtoull(argv[3], NULL, 0));
    return 2;
}
