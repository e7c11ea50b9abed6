/* SPDX-License-Identifier: MIT */
/* record -p PID: the checks before touching the process, and the ptrace
 * injection that makes one of its threads call dlopen and the collector's
 * entry points, then puts the thread back exactly as it was. */
#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "recorder/rec_attach.h"
#include "recorder/rec_cpu.h"

#define REC_CAP_SYS_PTRACE 19
/* The injected calls' frames start this far below the thread's stack
 * pointer: past the red zone (128 bytes) and what a signal frame needs. */
#define REC_STACK_GAP 8192
/* An injected call that has not returned by then is given up (its thread
 * waits for a lock, perhaps one the program held when we stopped it). */
#define REC_CALL_TIMEOUT_MS 10000

int rec_say(char *msg, size_t size, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, size, fmt, ap);
    va_end(ap);
    return -1;
}

/* A "Name:\tvalue" line of /proc/PID/status, or "" (file missing: -1). */
static int rec_status_field(const char *path, const char *field, char *out, size_t out_size)
{
    char line[512];
    size_t len = strlen(field);
    FILE *f = fopen(path, "re");

    out[0] = 0;
    if (!f)
        return -1;
    while (fgets(line, sizeof(line), f))
        if (!strncmp(line, field, len) && line[len] == ':') {
            const char *v = line + len + 1;

            v += strspn(v, " \t");
            snprintf(out, out_size, "%.*s", (int)strcspn(v, "\n"), v);
            break;
        }
    fclose(f);
    return 0;
}

static int rec_have_cap_ptrace(void)
{
    char v[64];

    rec_status_field("/proc/self/status", "CapEff", v, sizeof(v));
    return (strtoull(v, NULL, 16) >> REC_CAP_SYS_PTRACE) & 1;
}

static int rec_ptrace_scope(void)
{
    FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
    int scope = 0;

    if (f) {
        if (fscanf(f, "%d", &scope) != 1)
            scope = 0;
        fclose(f);
    }
    return scope;
}

/* Why the kernel says no (EPERM, EACCES): the rule that applies here. */
static int rec_why_denied(pid_t pid, char *msg, size_t size)
{
    char path[64], uid[128];
    int scope = rec_ptrace_scope(), cap = rec_have_cap_ptrace();
    unsigned long owner;

    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    rec_status_field(path, "Uid", uid, sizeof(uid));
    owner = strtoul(uid, NULL, 10);
    if (scope == 3)
        return rec_say(msg, size,
                       "process %d: not permitted: kernel.yama.ptrace_scope is 3, no process may "
                       "be traced until the next boot",
                       (int)pid);
    if (scope == 2 && !cap)
        return rec_say(msg, size,
                       "process %d: not permitted: kernel.yama.ptrace_scope is 2, only a process "
                       "with CAP_SYS_PTRACE may attach (run as root)",
                       (int)pid);
    if (owner != (unsigned long)getuid() && !cap)
        return rec_say(msg, size,
                       "process %d: not permitted: it belongs to uid %lu, we run as uid %lu "
                       "without CAP_SYS_PTRACE",
                       (int)pid, owner, (unsigned long)getuid());
    if (scope == 1 && !cap)
        return rec_say(
            msg, size,
            "process %d: not permitted: kernel.yama.ptrace_scope is 1, only a parent "
            "may trace its children (run as root, or 'sysctl kernel.yama.ptrace_scope=0')",
            (int)pid);
    return rec_say(msg, size,
                   "process %d: not permitted to trace it (not dumpable, setuid, or another "
                   "security module's rule)",
                   (int)pid);
}

/* The same namespace as ours? The socket is abstract (per network
 * namespace) and the collector's path must mean the same file. */
