/* SPDX-License-Identifier: MIT */
/* A program that installs a seccomp filter, traced from its start or
 * attached to (tests/e2e/record_seccomp.sh, record_attach_seccomp.sh).
 * Usage: col_seccomp DIR ROUNDS FILTER [NAME...]
 *
 * FILTER, installed with prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER) on
 * every thread (SECCOMP_FILTER_FLAG_TSYNC through the seccomp system call
 * when the filter is "tsync-..."):
 *   allow        the system calls the program makes from then on, and
 *                those named: anything else kills the process
 *   kill         the calls named kill the process, anything else goes
 *   errno        the calls named fail with EPERM
 *   thread-kill  as kill, in the worker thread only
 *   strict       a second thread enters seccomp's strict mode and waits
 *                in read(2); no filter
 *   none         no filter
 * Names it does not know on its ABI are left out (an i386 name in an
 * x86-64 program).
 *
 * Before the filter it starts a worker thread, which makes no heap call
 * until round 1 (its first event, with the filter in place, needs a ring
 * segment of its own). Then it makes DIR/ready.0 and for each round N
 * waits until DIR/go.N exists, mallocs and frees 2001 bytes 10 times,
 * lets the worker malloc and free 2002 bytes 10 times, forks a child that
 * mallocs and frees 2003 bytes 10 times and _exits, waits for it, and
 * makes DIR/done.N. With COL_SECCOMP_EXEC=PATH in its environment the
 * child execs PATH DIR 0 none instead (this program, for one: it prints
 * "start" and "ok"). Its system calls after the filter are those of
 * col_seccomp_own (one arena: no thread arena's mmap). It prints "ok" at
 * the end and exits 0; 1 if its filter was refused or a child failed, 2
 * on usage. */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <malloc.h>
#include <pthread.h>
#include <semaphore.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const struct {
    const char *name;
    long nr;
} col_seccomp_names[] = {
/* The program's own, after its filter; first those x86 has beside their
 * *at and ppoll forms, which AArch64 has alone. */
#ifdef SYS_access
    {"access", SYS_access},
#endif
#ifdef SYS_poll
    {"poll", SYS_poll},
#endif
#ifdef SYS_mkdir
    {"mkdir", SYS_mkdir},
#endif
#ifndef SYS_access
    {"faccessat", SYS_faccessat},
    {"ppoll", SYS_ppoll},
    {"mkdirat", SYS_mkdirat},
#endif
    {"write", SYS_write},
    {"exit_group", SYS_exit_group},
    {"exit", SYS_exit},
    {"brk", SYS_brk},
    {"futex", SYS_futex},
    {"clone", SYS_clone},
    {"wait4", SYS_wait4},
    {"set_robust_list", SYS_set_robust_list},
    {"read", SYS_read},
    /* What a collector may need. */
    {"openat", SYS_openat},
    {"newfstatat", SYS_newfstatat},
    {"statx", SYS_statx},
    {"mmap", SYS_mmap},
    {"mprotect", SYS_mprotect},
    {"close", SYS_close},
    {"munmap", SYS_munmap},
    {"clock_nanosleep", SYS_clock_nanosleep},
    {"madvise", SYS_madvise},
    {"getrandom", SYS_getrandom},
#ifdef SYS_readlink /* x86 only, as access above */
    {"readlink", SYS_readlink},
#else
    {"readlinkat", SYS_readlinkat},
#endif
    {"gettid", SYS_gettid},
    {"getpid", SYS_getpid},
    {"prctl", SYS_prctl},
    {"tgkill", SYS_tgkill},
    {"prlimit64", SYS_prlimit64},
    {"memfd_create", SYS_memfd_create},
    {"ftruncate", SYS_ftruncate},
    {"fcntl", SYS_fcntl},
    {"getppid", SYS_getppid},
    {"socket", SYS_socket},
    {"connect", SYS_connect},
    {"sendmsg", SYS_sendmsg},
    {"kill", SYS_kill},
    {"sched_yield", SYS_sched_yield},
    {"getcwd", SYS_getcwd},
    {"clock_gettime", SYS_clock_gettime},
    {"rt_sigaction", SYS_rt_sigaction},
    {"rt_sigprocmask", SYS_rt_sigprocmask},
    {"sigaltstack", SYS_sigaltstack},
    {"process_vm_readv", SYS_process_vm_readv},
    {"process_vm_writev", SYS_process_vm_writev},
    {"rt_sigreturn", SYS_rt_sigreturn},
    {"restart_syscall", SYS_restart_syscall},
    {"uname", SYS_uname},
};
/* The program's own calls after its filter: x86's access and mkdir are
 * AArch64's faccessat and mkdirat. */
#ifdef SYS_access
#define COL_OWN_AT "access", "mkdir"
#else
#define COL_OWN_AT "faccessat", "mkdirat"
#endif
static const char *const col_seccomp_own[] = {
    COL_OWN_AT, "clock_nanosleep", "write",           "exit_group", "exit", "brk",
    "futex",    "clone",           "set_robust_list", "wait4",      "read",
};

#if defined(__x86_64__)
#define COL_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define COL_ARCH AUDIT_ARCH_AARCH64
#else
#define COL_ARCH AUDIT_ARCH_I386
#endif

static long col_nr(const char *name)
{
    for (size_t i = 0; i < sizeof(col_seccomp_names) / sizeof(col_seccomp_names[0]); i++)
        if (!strcmp(col_seccomp_names[i].name, name))
            return col_seccomp_names[i].nr;
    return -1;
}

static struct sock_filter col_prog[256];
static struct sock_fprog col_fprog = {0, col_prog};

