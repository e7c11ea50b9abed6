/* SPDX-License-Identifier: MIT */
/* The program's prctl() and syscall() calls that change what the collector
 * may do, seen before they are made: PR_SET_TSC (the thread's clock,
 * col_clock.c); seccomp's strict mode, which allows a thread no system
 * call but read, write, exit and sigreturn, and no rdtsc; and a seccomp
 * filter, which may forbid a call the collector makes later (a new
 * thread's ring segment, the exit). Where the collector would be killed
 * at its next call, and the program with it, it turns itself off first,
 * saying so, and takes itself out of LD_PRELOAD: the programs this process
 * execs inherit the filter. The calls reach the kernel through prctl(),
 * syscall(SYS_prctl) or syscall(SYS_seccomp) (glibc has no seccomp()); a
 * program that issues the instruction itself is not seen, nor is a filter
 * installed before the collector started. docs/record-collector.md, "Sandboxes". */
#include <dlfcn.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdarg.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "collector/col_internal.h"
#include "format/fmt_shm_calls.h"
#include "util/util_seccomp.h"

#define COL_EXPORT __attribute__((visibility("default")))

static int (*col_real_prctl)(int, unsigned long, unsigned long, unsigned long, unsigned long);
static long (*col_real_syscall)(long, long, long, long, long, long, long);

void col_sys_resolve(void)
{
    *(void **)&col_real_prctl = dlsym(COL_RTLD_NEXT, "prctl");
    *(void **)&col_real_syscall = dlsym(COL_RTLD_NEXT, "syscall");
}

/* Turn off, saying the strings of parts one after the other. */
static void col_sys_off(const char *const *parts, size_t nr_parts)
{
    char msg[FMT_SHM_SAY_MAX];
    size_t n = 0;

    for (size_t i = 0; i < nr_parts; i++)
        for (const char *c = parts[i]; c && *c && n < sizeof(msg) - 1; c++)
            msg[n++] = *c;
    msg[n] = 0;
    col_turn_off(msg, 0);
}

/* The thread is about to enter seccomp's strict mode (how: the call, for
 * the message). Said while we still may. */
static void col_sys_strict(const char *how)
{
    char tid[16];
    size_t d = sizeof(tid) - 1;
    const char *parts[] = {"thread ", NULL, " enters seccomp strict mode (", how,
                           "): tracing stops here"};

    tid[d] = 0;
    for (unsigned v = (unsigned)col_gettid(); d == sizeof(tid) - 1 || v; v /= 10)
        tid[--d] = (char)('0' + v % 10);
    parts[1] = tid + d;
    col_sys_off(parts, sizeof(parts) / sizeof(parts[0]));
    col_clock_thread_off(&col_thread); /* strict mode takes the TSC too */
}

/* The program is about to install filter prog (how: the call): does it
 * let through every call the collector makes from now on, in this
 * process and in the children it forks (fmt_shm_calls.h)? */
static void col_sys_filter(const struct sock_fprog *prog, const char *how)
{
    unsigned when = FMT_CALL_START | FMT_CALL_THREAD | (col_sud_on ? FMT_CALL_PRECISE : 0);
    const char *parts[] = {"the program installs a seccomp filter (",
                           how,
                           ") under which ",
                           NULL,
                           " (",
                           NULL,
                           ") ",
                           NULL,
                           ": tracing stops here, and the programs it execs run untraced"};

#ifdef COL_ATTACH
    when |= FMT_CALL_ATTACH;
#endif
    if (!prog || !prog->filter)
        return; /* the kernel says EFAULT */
    for (size_t c = 0; c < FMT_SHM_NR_CALLS && !parts[3]; c++) {
        const struct fmt_shm_call *call = &fmt_shm_calls[c];
        struct seccomp_data d;
        int64_t r;

        if (!(call->when & when) || !fmt_shm_call_data(call, FMT_ABI_NATIVE, &d))
            continue;
        r = util_seccomp_run(prog->filter, prog->len, &d);
        if (r < 0 || util_seccomp_forbids((uint32_t)r)) {
            parts[3] = fmt_shm_call_name(call, FMT_ABI_NATIVE);
            parts[5] = call->why;
            parts[7] = r == UTIL_SECCOMP_READS_IP ? "depends on the instruction address"
                       : r < 0                    ? "cannot be evaluated"
                                                  : util_seccomp_forbids((uint32_t)r);
        }
    }
    if (!parts[3])
        return;
    if (col_state != COL_OFF)
        col_sys_off(parts, sizeof(parts) / sizeof(parts[0]));
    col_strip_preload();
}

/* prctl(option, a2, ...) is about to be made, by either way. */
static void col_sys_prctl_before(unsigned long option, unsigned long a2, unsigned long a3)
{
    if (option == PR_SET_TSC && a2 == PR_TSC_SIGSEGV)
        col_clock_thread_off(&col_thread); /* a signal handler's hook must not read it */
    else if (option == PR_SET_SECCOMP && a2 == SECCOMP_MODE_STRICT)
        col_sys_strict("prctl PR_SET_SECCOMP");
    else if (option == PR_SET_SECCOMP && a2 == SECCOMP_MODE_FILTER)
        col_sys_filter((const struct sock_fprog *)a3, "prctl PR_SET_SECCOMP");
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
    col_sys_prctl_before((unsigned long)option, a[0], a[1]);
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
    if (COL_LIKELY(nr != SYS_prctl && nr != SYS_seccomp && nr != SYS_exit_group))
        return col_real_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
    if (nr == SYS_exit_group) {
        /* The process ends without exit() or _exit(): stamp its end and
         * class its blocks (record --reach) as _exit does. */
        col_ring_stamp_exit();
        col_reach_at_exit();
        return col_real_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
    }
    if (nr == SYS_prctl)
        col_sys_prctl_before((unsigned long)a[0], (unsigned long)a[1], (unsigned long)a[2]);
    else if (a[0] == SECCOMP_SET_MODE_STRICT)
        col_sys_strict("the seccomp system call");
    else if (a[0] == SECCOMP_SET_MODE_FILTER)
        col_sys_filter((const struct sock_fprog *)a[2], "the seccomp system call");
    rc = col_real_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
    if (nr == SYS_prctl)
        col_sys_prctl_after((unsigned long)a[0], (unsigned long)a[1]);
    return rc;
}
