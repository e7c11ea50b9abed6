/* SPDX-License-Identifier: MIT */
/* The clock of the time stamps, thread by thread. A thread the program put
 * under prctl(PR_SET_TSC, PR_TSC_SIGSEGV) (sandboxes, record/replay tools)
 * or seccomp's strict mode faults on rdtsc, and so does the vDSO's
 * clock_gettime, which reads the TSC too: such a thread stamps with the
 * clock_gettime system call, marked FMT_SHM_TS_SYSCLOCK for the recorder.
 * PR_SET_TSC is per thread and inherited by the threads and processes it
 * creates (and across exec), so each thread asks the kernel once, at its
 * first event; the program's own prctl calls are watched too
 * (col_hooks_sys.c). As long as no thread of the process is found so, the
 * hooks read the TSC with a plain rdtsc and test nothing more. */
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "collector/col_internal.h"

int col_clock_fast;
/* A thread of this process was found unable to read the TSC: never fast
 * again (a later attach reads the settings anew). */
static int col_clock_off_seen;

/* After the settings are read (col_clock_tsc). */
void col_clock_settings(void)
{
    col_clock_fast = col_clock_tsc && !col_clock_off_seen;
}

void col_clock_thread_off(struct col_thread *t)
{
    t->clock_sys = 1;
    t->clock_known = 1;
    if (!col_clock_off_seen) {
        col_clock_off_seen = 1;
        col_clock_fast = 0;
        col_hook_update(); /* no plain paths: they read the TSC unasked */
    }
}

void col_clock_thread(struct col_thread *t)
{
    int mode = PR_TSC_ENABLE;

    if (prctl(PR_GET_TSC, &mode, 0, 0, 0) == 0 && mode == PR_TSC_SIGSEGV) {
        col_clock_thread_off(t);
        return;
    }
    t->clock_sys = 0;
    t->clock_known = 1;
}

uint64_t col_now_slow(void)
{
    struct col_thread *t = &col_thread;
    struct timespec ts;

    if (COL_UNLIKELY(!t->clock_known))
        col_clock_thread(t);
    if (t->clock_sys) {
        if (syscall(SYS_clock_gettime, (long)CLOCK_MONOTONIC, &ts) != 0)
            return FMT_SHM_TS_SYSCLOCK; /* cannot happen: the earliest time */
        return ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec) | FMT_SHM_TS_SYSCLOCK;
    }
    if (col_clock_tsc)
        return ms_arch_ticks();
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
