/* SPDX-License-Identifier: MIT */
/* Blocks a part of the trace did not see allocated (tests/e2e/ana_notes.sh).
 *
 * ana_unseen fork: the parent allocates three blocks of 111 bytes, forks,
 * and the child frees two of them and reallocs the third: the child's
 * image has 3 unmatched frees, all inherited at fork.
 *
 * ana_unseen window: make() allocates 4000 bytes and keep() 3000, then
 * after a pause shrink() reallocs the first to 1000 bytes and drop() frees
 * the second: a window from the pause on has make's block AOFI ended by a
 * realloc (count 1, size 0, impacting size -4000), keep's AOFI freed
 * (-3000) and shrink's new block AIFO (+1000).
 *
 * Prints the events it expects: "EXPECT ...". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void escape(void *p)
{
    __asm__ volatile("" : : "g"(p) : "memory");
}

__attribute__((noinline)) static void *make(size_t n)
{
    void *p = malloc(n);
    escape(p);
    return p;
}

__attribute__((noinline)) static void *keep(size_t n)
{
    void *p = malloc(n);
    escape(p);
    return p;
}

__attribute__((noinline)) static void *shrink(void *p, size_t n)
{
    void *q = realloc(p, n);
    escape(q);
    return q;
}

__attribute__((noinline)) static void drop(void *p)
{
    free(p);
}

static int fork_mode(void)
{
    void *b[3] = {make(111), make(111), make(111)};
    pid_t pid;

    fflush(stdout);
    if ((pid = fork()) < 0)
        return 1;
    if (pid == 0) {
        drop(b[0]);
        drop(b[1]);
        escape(shrink(b[2], 50));
        printf("EXPECT child unmatched 3\n");
        fflush(stdout);
        _exit(0);
    }
    waitpid(pid, NULL, 0);
    return 0;
}

static int window_mode(void)
{
    void *a = make(4000), *b = keep(3000);

    usleep(50000);
    a = shrink(a, 1000);
    drop(b);
    printf("EXPECT window make aofi_realloc 1 impacting -4000\n"
           "EXPECT window keep aofi 1 impacting -3000\n"
           "EXPECT window shrink aifo 1 impacting 1000\n");
    escape(a);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "fork"))
        return fork_mode();
    if (argc == 2 && !strcmp(argv[1], "window"))
        return window_mode();
    fprintf(stderr, "usage: ana_unseen fork|window\n");
    return 2;
}