static int rec_same_ns(pid_t pid, const char *ns, char *msg, size_t size)
{
    char a[64], b[64], la[128] = "", lb[128] = "";

    snprintf(a, sizeof(a), "/proc/self/ns/%s", ns);
    snprintf(b, sizeof(b), "/proc/%d/ns/%s", (int)pid, ns);
    if (readlink(a, la, sizeof(la) - 1) < 0)
        return 0; /* no namespaces here: nothing to compare */
    if (readlink(b, lb, sizeof(lb) - 1) < 0)
        return errno == EACCES || errno == EPERM ? rec_why_denied(pid, msg, size) : 0;
    if (strcmp(la, lb))
        return rec_say(msg, size,
                       "process %d: in another %s namespace (a container?): run memscribe "
                       "inside it",
                       (int)pid, ns);
    return 0;
}

static int rec_exe_class(pid_t pid, int *cls, int *dynamic)
{
    char path[64];
    Elf64_Ehdr eh;
    int fd;

    snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    *dynamic = 0;
    if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
        memcmp(eh.e_ident, ELFMAG, SELFMAG)) {
        close(fd);
        *cls = 0;
        return 0;
    }
    *cls = eh.e_ident[EI_CLASS];
    if (*cls == ELFCLASS64)
        for (unsigned i = 0; i < eh.e_phnum; i++) {
            Elf64_Phdr ph;

            if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) !=
                (ssize_t)sizeof(ph))
                break;
            *dynamic |= ph.p_type == PT_INTERP;
        }
    if (*cls == ELFCLASS32) {
        const Elf32_Ehdr *e32 = (const Elf32_Ehdr *)(const void *)&eh; /* the shorter header */

        for (unsigned i = 0; i < e32->e_phnum; i++) {
            Elf32_Phdr ph;

            if (pread(fd, &ph, sizeof(ph), (off_t)(e32->e_phoff + i * sizeof(ph))) !=
                (ssize_t)sizeof(ph))
                break;
            *dynamic |= ph.p_type == PT_INTERP;
        }
    }
    close(fd);
    return 0;
}

/* Is a file whose path ends in suffix mapped in pid? */
static int rec_mapped(pid_t pid, const char *suffix)
{
    char path[4200] = "";

    return rec_attach_symbol(pid, suffix, "", path, sizeof(path)) != 0 || path[0];
}

int rec_attach_check(pid_t pid, int *is32, char *msg, size_t size)
{
    char path[64], v[256];
    int cls = 0, dynamic = 0;

    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    if (pid <= 0 || rec_status_field(path, "State", v, sizeof(v)) != 0)
        return rec_say(msg, size, "no process %d", (int)pid);
    if (v[0] == 'Z' || v[0] == 'X')
        return rec_say(msg, size, "process %d has exited", (int)pid);
    if (v[0] == 'T') /* resuming it for our calls would undo its job control stop */
        return rec_say(msg, size, "process %d is stopped (SIGSTOP, Ctrl-Z): continue it first",
                       (int)pid);
    if (pid == getpid())
        return rec_say(msg, size, "process %d is memscribe itself", (int)pid);
    rec_status_field(path, "TracerPid", v, sizeof(v));
    if (atoi(v) != 0) {
        char comm[64] = "?", cpath[64];
        FILE *f;

        snprintf(cpath, sizeof(cpath), "/proc/%d/comm", atoi(v));
        if ((f = fopen(cpath, "re"))) {
            if (!fgets(comm, sizeof(comm), f))
                snprintf(comm, sizeof(comm), "?");
            comm[strcspn(comm, "\n")] = 0;
            fclose(f);
        }
        return rec_say(msg, size,
                       "process %d is traced already, by process %d (%s): detach that first",
                       (int)pid, atoi(v), comm);
    }
    if (rec_same_ns(pid, "pid", msg, size) || rec_same_ns(pid, "mnt", msg, size) ||
        rec_same_ns(pid, "net", msg, size))
        return -1;
    if (rec_exe_class(pid, &cls, &dynamic) != 0)
        return errno == EACCES || errno == EPERM
                   ? rec_why_denied(pid, msg, size)
                   : rec_say(msg, size, "process %d: %s", (int)pid, strerror(errno));
    *is32 = cls == ELFCLASS32;
    if (cls != ELFCLASS64 && cls != ELFCLASS32)
        return rec_say(msg, size, "process %d: its executable is not an ELF file", (int)pid);
#if !defined(__x86_64__)
    if (cls == ELFCLASS32) /* the i386 collector is x86's alone */
        return rec_say(msg, size,
                       "process %d is a 32-bit program: on this CPU memscribe traces 64-bit "
                       "programs only (docs/platforms.md)",
                       (int)pid);
#endif
    if (!dynamic || !rec_mapped(pid, "/libc.so.6"))
        return rec_say(msg, size,
                       "process %d is statically linked (no glibc libc.so.6 loaded): there is no "
                       "dlopen in it to load the collector with",
                       (int)pid);
    if (rec_mapped(pid, "/libmemscribe.so"))
        return rec_say(msg, size,
                       "process %d runs with memscribe's collector preloaded: it is being "
                       "recorded by 'memscribe record' already",
                       (int)pid);
    return 0;
}

