/* SPDX-License-Identifier: MIT */
/* Temporary allocations with exact numbers (tests/e2e/ana_temporary.sh).
 * Strict rule (the default): a block is temporary when the thread that
 * allocated it frees it with no other allocation and no other free by
 * that thread in between. The loose rule (--temporary-threshold N) lets
 * frees, and up to N other allocations, come between.
 *
 *                          strict  loose 0  loose 1
 *   plain(): 10 x malloc+free   10       10       10
 *   map_nodes(): 5 nodes         0        5        5
 *   pair(): b then a             1        1        2
 *   across_threads(): p          1        1        1
 *   worker thread: 3 x          3        3        3
 *   total                       15       20       21
 *
 * Nothing else in the program allocates: no stdio, and the worker thread
 * is started before the sequences so that pthread_create's own
 * allocations come first. */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#define NR_PLAIN 10
#define NR_NODES 5
#define NR_WORKER 3

static int to_worker[2], from_worker[2];

/* Keep the compiler from dropping allocations whose memory is unused. */
static void escape(void *p)
{
    __asm__ volatile("" : : "g"(p) : "memory");
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
    for (int i = 0; i < NR_WORKER; i++) {
        char *q = malloc(40);
        escape(q);
        free(q); /* temporary under every rule */
    }
    signal_to(from_worker[1]);
    return NULL;
}

__attribute__((noinline)) static void plain(void)
{
    for (int i = 0; i < NR_PLAIN; i++) {
        char *p = malloc(100);
        escape(p);
        free(p);
    }
}

/* A std::map erase in miniature: a node is allocated, other blocks are
 * freed, then the node: the frees in between make it not temporary. */
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

/* b is freed right after its allocation; a has b's allocation (and free)
 * in between: temporary only when one other allocation is allowed. */
__attribute__((noinline)) static void pair(void)
{
    char *a = malloc(50);
    escape(a);
    char *b = malloc(60);
    escape(b);
    free(b);
    free(a);
}

/* Another thread's allocations and frees do not count: p stays
 * temporary while the worker allocates and frees in between. */
__attribute__((noinline)) static void across_threads(void)
{
    char *p = malloc(70);
    escape(p);
    signal_to(to_worker[1]);
    wait_for(from_worker[0]);
    free(p);
}

int main(void)
{
    pthread_t t;

    if (pipe(to_worker) || pipe(from_worker) || pthread_create(&t, NULL, worker, NULL))
        return 1;
    plain();
    map_nodes();
    pair();
    across_threads();
    return pthread_join(t, NULL) ? 1 : 0;
}
