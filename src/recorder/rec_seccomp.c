/* SPDX-License-Identifier: MIT */
/* record -p and seccomp: before anything is changed in the process, each
 * thread's filters are read (PTRACE_SECCOMP_GET_FILTER, a stop of the
 * thread for the read) and run on every call the injection and the
 * collector would make there (fmt_shm_calls.h, util_seccomp.h). A filter
 * that forbids one, or cannot be read, and a thread in strict mode, make
 * record -p refuse with the process untouched: the injected dlopen's
 * mprotect, a new thread's memfd_create, getpid at the exit would
 * otherwise kill it. Most processes in containers have a filter; they are
 * attached to when it lets those calls through. */
#include <dirent.h>
#include <errno.h>
#include <linux/filter.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>

#include "format/fmt_shm_calls.h"
#include "recorder/rec_attach.h"
#include "recorder/rec_cpu.h"
#include "util/util_seccomp.h"

#ifndef PTRACE_SECCOMP_GET_FILTER
#define PTRACE_SECCOMP_GET_FILTER 0x420c
#endif

/* The ABI of the traced process: i386, or this machine's 64-bit one. */
static enum fmt_call_abi rec_abi(int is32)
{
    return is32 ? FMT_ABI_I386 : FMT_ABI_NATIVE;
}

const struct fmt_shm_call *rec_seccomp_judge(const struct rec_seccomp_filters *f, int is32,
                                             unsigned when, const char **effect)
{
    for (size_t c = 0; c < FMT_SHM_NR_CALLS; c++) {
        const struct fmt_shm_call *call = &fmt_shm_calls[c];
        struct seccomp_data d;
        uint32_t ret = SECCOMP_RET_ALLOW;

        if (!(call->when & when) || !fmt_shm_call_data(call, rec_abi(is32), &d))
            continue;
        for (uint32_t i = 0, at = 0; i < f->nr; at += f->len[i++]) {
            int64_t r = util_seccomp_run(f->insns + at, f->len[i], &d);

            if (r < 0) {
                *effect = r == UTIL_SECCOMP_READS_IP
                              ? "depends on the instruction address, which is not known beforehand"
                              : "cannot be evaluated (a program the kernel would not take)";
                return call;
            }
            ret = util_seccomp_first(ret, (uint32_t)r);
        }
        if ((*effect = util_seccomp_forbids(ret)))
            return call;
    }
    return NULL;
}

void rec_seccomp_free(struct rec_seccomp_filters *f)
{
    free(f->insns);
    free(f->len);
    memset(f, 0, sizeof(*f));
}

int rec_seccomp_read(pid_t tid, struct rec_seccomp_filters *f)
{
    size_t cap = 0, total = 0;

    memset(f, 0, sizeof(*f));
    for (unsigned long index = 0;; index++) {
        long n = ptrace(PTRACE_SECCOMP_GET_FILTER, tid, (void *)index, NULL);
        uint32_t *len;

        if (n < 0 && errno == ENOENT && index > 0)
            return 0; /* past the oldest */
        if (n < 0) {
            int e = errno;

            rec_seccomp_free(f);
            return -e;
        }
        if (n == 0 || n > BPF_MAXINSNS || !(len = realloc(f->len, (index + 1) * sizeof(*len)))) {
            rec_seccomp_free(f);
            return n == 0 || n > BPF_MAXINSNS ? -EINVAL : -ENOMEM;
        }
        f->len = len;
        if (total + (size_t)n > cap) {
            struct sock_filter *grown;

            cap = 2 * (total + (size_t)n);
            if (!(grown = realloc(f->insns, cap * sizeof(*grown)))) {
                rec_seccomp_free(f);
                return -ENOMEM;
            }
            f->insns = grown;
        }
        if (ptrace(PTRACE_SECCOMP_GET_FILTER, tid, (void *)index, f->insns + total) != n) {
            int e = errno ? errno : EIO;

            rec_seccomp_free(f);
            return -e;
        }
        f->len[index] = (uint32_t)n;
        f->nr = (uint32_t)index + 1;
        total += (size_t)n;
    }
}

/* A thread's seccomp mode from its status ("Seccomp:"), 0 without one. */
static int rec_seccomp_mode(pid_t pid, pid_t tid)
{
    char path[96], line[256];
    int mode = 0;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)tid);
    if (!(f = fopen(path, "re")))
        return 0; /* gone: nothing of ours will run there */
    while (fgets(line, sizeof(line), f))
        if (!strncmp(line, "Seccomp:", 8))
            mode = atoi(line + 8);
    fclose(f);
    return mode;
}

/* A thread stopped in a sleep with a timeout (poll, nanosleep, a futex
 * wait with one: -ERESTART_RESTARTBLOCK in its result) resumes it with
 * restart_syscall. Where its filter forbids that call, it restarts the
 * sleep itself instead, as after -ERESTARTNOHAND (a relative timeout
 * starts again): it lives, a little later. */