/* nr == each of names[0..n) -> hit, anything else -> miss; other ABIs die. */
static void col_build(const char *const *names, int n, uint32_t hit, uint32_t miss)
{
    unsigned short len = 0;

    col_prog[len++] =
        (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
    col_prog[len++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, COL_ARCH, 1, 0);
    col_prog[len++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
    col_prog[len++] =
        (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
    for (int i = 0; i < n && len < 250; i++) {
        long nr = col_nr(names[i]);

        if (nr < 0)
            continue;
        col_prog[len++] =
            (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)nr, 0, 1);
        col_prog[len++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, hit);
    }
    col_prog[len++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, miss);
    col_fprog.len = len;
}

static int col_install(int tsync)
{
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return -1;
    if (tsync)
        return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC,
                            &col_fprog);
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &col_fprog, 0, 0);
}

static const char *dir;
static int rounds, worker_filter;
static sem_t to_worker, to_main, worker_ready;
static int strict_ready[2], strict_block[2];

static void churn(size_t size)
{
    for (int i = 0; i < 10; i++) {
        char *volatile p = malloc(size);

        p[0] = 1;
        free(p);
    }
}

static void *worker(void *arg)
{
    (void)arg;
    if (worker_filter && col_install(0) != 0)
        exit(1);
    sem_post(&worker_ready);
    for (int r = 1; r <= rounds; r++) {
        sem_wait(&to_worker);
        churn(2002);
        sem_post(&to_main);
    }
    for (;;) /* no thread exit (its madvise): the process's exit ends it */
        sem_wait(&to_worker);
    return NULL;
}

static void *strict(void *arg)
{
    char c;

    (void)arg;
    syscall(SYS_seccomp, SECCOMP_SET_MODE_STRICT, 0, NULL);
    if (write(strict_ready[1], "s", 1) != 1 || read(strict_block[0], &c, 1) < 0)
        syscall(SYS_exit, 1);
    syscall(SYS_exit, 0);
    return NULL;
}

/* DIR/name.round as a directory: mkdir, a call no collector makes. */
static void mark(const char *name, int round)
{
    char path[4096];

    snprintf(path, sizeof(path), "%s/%s.%d", dir, name, round);
    if (mkdir(path, 0755) != 0 && errno != EEXIST)
        _exit(3);
}

static void wait_for(const char *name, int round)
{
    char path[4096];

    snprintf(path, sizeof(path), "%s/%s.%d", dir, name, round);
    /* A relative sleep: stopped in it, a thread resumes it with
     * restart_syscall on both CPUs (poll would on x86 alone: AArch64's is
     * ppoll, which restarts plainly). */
    while (access(path, F_OK) != 0)
        nanosleep(&(struct timespec){0, 2000000}, NULL);
}

int main(int argc, char **argv)
{
    const char *filter, *exec_path = getenv("COL_SECCOMP_EXEC");
    pthread_t th, st;
    int tsync = 0;

    if (argc < 4)
        return 2;
    dir = argv[1];
    rounds = atoi(argv[2]);
    filter = argv[3];
    if (!strncmp(filter, "tsync-", 6)) {
        tsync = 1;
        filter += 6;
    }
    mallopt(M_ARENA_MAX, 1); /* the worker's heap is main's: no arena of its own to map */
    printf("start\n");       /* stdout's buffer, before the filter */
    fflush(stdout);
    sem_init(&to_worker, 0, 0);
    sem_init(&to_main, 0, 0);
    sem_init(&worker_ready, 0, 0);
    if (!strcmp(filter, "allow")) {
        const char *names[128];
        int n = 0;

        for (size_t i = 0; i < sizeof(col_seccomp_own) / sizeof(col_seccomp_own[0]); i++)
            names[n++] = col_seccomp_own[i];
        for (int i = 4; i < argc && n < 128; i++)
            names[n++] = argv[i];
        col_build(names, n, SECCOMP_RET_ALLOW, SECCOMP_RET_KILL_PROCESS);
    } else if (!strcmp(filter, "kill") || !strcmp(filter, "thread-kill")) {
        col_build((const char *const *)argv + 4, argc - 4, SECCOMP_RET_KILL_PROCESS,
                  SECCOMP_RET_ALLOW);
    } else if (!strcmp(filter, "errno")) {
        col_build((const char *const *)argv + 4, argc - 4, SECCOMP_RET_ERRNO | EPERM,
                  SECCOMP_RET_ALLOW);
    } else if (strcmp(filter, "strict") && strcmp(filter, "none")) {
        return 2;
    }
    worker_filter = !strcmp(filter, "thread-kill");
    if (pthread_create(&th, NULL, worker, NULL) != 0)
        return 1;
    sem_wait(&worker_ready);
    if (!strcmp(filter, "strict")) {
        char c;

        /* It says it is in strict mode on one pipe, then waits on the
         * other for a byte that never comes. */
        if (pipe(strict_ready) != 0 || pipe(strict_block) != 0 ||
            pthread_create(&st, NULL, strict, NULL) != 0 || read(strict_ready[0], &c, 1) != 1)
            return 1;
    }
    if (col_fprog.len && !worker_filter && col_install(tsync) != 0) {
        perror("seccomp");
        return 1;
    }
    mark("ready", 0);
    for (int r = 1; r <= rounds; r++) {
        pid_t child;
        int status;

        wait_for("go", r);
        churn(2001);
        sem_post(&to_worker);
        sem_wait(&to_main);
        child = fork();
        if (child == 0 && exec_path) {
            execl(exec_path, "col_seccomp", dir, "0", "none", (char *)NULL);
            _exit(1);
        }
        if (child == 0) {
            churn(2003);
            _exit(0);
        }
        if (child < 0 || waitpid(child, &status, 0) != child || status != 0)
            return 1;
        mark("done", r);
    }
    printf("ok\n");
    fflush(stdout);
    return 0;
}
