/* SPDX-License-Identifier: MIT */
/* The program's prctl() and syscall() calls that change what the collector
 * may do in a thread, seen before they are made: PR_SET_TSC (the thread's
 * clock, col_clock.c) and seccomp's strict mode, which allows a thread no
 * system call but read, write, exit and sigreturn, and no rdtsc: the
 * collector turns itself off first (it would be killed at its next call,
 * and the program with it). The calls reach the kernel through prctl(),
 * syscall(SYS_prctl) or syscall(SYS_seccomp) (glibc has no seccomp()); a
 * program that issues the instruction itself is not seen. */
#include <dlfcn.h>
#include <linux/seccomp.h>
#include <stdarg.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "collector/col_internal.h"

#define COL_EXPORT __attribute__((visibility("default")))

static int (*col_real_prctl)(int, unsigned long, unsigned long, unsigned long, unsigned long);
static long (*col_real_syscall)(long, long, long, long, long, long, long);

void col_sys_resolve(void)
{
    *(void **)&col_real_prctl = dlsym(COL_RTLD_NEXT, "prctl");
    *(void **)&col_real_syscall = dlsym(COL_RTLD_NEXT, "syscall");
}

/* The thread is about to enter seccomp's strict mode (how: the call, for
 * the message). Said while we still may. */
static void col_sys_strict(const char *how)
{
    const char *parts[] = {"thread ", NULL, " enters seccomp strict mode (", how,
                           "): tracing stops here"};
    char msg[128], tid[16];
    size_t n = 0, d = sizeof(tid) - 1;

    tid[d] = 0;
    for (unsigned v = (unsigned)col_gettid(); d == sizeof(tid) - 1 || v; v /= 10)
        tid[--d] = (char)('0' + v % 10);
    parts[1] = tid + d;
    for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
        for (const char *c = parts[i]; *c && n < sizeof(msg) - 1; c++)
            msg[n++] = *c;
    msg[n] = 0;
    col_turn_off(msg, 0);
    col_clock_thread_off(&col_thread); /* strict mode takes the TSC too */
}

/* prctl(option, a2, ...) is about to be made, by either way. */
static void col_sys_prctl_before(unsigned long option, unsigned long a2)
{
    if (option == PR_SET_TSC && a2 == PR_TSC_SIGSEGV)
        col_clock_thread_off(&col_thread); /* a signal handler's hook must not read it */
    else if (option == PR_SET_SECCOMP && a2 == SECCOMP_MODE_STRICT)
        col_sys_strict("prctl PR_SET_SECCOMP");
}

static void col_sys_prctl_after(unsigned long option, unsigned long a2)
{
    if (option == PR_SET_TSC && col_state != COL_OFF)
        col_clock_thread(&col_thread); /* it failed, or the TSC is back */
    (void)a2;
}

COL_EXPORT int prctl(int option, ...)
{
    unsigned long a[4];
    va_list ap;
    int rc;

    va_start(ap, option);
    for (int i = 0; i < 4; i++)
        a[i] = va_arg(ap, unsigned long);
    va_end(ap);
    if (COL_UNLIKELY(!col_real_prctl))
        col_sys_resolve();
    col_sys_prctl_before((unsigned long)option, a[0]);
    rc = col_real_prctl(option, a[0], a[1], a[2], a[3]);
    col_sys_prctl_after((unsigned long)option, a[0]);
    return rc;
}

COL_EXPORT long syscall(long nr, ...)
{
    long a[6], rc;
    va_list ap;

    va_start(ap, nr);
    for (int i = 0; i < 6; i++)
        a[i] = va_arg(ap, long);
    va_end(ap);
    if (COL_UNLIKELY(!col_real_syscall))
        col_sys_resolve();
    if (COL_LIKELY(nr != SYS_prctl && nr != SYS_seccomp))
        return col_real_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
    if (nr == SYS_prctl)
        col_sys_prctl_before((unsigned long)a[0], (unsigned long)a[1]);
    else if (a[0] == SECCOMP_SET_MODE_STRICT)
        col_sys_strict("the seccomp system call");
    rc = col_real_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
    if (nr == SYS_prctl)
        col_sys_prctl_after((unsigned long)a[0], (unsigned long)a[1]);
    return rc;
}
