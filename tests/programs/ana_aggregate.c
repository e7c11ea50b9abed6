/* SPDX-License-Identifier: MIT */
/* A run recorded exactly and aggregated (tests/e2e/ana_aggregate.sh):
 * every output must give both the same numbers. Its phases are 3 ms
 * apart, so that with record --aggregate=1ms blocks live across cuts
 * (kept) and others are born and freed inside one interval (transient),
 * while with the default 1 s nearly all of them are transient. The same
 * calls on every run, in one thread at a time; with an argument R the
 * phases run R times (a trace long enough for record --max-size to switch),
 * each function's numbers but the worker's R times these:
 *
 *   function  allocations  bytes                 temporary         peak    leaked
 *   storm     1000         sum (i % 300) + 1     1000              -       -
 *   kept        20         20 x 64               1 (the last)      -       -
 *   peak        50         50 x 1000             1 (the last)      50000   -
 *   grow        31         10 + 20 + ... + 310   30 (each realloc) 310     -
 *   zero         5         0                     5                 -       -
 *   leak         3         3 x 333               -                 999     999
 *   worker     100         100 x 48              100               -       -
 *
 * The peak of the heap is peak()'s 50 blocks with the leaks before them
 * and grow's last block (the phases before freed everything else), and
 * the block pthread_create keeps. The worker thread is started first, so
 * that pthread_create's own allocations come before the phases. */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int to_worker[2], from_worker[2];

/* Keep the compiler from dropping allocations whose memory is unused. */
static void escape(void *p)
{
    __asm__ volatile("" : : "g"(p) : "memory");
}

static void pause_3ms(void)
{
    struct timespec ts = {0, 3000000};

    nanosleep(&ts, NULL);
}

static void wait_for(int fd)
{
    char c;

    if (read(fd, &c, 1) != 1)
        abort();
}

static void signal_to(int fd)
{
    if (write(fd, "x", 1) != 1)
        abort();
}

static void *worker(void *arg)
{
    (void)arg;
    wait_for(to_worker[0]);
    for (int i = 0; i < 100; i++) {
        char *q = malloc(48);
        escape(q);
        free(q);
    }
    signal_to(from_worker[1]);
    return NULL;
}

__attribute__((noinline)) static void storm(void)
{
    for (int i = 0; i < 1000; i++) {
        char *p = malloc((size_t)(i % 300) + 1);
        escape(p);
        free(p);
        if (i == 500)
            pause_3ms();
    }
}

/* Blocks that live across cuts; freed last first, so the first free is
 * of the thread's latest allocation: one temporary, kept at 1 ms. */
__attribute__((noinline)) static void kept(void)
{
    void *b[20];

    for (int i = 0; i < 20; i++) {
        b[i] = malloc(64);
        escape(b[i]);
    }
    pause_3ms();
    for (int i = 19; i >= 0; i--)
        free(b[i]);
}

__attribute__((noinline)) static void peak(void)
{
    void *b[50];

    for (int i = 0; i < 50; i++) {
        b[i] = malloc(1000);
        escape(b[i]);
    }
    for (int i = 49; i >= 0; i--)
        free(b[i]);
}

/* A block grown 30 times, across a cut halfway. */
__attribute__((noinline)) static void *grow(void)
{
    char *p = malloc(10);

    for (int i = 2; i <= 31; i++) {
        p = realloc(p, (size_t)(10 * i));
        escape(p);
        if (i == 15)
            pause_3ms();
    }
    return p;
}

__attribute__((noinline)) static void zero(void)
{
    for (int i = 0; i < 5; i++) {
        void *p = malloc(0);
        escape(p);
        free(p);
    }
}

__attribute__((noinline)) static void leak(void)
{
    for (int i = 0; i < 3; i++)
        escape(malloc(333));
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 1;
    pthread_t t;

    if (pipe(to_worker) || pipe(from_worker) || pthread_create(&t, NULL, worker, NULL))
        return 1;
    for (int r = 0; r < rounds; r++) {
        pause_3ms();
        storm();
        pause_3ms();
        kept();
        pause_3ms();
        leak();
        void *g = grow();
        pause_3ms();
        peak();
        pause_3ms();
        zero();
        free(g);
    }
    signal_to(to_worker[1]);
    wait_for(from_worker[0]);
    pthread_join(t, NULL);
    pause_3ms();
    return 0;
}
