/* SPDX-License-Identifier: MIT */
/* A program that owns every descriptor from 3 up, as daemons do: it closes
 * them all (close_range, or a close() loop with "loop"), opens its input
 * on 3 and its output on 4, then copies input to output in small pieces
 * with allocations from many new call sites between them (every new site
 * is a first unwind through new code). It prints the numbers open() gave
 * it, which must be the same traced and untraced: the collector may hold
 * no descriptor the program can see.
 * Usage: col_fds INPUT OUTPUT [loop] */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define COL_FDS_SITES 48

/* Distinct functions, so each allocation unwinds through code not seen. */
#define COL_FDS_SITE(i)                                                                            \
    static __attribute__((noinline)) void *col_fds_site##i(size_t n)                               \
    {                                                                                              \
        void *p = malloc(n + i);                                                                   \
        __asm__ volatile("" ::"r"(p) : "memory");                                                  \
        return p;                                                                                  \
    }
COL_FDS_SITE(0)
COL_FDS_SITE(1)
COL_FDS_SITE(2)
COL_FDS_SITE(3)
COL_FDS_SITE(4)
COL_FDS_SITE(5)
COL_FDS_SITE(6)
COL_FDS_SITE(7)

static void *(*const col_fds_sites[])(size_t) = {
    col_fds_site0, col_fds_site1, col_fds_site2, col_fds_site3,
    col_fds_site4, col_fds_site5, col_fds_site6, col_fds_site7,
};

/* A recursion of depth d before the allocation: new frames at each depth. */
static __attribute__((noinline)) void *col_fds_nest(int d, int site, size_t n)
{
    void *p;

    if (d == 0)
        return col_fds_sites[site % 8](n);
    p = col_fds_nest(d - 1, site, n);
    __asm__ volatile("" ::"r"(p) : "memory");
    return p;
}

int main(int argc, char **argv)
{
    char buf[7];
    ssize_t got;
    int in, out, other, round = 0;

    if (argc < 3) {
        fprintf(stderr, "usage: col_fds INPUT OUTPUT [loop]\n");
        return 2;
    }
    if (argc > 3 && !strcmp(argv[3], "loop")) {
        for (int fd = 3; fd < 1024; fd++)
            close(fd);
    } else if (syscall(SYS_close_range, 3u, ~0u, 0u) != 0) {
        perror("close_range");
        return 1;
    }
    in = open(argv[1], O_RDONLY);
    out = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || out < 0) {
        perror("open");
        return 1;
    }
    while ((got = read(in, buf, sizeof(buf))) > 0) {
        for (int i = 0; i < COL_FDS_SITES / 8; i++)
            free(col_fds_nest(round % 9 + i, round + i, 16));
        round++;
        if (write(out, buf, (size_t)got) != got) {
            perror("write");
            return 1;
        }
    }
    other = open("/dev/null", O_RDONLY);
    printf("in=%d out=%d next=%d rounds=%d\n", in, out, other, round);
    return got < 0;
}
