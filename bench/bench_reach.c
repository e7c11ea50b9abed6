/* SPDX-License-Identifier: MIT */
/* A large heap for the leak scan's cost (bench/reach_cost.sh): NODES nodes
 * of 32 bytes in LISTS singly linked lists, allocated round robin so that
 * the lists interleave in memory; the first LOST lists lose their head
 * (one block definitely lost, the rest of the list indirectly lost), the
 * others hang off a global array (still reachable). Then it ends by
 * _exit, where memscribe's collector asks for its scan. Built with
 * -DBENCH_LSAN and -fsanitize=leak, it times LeakSanitizer's check of the
 * same heap itself (__lsan_do_recoverable_leak_check) before the _exit,
 * which runs no LSan check of its own.
 *
 * usage: bench_reach [NODES [LISTS [LOST]]]   (default 4000000 64 8) */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef BENCH_LSAN
void __lsan_do_recoverable_leak_check(void);
#endif

struct node {
    struct node *next;
    long payload[3];
};

#define MAX_LISTS 4096
/* Not static: the compiler must keep the stores of a global others may read. */
struct node *bench_reach_heads[MAX_LISTS];
#define heads bench_reach_heads

static unsigned long arg(int argc, char **argv, int i, unsigned long def)
{
    return argc > i ? strtoul(argv[i], NULL, 10) : def;
}

/* Clear the stack below us: a stale pointer left by the build loop would
 * make a lost list look reachable (docs/leaks.md). */
__attribute__((noinline)) static void clear_stack(void)
{
    volatile char pad[16384];

    memset((char *)pad, 0, sizeof(pad));
}

int main(int argc, char **argv)
{
    unsigned long nodes = arg(argc, argv, 1, 4000000), lists = arg(argc, argv, 2, 64);
    unsigned long lost = arg(argc, argv, 3, 8), lost_nodes = 0;
    struct node *tail[MAX_LISTS] = {0};

    if (lists < 1 || lists > MAX_LISTS || lost > lists) {
        fprintf(stderr, "bench_reach: 1 <= LISTS <= %d, LOST <= LISTS\n", MAX_LISTS);
        return 2;
    }
    for (unsigned long i = 0; i < nodes; i++) {
        struct node *n = malloc(sizeof(*n));
        unsigned long l = i % lists;

        if (!n)
            return 1;
        n->next = NULL;
        n->payload[0] = (long)i;
        if (tail[l])
            tail[l]->next = n;
        else
            heads[l] = n;
        tail[l] = n;
        if (l < lost)
            lost_nodes++;
    }
    for (unsigned long l = 0; l < lost; l++)
        heads[l] = NULL;
    explicit_bzero(tail, sizeof(tail));
    printf("bench-reach: nodes=%lu definite=%lu indirect=%lu reachable=%lu bytes=%zu\n", nodes,
           lost < nodes ? lost : nodes, lost_nodes - (lost < nodes ? lost : nodes),
           nodes - lost_nodes, nodes * sizeof(struct node));
    fflush(stdout);
    clear_stack();
#ifdef BENCH_LSAN
    struct timespec a, b;

    clock_gettime(CLOCK_MONOTONIC, &a);
    __lsan_do_recoverable_leak_check();
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("lsan-check-ns: %lld\n",
           (long long)(b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec));
    fflush(stdout);
#endif
    _exit(0);
}
