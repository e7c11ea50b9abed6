/* SPDX-License-Identifier: MIT */
/* The recorder's clock. With a stable TSC (the kernel's own clocksource)
 * the collector stamps events with rdtsc, cheaper than the vDSO clock; the
 * recorder turns ticks into CLOCK_MONOTONIC nanoseconds with one line
 * calibrated at start, and reads its own "now" the same way, so comparing
 * its time with the collector's never mixes two clocks. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "recorder/rec_internal.h"

static uint64_t rec_mono_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Does the file start with want? */
static int rec_file_has(const char *path, const char *want, int anywhere)
{
    char buf[8192];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n;

    if (fd < 0)
        return 0;
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = 0;
    return anywhere ? strstr(buf, want) != NULL : strncmp(buf, want, strlen(want)) == 0;
}

/* The TSC is as good a clock as the kernel's when the kernel itself uses
 * it and it neither stops nor changes rate. */
static int rec_tsc_usable(void)
{
    const char *env = getenv("MEMSCRIBE_CLOCK");

    if (env && *env)
        return !strcmp(env, "tsc");
#if defined(__x86_64__) || defined(__i386__)
    return rec_file_has("/sys/devices/system/clocksource/clocksource0/current_clocksource", "tsc\n",
                        0) &&
           rec_file_has("/proc/cpuinfo", " constant_tsc", 1) &&
           rec_file_has("/proc/cpuinfo", " nonstop_tsc", 1);
#else
    return 0;
#endif
}

/* One (tick, ns) pair, the ns read on both sides of the tick. */
static void rec_clock_pair(uint64_t *tick, uint64_t *ns)
{
    uint64_t a = rec_mono_ns();

#if defined(__x86_64__) || defined(__i386__)
    *tick = __builtin_ia32_rdtsc();
#else
    *tick = 0;
#endif
    *ns = a + (rec_mono_ns() - a) / 2;
}

/* 10 ms between the two pairs: a rate good to ~1e-5, and one line for the
 * whole run, so times never jump. */
#define REC_CLOCK_SPAN_NS (10 * 1000 * 1000ull)

void rec_clock_init(struct rec_clock *c)
{
    memset(c, 0, sizeof(*c));
    c->tsc = rec_tsc_usable();
    if (!c->tsc) {
        c->mono0 = rec_mono_ns();
        c->ready = 1;
        return;
    }
    rec_clock_pair(&c->tsc0, &c->mono0);
}

/* The second reading, now: the line through both pairs. */
static int rec_clock_line(struct rec_clock *c)
{
    uint64_t t1, m1;

    rec_clock_pair(&t1, &m1);
    if (t1 <= c->tsc0 || m1 <= c->mono0)
        return 0; /* cannot happen with a constant TSC; try again later */
    c->ns_per_tick = (double)(m1 - c->mono0) / (double)(t1 - c->tsc0);
    c->mult32 = (uint64_t)(c->ns_per_tick * 4294967296.0);
    c->ready = 1;
    return 1;
}

int rec_clock_settle(struct rec_clock *c)
{
    if (c->ready)
        return 1;
    if (rec_mono_ns() - c->mono0 < REC_CLOCK_SPAN_NS)
        return 0;
    return rec_clock_line(c);
}

int rec_clock_settle_now(struct rec_clock *c)
{
    return c->ready || rec_clock_line(c);
}

uint64_t rec_clock_now(const struct rec_clock *c)
{
#if defined(__x86_64__) || defined(__i386__)
    if (c->tsc && c->ready)
        return rec_clock_ns(c, __builtin_ia32_rdtsc(), 1);
#endif
    return rec_mono_ns();
}