#define REC_ERESTART_RESTARTBLOCK 516
#define REC_A64_SVC0 0xd4000001u    /* svc #0 */
#define REC_A64_RESTART_SYSCALL 128 /* AArch64's restart_syscall */

static void rec_seccomp_restart_plain(pid_t tid)
{
#if defined(__x86_64__)
    struct user_regs_struct r;

    if (rec_cpu_get(tid, &r) != 0 || (int32_t)r.rax != -REC_ERESTART_RESTARTBLOCK ||
        (int32_t)r.orig_rax < 0)
        return;
    r.rax = r.orig_rax;
    r.rip -= 2; /* the syscall (int $0x80) instruction again */
    rec_cpu_set(tid, &r);
#elif defined(__aarch64__)
    /* The kernel rewound the call before this stop (pc on its svc, x0 its
     * first argument, x8 its number) and forgot its result: it turns the
     * svc into restart_syscall when the thread goes on. So the thread
     * goes on to its system call's entry, where the number is set back. */
    struct user_regs_struct r;
    int nr = -1, status;
    struct iovec iov = {&nr, sizeof(nr)};
    long insn;

    errno = 0;
    if (rec_cpu_get(tid, &r) != 0 || r.regs[8] > 0xffff ||
        (insn = ptrace(PTRACE_PEEKTEXT, tid, (void *)r.pc, 0L), errno) ||
        (uint32_t)insn != REC_A64_SVC0 || ptrace(PTRACE_SYSCALL, tid, 0L, 0L) != 0)
        return;
    if (waitpid(tid, &status, __WALL) != tid || !WIFSTOPPED(status))
        return;
    if (WSTOPSIG(status) != SIGTRAP) { /* a signal came first: it is the thread's */
        ptrace(PTRACE_DETACH, tid, 0L, (long)WSTOPSIG(status));
        return;
    }
    if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_ARM_SYSTEM_CALL, &iov) == 0 &&
        nr == REC_A64_RESTART_SYSCALL) {
        nr = (int)r.regs[8];
        ptrace(PTRACE_SETREGSET, tid, (void *)NT_ARM_SYSTEM_CALL, &iov);
    }
#else
    (void)tid; /* only attach uses it (rec_cpu.h) */
#endif
}

/* Check thread tid of pid (inject: it is the one that will load the
 * collector). 0, or -1 with the reason in msg. */
static int rec_seccomp_thread(pid_t pid, pid_t tid, int inject, int is32, char *msg, size_t size)
{
    unsigned when = FMT_CALL_STOP | FMT_CALL_START | FMT_CALL_THREAD | FMT_CALL_ATTACH |
                    (inject ? FMT_CALL_INJECT : 0);
    struct rec_seccomp_filters f;
    const struct fmt_shm_call *bad = NULL;
    const char *effect = NULL;
    int mode = rec_seccomp_mode(pid, tid), rc;

    if (mode == 1)
        return rec_say(msg, size,
                       "process %d: thread %d is in seccomp strict mode (no system call "
                       "but read, write and exit): the collector cannot run there; not "
                       "attached, the process is untouched",
                       (int)pid, (int)tid);
    if (mode != 2)
        return 0;
    rc = rec_attach_stop_thread(tid);
    if (rc == -ESRCH)
        return 0; /* gone meanwhile */
    if (rc == 0) {
        rc = rec_seccomp_read(tid, &f);
        if (rc == 0) {
            bad = rec_seccomp_judge(&f, is32, when, &effect);
            rec_seccomp_free(&f);
            if (bad && bad->when == FMT_CALL_STOP)
                rec_seccomp_restart_plain(tid);
        }
        rec_attach_let_go(tid);
    }
    if (rc != 0)
        return rec_say(
            msg, size,
            "process %d: thread %d has a seccomp filter we cannot read (%s%s), "
            "so we cannot tell whether it lets the collector's calls through; "
            "not attached, the process is untouched",
            (int)pid, (int)tid, strerror(-rc),
            rc == -EACCES || rc == -EPERM ? ": reading one needs CAP_SYS_ADMIN (run as root)" : "");
    if (!bad)
        return 0;
    return rec_say(msg, size,
                   "process %d: thread %d's seccomp filter forbids a call the collector "
                   "needs: %s (%s) %s; not attached, the process is untouched",
                   (int)pid, (int)tid, fmt_shm_call_name(bad, rec_abi(is32)), bad->why, effect);
}

int rec_seccomp_check(pid_t pid, pid_t inject_tid, int is32, char *msg, size_t size)
{
    char path[64];
    struct dirent *e;
    DIR *d;
    int rc = 0;

    snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    if (!(d = opendir(path)))
        return 0; /* gone: the injection says so */
    while (rc == 0 && (e = readdir(d))) {
        long tid = strtol(e->d_name, NULL, 10);

        if (tid > 0)
            rc = rec_seccomp_thread(pid, (pid_t)tid, tid == inject_tid, is32, msg, size);
    }
    closedir(d);
    return rc;
}
