/* SPDX-License-Identifier: MIT */
/* The recorder's clock. With a stable TSC (the kernel's own clocksource)
 * the collector stamps events with rdtsc (AArch64: the virtual counter,
 * util_arch.h's ms_arch_ticks), cheaper than the vDSO clock; the
 * recorder turns ticks into CLOCK_MONOTONIC nanoseconds with one line
 * calibrated at start, and reads its own "now" the same way, so comparing
 * its time with the collector's never mixes two clocks. */
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "recorder/rec_internal.h"
#include "util/util_arch.h"

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

/* One (tick, ns) reading on this CPU: the tick and the CLOCK_MONOTONIC
 * times read on both sides of it, the narrowest of a few (a reading the
 * thread was preempted in is wide). */
struct rec_tsc_seen {
    uint64_t tick, before, after;
};

static void rec_tsc_read(struct rec_tsc_seen *best)
{
    best->after = UINT64_MAX;
    best->before = 0;
    for (int i = 0; i < 8; i++) {
        struct rec_tsc_seen r;

        r.before = rec_mono_ns();
        r.tick = ms_arch_ticks();
        r.after = rec_mono_ns();
        if (r.after - r.before < best->after - best->before)
            *best = r;
    }
}

/* Under kvm-clock (a KVM guest whose kernel does not take the TSC as its
 * clocksource; the cloud's usual case) CLOCK_MONOTONIC is itself the
 * TSC scaled, but the kernel trusts the TSC only through the hypervisor's
 * parameters, so rdtsc is usable only if every CPU's TSC is the same line
 * of CLOCK_MONOTONIC: read on each CPU we may run on (moving there), then
 * on the first again for the rate, every reading must lie on the first
 * CPU's line within its own width plus REC_TSC_SKEW_NS. A skew under that
 * is below what one thread handing a block to another takes, so events
 * keep their order across threads. A machine this fails on is stamped
 * with CLOCK_MONOTONIC (~25 against ~11 ns a heap call here). */
#define REC_TSC_SKEW_NS 100

static int rec_tsc_same_everywhere(void)
{
    cpu_set_t was, one;
    struct rec_tsc_seen first, last, seen[64];
    int cpus[64], n = 0, ok = 1;

    if (sched_getaffinity(0, sizeof(was), &was))
        return 0;
    for (int c = 0; c < CPU_SETSIZE && n < 64; c++)
        if (CPU_ISSET(c, &was))
            cpus[n++] = c;
    if (n == 0 || CPU_COUNT(&was) > 64)
        return 0; /* more CPUs than we check: not trusted */
    for (int i = 0; i <= n && ok; i++) {
        CPU_ZERO(&one);
        CPU_SET(cpus[i % n], &one);
        if (sched_setaffinity(0, sizeof(one), &one))
            ok = 0;
        else if (i == 0)
            rec_tsc_read(&first);
        else if (i < n)
            rec_tsc_read(&seen[i]);
        else
            rec_tsc_read(&last);
    }
    sched_setaffinity(0, sizeof(was), &was);
    if (!ok || last.tick <= first.tick || last.after <= first.before)
        return 0;
    {
        /* ns per tick from the first CPU's two readings, and each reading's
         * distance from that line, in ns. */
        double rate = (double)((last.before + last.after) / 2 - (first.before + first.after) / 2) /
                      (double)(last.tick - first.tick);
        double mid0 = (double)((first.before + first.after) / 2);

        for (int i = 1; i < n; i++) {
            double at = mid0 + (double)(int64_t)(seen[i].tick - first.tick) * rate;
            double mid = (double)((seen[i].before + seen[i].after) / 2);
            double room = (double)(seen[i].after - seen[i].before) / 2 +
                          (double)(first.after - first.before) / 2 +
                          (double)(last.after - last.before) / 2 + REC_TSC_SKEW_NS;

            if (at - mid > room || mid - at > room)
                return 0;
        }
    }
    return 1;
}

/* The TSC is as good a clock as the kernel's when it neither stops nor
 * changes rate and the kernel itself uses it, or uses kvm-clock (built on
 * it) and every CPU's TSC is on one line. AArch64's virtual counter runs
 * at one rate on every CPU by the architecture; the kernel's own clock is
 * built on it (arch_sys_counter), else (an emulator, a hypervisor's clock)
 * it must be on one line on every CPU as kvm-clock's TSC. */
static int rec_tsc_usable(void)
{
    static const char source[] = "/sys/devices/system/clocksource/clocksource0/current_clocksource";
    const char *env = getenv("MEMSCRIBE_CLOCK");

    if (env && *env)
        return !strcmp(env, "tsc");
#if defined(__x86_64__) || defined(__i386__)
    if (!rec_file_has("/proc/cpuinfo", " constant_tsc", 1) ||
        !rec_file_has("/proc/cpuinfo", " nonstop_tsc", 1))
        return 0;
    if (rec_file_has(source, "tsc\n", 0))
        return 1;
    return rec_file_has(source, "kvm-clock\n", 0) && rec_tsc_same_everywhere();
#else
    return rec_file_has(source, "arch_sys_counter\n", 0) || rec_tsc_same_everywhere();
#endif
}

/* One (tick, ns) pair, the ns read on both sides of the tick. */
static void rec_clock_pair(uint64_t *tick, uint64_t *ns)
{
    uint64_t a = rec_mono_ns();

    *tick = ms_arch_ticks();
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

void rec_clock_init_tsc(struct rec_clock *c)
{
    memset(c, 0, sizeof(*c));
    c->tsc = 1;
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

void rec_clock_follow(struct rec_clock *c)
{
    uint64_t best = UINT64_MAX;

    if (!c->tsc || !c->ready)
        return;
    for (int i = 0; i < 3; i++) { /* the narrowest reading: one not preempted */
        uint64_t before = rec_mono_ns(), tick = ms_arch_ticks(), after = rec_mono_ns();

        if (after - before < best) {
            best = after - before;
            c->sys_off = (int64_t)(rec_clock_ns(c, tick, 1) - (before + (after - before) / 2));
        }
    }
}

uint64_t rec_clock_now(const struct rec_clock *c)
{
    if (c->tsc && c->ready)
        return rec_clock_ns(c, ms_arch_ticks(), 1);
    return rec_mono_ns();
}
