/* SPDX-License-Identifier: MIT */
/* Heap blocks of every reachability class memcheck tells apart, each of a
 * size no other block here has, so that a test matches memscribe's class of
 * a block with valgrind's by its size (tests/e2e/rec_reach.sh). Prints the
 * expected class of each size: "EXPECT SIZE CLASS".
 *
 *   cache (global) --> 1001 (reachable) --> 1002 (reachable)
 *   lost list:         1003 (definite)  --> 1004 (indirect) --> 1005 (indirect)
 *   mid (global) --interior--> 1006 (possible) --> 1007 (possible)
 *   a thread's stack ------> 1008 (reachable)
 *   length64: ptr to +8, first word size - 8: 1010 (reachable, heuristic)
 *   stdstring: ptr to 3 words in, capacity size - 3 words - 1: 1011 (reachable, heuristic)
 *   freed:             1012 (not live)
 *
 * Sizes of lost blocks leave glibc's next chunk header outside the block
 * (size mod 16 in 1..8), so that malloc's own bins never point into them.
 * Built -O0: pointers live in the stack slots the source names.
 *
 * rec_reach DIR [exit|change] waits for record -p first
 * (tests/e2e/rec_reach_attach.sh): DIR/ready.0 made, DIR/go.1 awaited, the
 * blocks made, DIR/done.1 made; then with "exit" it exits at once (the scan
 * at exit while attached), else it waits for DIR/go.2 (a scan at the
 * detach, or on request, before it); with "change" it then frees 1002 and
 * loses a new 1013 before it exits (tests/e2e/rec_reach_request.sh). */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static void **cache;
static char *mid;
static char *len64;
static char *str;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready = PTHREAD_COND_INITIALIZER;
static int started;

static void *block(size_t size)
{
    void *p = malloc(size);

    memset(p, 0x11, size); /* no stale pointer, no heuristic by chance */
    return p;
}

static __attribute__((noinline)) void make_reachable(void)
{
    cache = block(1001);
    cache[0] = block(1002);
    printf("EXPECT 1001 reachable\nEXPECT 1002 reachable\n");
}

static __attribute__((noinline)) void make_lost(void)
{
    void **head = block(1003);

    head[0] = block(1004);
    ((void **)head[0])[0] = block(1005);
    head = NULL;
    printf("EXPECT 1003 definite\nEXPECT 1004 indirect\nEXPECT 1005 indirect\n");
}

static __attribute__((noinline)) void make_possible(void)
{
    char *p = block(1006);

    ((void **)p)[0] = block(1007);
    mid = p + 100;
    printf("EXPECT 1006 possible\nEXPECT 1007 possible\n");
}

static __attribute__((noinline)) void make_heuristic(void)
{
    uint64_t *q = block(1010);

    q[0] = 1010 - 8; /* length64: the length of the rest */
    len64 = (char *)q + 8;
    /* stdstring's words are size_t (4 bytes in a 32-bit build). */
    size_t *w = block(1011);
    w[0] = 5;                             /* length */
    w[1] = 1011 - 3 * sizeof(size_t) - 1; /* capacity */
    w[2] = 0;                             /* refcount */
    str = (char *)w + 3 * sizeof(size_t);
    printf("EXPECT 1010 reachable\nEXPECT 1011 reachable\n");
}

static __attribute__((noinline)) void change(void)
{
    void **lost = block(1013);

    free(cache[0]);
    cache[0] = NULL;
    lost[0] = NULL;
    lost = NULL;
    printf("CHANGED 1002 freed, 1013 definite\n");
}

/* Holds its block in a stack slot only, then sleeps until the exit. */
static void *holder(void *arg)
{
    void *volatile mine = block(1008);

    (void)arg;
    pthread_mutex_lock(&lock);
    started = 1;
    pthread_cond_signal(&ready);
    pthread_mutex_unlock(&lock);
    for (;;)
        pause();
    return mine;
}

/* Clear the stack below main's frame: dead frames of the calls above
 * hold the lost blocks' addresses, and exit's handlers run over them
 * (memcheck never reads a stack slot not written since; we cannot tell). */
static __attribute__((noinline)) void scrub(void)
{
    volatile char pad[64 * 1024];

    memset((char *)pad, 0, sizeof(pad));
}

static void touch(const char *dir, const char *name)
{
    char path[4096];

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    close(open(path, O_CREAT | O_WRONLY, 0600));
}

static __attribute__((noinline)) void await(const char *dir, const char *name)
{
    char path[4096];

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    while (access(path, F_OK) != 0)
        usleep(10000);
}

int main(int argc, char **argv)
{
    pthread_t t;

    if (argc > 1) {
        touch(argv[1], "ready.0");
        await(argv[1], "go.1");
    }
    make_reachable();
    make_lost();
    make_possible();
    make_heuristic();
    free(block(1012));
    pthread_create(&t, NULL, holder, NULL);
    pthread_mutex_lock(&lock);
    while (!started)
        pthread_cond_wait(&ready, &lock);
    pthread_mutex_unlock(&lock);
    printf("EXPECT 1008 reachable\n");
    fflush(stdout);
    scrub();
    if (argc > 1) {
        touch(argv[1], "done.1");
        if (argc < 3 || strcmp(argv[2], "exit"))
            await(argv[1], "go.2");
        if (argc > 2 && !strcmp(argv[2], "change")) {
            change();
            fflush(stdout);
            scrub();
        }
    }
    /* REC_REACH_END=exit_group: end by the raw system call through
     * syscall(), as some programs do, past exit() and _exit(). */
    const char *end = getenv("REC_REACH_END");
    if (end && !strcmp(end, "exit_group"))
        syscall(SYS_exit_group, 0);
    exit(0);
}