int rec_attach_stop_thread(pid_t tid)
{
    int status;

    if (ptrace(PTRACE_SEIZE, tid, 0L, 0L) != 0)
        return -errno;
    if (ptrace(PTRACE_INTERRUPT, tid, 0L, 0L) != 0) {
        int e = errno;

        ptrace(PTRACE_DETACH, tid, 0L, 0L);
        return -e;
    }
    for (;;) {
        if (waitpid(tid, &status, __WALL) < 0)
            return -errno;
        if (!WIFSTOPPED(status))
            return -ESRCH;
        if (status >> 16 == PTRACE_EVENT_STOP)
            return 0;
        ptrace(PTRACE_CONT, tid, 0L, (long)WSTOPSIG(status)); /* a signal came first */
    }
}

void rec_attach_let_go(pid_t tid)
{
    ptrace(PTRACE_DETACH, tid, 0L, 0L);
}

/* The thread held for our calls, on the CPUs rec_cpu.h knows (an i386
 * process is traced by the x86-64 recorder). */
#if defined(REC_CPU_ATTACH)
/* A thread of pid that can run our calls: pid itself unless it has
 * exited (pthread_exit in main), else the first live one. */
static pid_t rec_pick_thread(pid_t pid)
{
    char path[96], state[64];
    struct dirent *e;
    pid_t tid = 0;
    DIR *d;

    snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)pid);
    if (rec_status_field(path, "State", state, sizeof(state)) == 0 && state[0] != 'Z')
        return pid;
    snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    d = opendir(path);
    while (d && !tid && (e = readdir(d))) {
        long t = strtol(e->d_name, NULL, 10);

        snprintf(path, sizeof(path), "/proc/%d/task/%ld/status", (int)pid, t);
        if (t > 0 && rec_status_field(path, "State", state, sizeof(state)) == 0 && state[0] != 'Z')
            tid = (pid_t)t;
    }
    if (d)
        closedir(d);
    return tid;
}

/* A stopped thread we hold, and what it was doing. */
struct rec_hold {
    pid_t pid, tid;
    int memfd; /* /proc/PID/mem */
    struct user_regs_struct regs;
    struct rec_cpu_ext ext;
    uint64_t scratch; /* below the thread's stack pointer, for our strings */
    int is32;         /* an i386 process: arguments on the stack, 32-bit pointers */
};

static int rec_gone(const struct rec_hold *h, int status, char *msg, size_t size)
{
    if (WIFEXITED(status) || WIFSIGNALED(status))
        return rec_say(msg, size, "process %d exited while being attached to", (int)h->pid);
    return -1;
}

/* Seize the thread and stop it (PTRACE_INTERRUPT): signals that arrive
 * first are delivered as they would have been. */
