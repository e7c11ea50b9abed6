/* SPDX-License-Identifier: MIT */
/* For the collector's test programs: note the events a program expects to
 * see in its trace, without allocating (so noting does not add events),
 * and print them at the end, one per line, "KIND key=value...". The e2e
 * scripts compare these with `memscribe dump` between two marker blocks. */
#ifndef COL_EXPECT_H
#define COL_EXPECT_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Sizes no libc path allocates, below glibc's mmap threshold (so no flag
 * follows them in the dump): the scripts look for them. */
#define COL_MARK_BEGIN 99901
#define COL_MARK_END 99902

static char col_expect_buf[1 << 16];
static size_t col_expect_len;

__attribute__((format(printf, 1, 2))) static void col_expect(const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(col_expect_buf + col_expect_len, sizeof(col_expect_buf) - col_expect_len, fmt,
                  ap);
    va_end(ap);
    if (n > 0 && col_expect_len + (size_t)n + 1 < sizeof(col_expect_buf)) {
        col_expect_len += (size_t)n;
        col_expect_buf[col_expect_len++] = '\n';
    }
}

/* A marker block: malloc + free of a unique size. */
static void col_mark(size_t size)
{
    void *p = malloc(size);

    free(p);
}

static void col_expect_flush(int fd)
{
    size_t off = 0;

    while (off < col_expect_len) {
        ssize_t n = write(fd, col_expect_buf + off, col_expect_len - off);

        if (n <= 0)
            break;
        off += (size_t)n;
    }
}

#endif
