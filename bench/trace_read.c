/* SPDX-License-Identifier: MIT */
/* How fast the reader decodes a trace: every event of TRACE read and
 * dropped, with nothing of the analysis after it (issue 45's reading
 * target is on the decoder alone: 30 M events per second of one core).
 *
 * usage: trace_read TRACE [REPEAT]
 * Prints, per pass and as the median of REPEAT passes (default 3): the
 * events, the CPU seconds of the pass, and millions of events per CPU
 * second. Exit 1 on any error. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "memscribe/trace.h"

static double cpu_seconds(void)
{
    struct timespec t;

    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* One pass over TRACE: its events and CPU seconds in *n and *s. */
static int read_once(const char *path, unsigned long long *n, double *s)
{
    struct fmt_reader *r;
    struct fmt_event ev;
    char err[1024];
    int rc;

    double t0 = cpu_seconds();
    if (fmt_reader_open(&r, path, err, sizeof(err))) {
        fprintf(stderr, "trace_read: %s\n", err);
        return 1;
    }
    for (*n = 0; (rc = fmt_reader_next(r, &ev)) == 1;)
        ++*n;
    if (rc < 0)
        fprintf(stderr, "trace_read: %s\n", fmt_reader_error(r));
    fmt_reader_close(r);
    *s = cpu_seconds() - t0;
    return rc < 0;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int repeat = argc > 2 ? atoi(argv[2]) : 3;
    double s[64];
    unsigned long long n = 0;

    if (argc < 2 || argc > 3 || repeat < 1 || repeat > 64) {
        fprintf(stderr, "usage: trace_read TRACE [REPEAT (1-64)]\n");
        return 2;
    }
    for (int i = 0; i < repeat; i++) {
        if (read_once(argv[1], &n, &s[i]))
            return 1;
        printf("pass %d: %llu events, %.3f s CPU, %.1f M events/s\n", i + 1, n, s[i],
               s[i] > 0 ? (double)n / s[i] / 1e6 : 0.0);
    }
    qsort(s, (size_t)repeat, sizeof(*s), by_value);
    double m = s[repeat / 2];
    printf("%s: %llu events, median %.3f s CPU, %.1f M events/s\n", argv[1], n, m,
           m > 0 ? (double)n / m / 1e6 : 0.0);
    return 0;
}