static int rec_hold_take(struct rec_hold *h, pid_t pid, char *msg, size_t size)
{
    char path[64];
    int rc;

    memset(h, 0, sizeof(*h));
    h->pid = pid;
    h->memfd = -1;
    h->tid = rec_pick_thread(pid);
    if (!h->tid)
        return rec_say(msg, size, "process %d has exited", (int)pid);
    rc = rec_attach_stop_thread(h->tid);
    if (rc == -ESRCH)
        return rec_say(msg, size, "process %d exited while being attached to", (int)pid);
    if (rc == -EPERM || rc == -EACCES)
        return rec_why_denied(pid, msg, size);
    if (rc != 0)
        return rec_say(msg, size, "process %d: cannot stop it: %s", (int)pid, strerror(-rc));
    snprintf(path, sizeof(path), "/proc/%d/mem", (int)h->tid);
    h->memfd = open(path, O_RDWR | O_CLOEXEC);
    if (h->memfd < 0 || rec_cpu_get(h->tid, &h->regs) != 0) {
        int e = errno;

        if (h->memfd >= 0)
            close(h->memfd);
        ptrace(PTRACE_DETACH, h->tid, 0L, 0L);
        return rec_say(msg, size, "process %d: cannot read its registers or memory: %s", (int)pid,
                       strerror(e));
    }
    rec_cpu_ext_save(h->tid, &h->ext);
    h->scratch = (rec_cpu_sp(&h->regs) - REC_STACK_GAP) & ~(uint64_t)15;
    {
        int cls = 0, dynamic = 0;

        h->is32 = rec_exe_class(pid, &cls, &dynamic) == 0 && cls == ELFCLASS32;
    }
    return 0;
}

/* Put the thread back as it was and let it go. A system call it was in
 * restarts (its registers say so: x86's orig_rax was kept, AArch64's pc
 * is back on the svc). */
static void rec_hold_release(struct rec_hold *h)
{
    rec_cpu_set(h->tid, &h->regs);
    rec_cpu_ext_restore(h->tid, &h->ext);
    ptrace(PTRACE_DETACH, h->tid, 0L, 0L);
    close(h->memfd);
}

/* Copy a string below the stack pointer; returns its address in the
 * process, or 0. */
static uint64_t rec_hold_push(struct rec_hold *h, const char *s)
{
    size_t len = strlen(s) + 1;

    h->scratch = (h->scratch - len) & ~(uint64_t)15;
    if (pwrite(h->memfd, s, len, (off_t)h->scratch) != (ssize_t)len)
        return 0;
    return h->scratch;
}

/* waitpid for the thread, at most timeout_ms: 0, 1 on timeout, -1. */
static int rec_wait_timed(pid_t tid, int *status, int timeout_ms)
{
    for (int waited = 0;; waited++) {
        pid_t got = waitpid(tid, status, __WALL | WNOHANG);

        if (got == tid)
            return 0;
        if (got < 0 && errno != EINTR)
            return -1;
        if (waited >= timeout_ms)
            return 1;
        poll(NULL, 0, 1);
    }
}

/* Stop a thread that is running one of our calls, so that it can be put
 * back: its signals are delivered meanwhile. 0, or -1 if it is gone. */
static int rec_hold_abandon(struct rec_hold *h)
{
    int status;

    if (ptrace(PTRACE_INTERRUPT, h->tid, 0L, 0L) != 0)
        return -1;
    for (;;) {
        if (waitpid(h->tid, &status, __WALL) < 0 || !WIFSTOPPED(status))
            return -1;
        if (status >> 16 == PTRACE_EVENT_STOP)
            return 0;
        ptrace(PTRACE_CONT, h->tid, 0L, (long)WSTOPSIG(status));
    }
}

/* Call fn(a0, a1) in the thread: a return to address 0 faults, and that
 * fault (never delivered) ends the call. *ret gets its result register. */
