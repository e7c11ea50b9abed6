/* SPDX-License-Identifier: MIT */
/* The same heap calls every run, for record --aggregate against an exact
 * recording (tests/e2e/rec_aggregate.sh): per call site the allocations,
 * their bytes, the temporary ones and the leaks are the same whatever the
 * threads' interleaving, and the peak is made of short-lived blocks.
 *
 *   1. three threads at once, each: temporaries (malloc then free at once;
 *      calloc too), pairs (neither temporary), fifty blocks kept across a
 *      few milliseconds, a realloc chain growing with pauses (some of its
 *      blocks outlive a cut of 1 ms, some not), aligned blocks, a realloc
 *      to 0 that frees, and (k + 1) leaks of thread k;
 *   2. the main thread alone: 3,000 blocks of 256 bytes allocated then all
 *      freed (the process's peak, beside a 10,000-byte block held across);
 *   3. a child (fork): its own temporaries, a peak of 500 blocks of 100
 *      bytes, 3 leaks, then _exit;
 *   4. the main thread frees the held block and leaks 2 blocks.
 * Pauses of about 2 ms between the steps cross the cuts of a short period.
 * No stdio: nothing but these calls allocates after the threads start.
 * usage: rec_agg [ROUNDS]: step 1 ROUNDS times (default 1), for a trace
 * that grows past record --max-size before step 2. */
#include <pthread.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NR_THREADS 3
#define NR_PEAK 3000

/* Keep the compiler from dropping allocations whose memory is unused. */
static void escape(void *p)
{
    __asm__ volatile("" : : "g"(p) : "memory");
}

static void pause_us(long us)
{
    struct timespec ts = {0, us * 1000};

    nanosleep(&ts, NULL);
}

static __attribute__((noinline)) void temporaries(int n)
{
    for (int i = 0; i < n; i++) {
        void *p = malloc(24 + (size_t)(i % 8));
        escape(p);
        free(p);
    }
    for (int i = 0; i < n / 4; i++) {
        void *p = calloc(4, 25);
        escape(p);
        free(p);
    }
}

static __attribute__((noinline)) void pairs(int n)
{
    for (int i = 0; i < n; i++) {
        void *a = malloc(40), *b = malloc(60);
        escape(a);
        escape(b);
        free(a);
        free(b);
    }
}

static __attribute__((noinline)) void **held(int n)
{
    void **v = malloc((size_t)n * sizeof(*v));

    for (int i = 0; i < n; i++)
        v[i] = malloc(128);
    return v;
}

static __attribute__((noinline)) void chain(void)
{
    char *p = realloc(NULL, 16);

    for (int i = 1; i <= 20; i++) {
        p = realloc(p, 16 + 64 * (size_t)i);
        escape(p);
        if (i % 5 == 0)
            pause_us(700);
    }
    p = realloc(p, 0); /* glibc frees p and returns NULL */
    escape(p);
}

static __attribute__((noinline)) void aligned(void)
{
    void *a = aligned_alloc(64, 256), *b = NULL;

    if (posix_memalign(&b, 128, 300))
        abort();
    escape(a);
    free(a);
    pause_us(1500);
    free(b);
}

static __attribute__((noinline)) void leak(int n)
{
    for (int i = 0; i < n; i++)
        escape(malloc(77));
}

static void *worker(void *arg)
{
    int k = (int)(long)arg;
    void **v = held(50);

    temporaries(200);
    pause_us(1200);
    pairs(100);
    chain();
    aligned();
    for (int i = 0; i < 50; i++)
        free(v[i]);
    free(v);
    leak(k + 1);
    return NULL;
}

static __attribute__((noinline)) void peak(int n, size_t size)
{
    void **v = malloc((size_t)n * sizeof(*v));

    for (int i = 0; i < n; i++)
        v[i] = malloc(size);
    for (int i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static __attribute__((noinline)) void child(void)
{
    temporaries(40);
    peak(500, 100);
    for (int i = 0; i < 3; i++)
        escape(malloc(55));
    _exit(0);
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 1;
    pthread_t t[NR_THREADS];
    void *big;
    int status;
    pid_t pid;

    for (int r = 0; r < rounds; r++) {
        for (long k = 0; k < NR_THREADS; k++)
            if (pthread_create(&t[k], NULL, worker, (void *)k))
                return 1;
        for (int k = 0; k < NR_THREADS; k++)
            pthread_join(t[k], NULL);
    }
    pause_us(2000);
    big = malloc(10000);
    escape(big);
    peak(NR_PEAK, 256);
    pause_us(2000);
    if ((pid = fork()) == 0)
        child();
    if (pid < 0 || waitpid(pid, &status, 0) != pid || status != 0)
        return 1;
    pause_us(2000);
    free(big);
    for (int i = 0; i < 2; i++)
        escape(malloc(99));
    return 0;
}