static int rec_hold_call(struct rec_hold *h, uint64_t fn, uint64_t a0, uint64_t a1, uint64_t *ret,
                         char *msg, size_t size)
{
    struct user_regs_struct r = h->regs;
    uint64_t zero = 0, sp = (h->scratch - 256) & ~(uint64_t)15;
    uint32_t frame[3] = {0, (uint32_t)a0, (uint32_t)a1}; /* i386: return address, arguments */
    int status;

    if (h->is32) { /* cdecl: the callee sees esp + 4 16-aligned */
        sp -= 16 + 4;
        if (pwrite(h->memfd, frame, sizeof(frame), (off_t)sp) != (ssize_t)sizeof(frame))
            return rec_say(msg, size, "process %d: cannot write to its stack: %s", (int)h->pid,
                           strerror(errno));
    } else if (REC_CPU_RA_ON_STACK) {
        sp -= 8; /* the return address: the callee sees rsp + 8 16-aligned */
        if (pwrite(h->memfd, &zero, sizeof(zero), (off_t)sp) != (ssize_t)sizeof(zero))
            return rec_say(msg, size, "process %d: cannot write to its stack: %s", (int)h->pid,
                           strerror(errno));
    }
    rec_cpu_call(&r, fn, sp, a0, a1);
    if (rec_cpu_set(h->tid, &r) != 0 || ptrace(PTRACE_CONT, h->tid, 0L, 0L) != 0)
        return rec_say(msg, size, "process %d: ptrace: %s", (int)h->pid, strerror(errno));
    for (;;) {
        int w = rec_wait_timed(h->tid, &status, REC_CALL_TIMEOUT_MS);

        if (w > 0) {
            rec_hold_abandon(h);
            return rec_say(msg, size,
                           "process %d: the call at %#llx did not return within %d s; its "
                           "thread is put back where it was (it may have stopped holding a "
                           "lock the call needs)",
                           (int)h->pid, (unsigned long long)fn, REC_CALL_TIMEOUT_MS / 1000);
        }
        if (w < 0)
            return rec_say(msg, size, "process %d: waitpid: %s", (int)h->pid, strerror(errno));
        if (!WIFSTOPPED(status))
            return rec_gone(h, status, msg, size);
        if (status >> 16) { /* a group stop or our interrupt: go on */
            ptrace(PTRACE_CONT, h->tid, 0L, 0L);
            continue;
        }
        if (WSTOPSIG(status) == SIGSEGV) {
            if (rec_cpu_get(h->tid, &r) == 0 && rec_cpu_pc(&r) == 0)
                break;
            return rec_say(msg, size,
                           "process %d: the call at %#llx crashed (SIGSEGV at %#llx); its "
                           "thread is put back where it was, but the process may be damaged",
                           (int)h->pid, (unsigned long long)fn, (unsigned long long)rec_cpu_pc(&r));
        }
        /* The program's own signal: its handler runs on top of our call. */
        ptrace(PTRACE_CONT, h->tid, 0L, (long)WSTOPSIG(status));
    }
    *ret = h->is32 ? (uint64_t)(int64_t)(int32_t)rec_cpu_result(&r) : rec_cpu_result(&r);
    return 0;
}

/* A string in the process (dlerror's), into buf. */
static void rec_hold_read(struct rec_hold *h, uint64_t addr, char *buf, size_t size)
{
    ssize_t n = addr ? pread(h->memfd, buf, size - 1, (off_t)addr) : -1;

    buf[n > 0 ? (size_t)n : 0] = 0;
}
static const char *rec_lib_suffix(const char *lib)
{
    const char *slash = strrchr(lib, '/');

    return slash ? slash : lib;
}
#endif /* REC_CPU_ATTACH */

#if !defined(REC_CPU_ATTACH)
int rec_attach_start(pid_t pid, const char *lib, const char *settings, char *msg, size_t size)
{
    (void)pid, (void)lib, (void)settings;
    return rec_say(msg, size,
                   "record -p: attaching to a running process is built for x86-64 and "
                   "AArch64 only (docs/platforms.md)");
}

int rec_attach_stop(pid_t pid, const char *lib, long *nr_restored, char *msg, size_t size)
{
    (void)pid, (void)lib, (void)nr_restored;
    return rec_say(msg, size, "record -p: attaching is built for x86-64 and AArch64 only");
}
#else
int rec_attach_start(pid_t pid, const char *lib, const char *settings, char *msg, size_t size)
{
    char libc[4200], path[4200], err[512];
    uint64_t dlopen_fn, dlerror_fn, start_fn, a_lib, a_set, handle = 0, rc = 0;
    struct rec_hold *h = malloc(sizeof(*h));
    int ret = -1;

    if (!h)
        return rec_say(msg, size, "out of memory");
    dlopen_fn = rec_attach_symbol(pid, "/libc.so.6", "dlopen", libc, sizeof(libc));
    if (!dlopen_fn)
        dlopen_fn = rec_attach_symbol(pid, "/libc.so.6", "__libc_dlopen_mode", libc, sizeof(libc));
    dlerror_fn = rec_attach_symbol(pid, "/libc.so.6", "dlerror", libc, sizeof(libc));
    if (!dlopen_fn) {
        free(h);
        return rec_say(msg, size, "process %d: no dlopen in its libc (%s)", (int)pid, libc);
    }
    {
        int cls = 0, dynamic = 0;

        /* Every thread's filters first: a call of ours they forbid would
         * be the program's death. */
        if (rec_exe_class(pid, &cls, &dynamic) == 0 &&
            rec_seccomp_check(pid, rec_pick_thread(pid), cls == ELFCLASS32, msg, size) != 0) {
            free(h);
            return -1;
        }
    }
    if (rec_hold_take(h, pid, msg, size) != 0) {
        free(h);
        return -1;
    }
    a_lib = rec_hold_push(h, lib);
    a_set = rec_hold_push(h, settings);
    if (!a_lib || !a_set) {
        rec_say(msg, size, "process %d: cannot write to its stack: %s", (int)pid, strerror(errno));
        goto out;
    }
    /* Loaded by an earlier attach: no dlopen again, whose own heap calls
     * a recorder attached meanwhile would take for the program's. */
    start_fn =
        rec_attach_symbol(pid, rec_lib_suffix(lib), "memscribe_attach_start", path, sizeof(path));
    if (!start_fn) {
        if (rec_hold_call(h, dlopen_fn, a_lib, RTLD_NOW, &handle, msg, size) != 0)
            goto out;
        if (!handle) {
            uint64_t e = 0;

            err[0] = 0;
            if (dlerror_fn && rec_hold_call(h, dlerror_fn, 0, 0, &e, msg, size) == 0)
                rec_hold_read(h, e, err, sizeof(err));
            rec_say(msg, size, "process %d: cannot load %s: %s", (int)pid, lib,
                    err[0] ? err : "dlopen failed");
            goto out;
        }
        start_fn = rec_attach_symbol(pid, rec_lib_suffix(lib), "memscribe_attach_start", path,
                                     sizeof(path));
    }
    if (!start_fn) {
        rec_say(msg, size, "process %d: %s is loaded but memscribe_attach_start is not found",
                (int)pid, lib);
        goto out;
    }
    if (rec_hold_call(h, start_fn, a_set, 0, &rc, msg, size) != 0)
        goto out;
    if ((int)rc == -EBUSY)
        rec_say(msg, size, "process %d is being recorded already by another 'record -p'", (int)pid);
    else if ((int)rc == -ENOTSUP)
        rec_say(msg, size,
                "process %d was attached to before with another --sample rate; the collector "
                "loaded there keeps that one: attach with it",
                (int)pid);
    else if ((int)rc != 0)
        rec_say(msg, size,
                "process %d: the collector could not start there (%s): it cannot reach this "
                "recorder or read the program's modules",
                (int)pid, strerror(-(int)rc));
    else
        ret = 0;
out:
    rec_hold_release(h);
    free(h);
    return ret;
}

int rec_attach_stop(pid_t pid, const char *lib, long *nr_restored, char *msg, size_t size)
{
    char path[4200];
    uint64_t stop_fn =
        rec_attach_symbol(pid, rec_lib_suffix(lib), "memscribe_attach_stop", path, sizeof(path));
    uint64_t rc = 0;
    struct rec_hold *h;
    int ret;

    if (!stop_fn)
        return rec_say(msg, size, "process %d: the collector is not loaded there", (int)pid);
    h = malloc(sizeof(*h));
    if (!h)
        return rec_say(msg, size, "out of memory");
    if (rec_hold_take(h, pid, msg, size) != 0) {
        free(h);
        return -1;
    }
    ret = rec_hold_call(h, stop_fn, 0, 0, &rc, msg, size);
    rec_hold_release(h);
    free(h);
    *nr_restored = (long)rc;
    return ret;
}
#endif
