/* SPDX-License-Identifier: MIT */
/* Run one command and measure it: wall time, and CPU time of its whole process tree.
 *
 * Usage: bench_runner [--as-limit BYTES] [--timeout SECONDS] [--stdout FILE]
 *                     [--stderr FILE] [--self] -- CMD ARGS...
 * Prints one line to stdout:
 *   wall_ns=N user_ns=N sys_ns=N cpu_ns=N maxrss_kb=N [self_...] status=exit:N|signal:N|timeout:S
 *
 * With --self, also the figures of the command's own process (not its
 * descendants), as it was when it exited: self_user_ns, self_sys_ns,
 * self_minflt (minor page faults) and self_hwm_kb (its peak RSS). For
 * `memscribe record -- PROGRAM` that is the recorder alone. The runner
 * ptraces the command (PTRACE_O_TRACEEXIT) to read /proc/PID/stat and
 * status at its exit stop, while its memory is still there; the figures
 * of a zombie would lack the peak RSS, and getrusage's ru_maxrss mixes in
 * its children's. Its children are not traced.
 *
 * Tracers start helper processes (heaptrack_interpret and its compressor, the
 * memscribe recorder) that may outlive the process that started them. The
 * runner makes itself a child subreaper (prctl(2) PR_SET_CHILD_SUBREAPER), so
 * every descendant that is orphaned is reparented to it, and it waits until no
 * descendant is left: wall time ends when the last one exits, and
 * getrusage(RUSAGE_CHILDREN) then holds the CPU time of all of them.
 *
 * The command runs in its own process group; after --timeout seconds the whole
 * group is killed, so a tracer that hangs cannot stall the benchmark. Being in
 * its own group, it does not get the terminal's ^C: SIGINT, SIGTERM or SIGHUP
 * to the runner kill the group too, and the runner exits with 128 + signal. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct runner_opts {
    const char *stdout_path;
    const char *stderr_path;
    uint64_t as_limit;  /* 0: no limit */
    uint64_t timeout_s; /* 0: none */
    int self;           /* --self: report the command's own process too */
    char **argv;
};

static int64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t tv_ns(struct timeval tv)
{
    return (int64_t)tv.tv_sec * 1000000000 + (int64_t)tv.tv_usec * 1000;
}

static void usage(void)
{
    fprintf(stderr, "usage: bench_runner [--as-limit BYTES] [--timeout SECONDS] [--stdout FILE] "
                    "[--stderr FILE] [--self] -- CMD ARGS...\n");
    exit(2);
}

static uint64_t parse_u64(const char *opt, const char *s)
{
    char *end;
    unsigned long long v;

    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno || end == s || *end || v == 0) {
        fprintf(stderr, "bench_runner: %s: not a positive integer: '%s'\n", opt, s);
        exit(2);
    }
    return v;
}

static void parse_args(int argc, char **argv, struct runner_opts *o)
{
    int i;

    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--")) {
            i++;
            break;
        }
        if (!strcmp(argv[i], "--self")) {
            o->self = 1;
            continue;
        }
        if (i + 1 >= argc)
            usage();
        if (!strcmp(argv[i], "--stdout")) {
            o->stdout_path = argv[++i];
        } else if (!strcmp(argv[i], "--stderr")) {
            o->stderr_path = argv[++i];
        } else if (!strcmp(argv[i], "--as-limit")) {
            o->as_limit = parse_u64(argv[i], argv[i + 1]);
            i++;
        } else if (!strcmp(argv[i], "--timeout")) {
            o->timeout_s = parse_u64(argv[i], argv[i + 1]);
            i++;
        } else {
            usage();
        }
    }
    if (i >= argc)
        usage();
    o->argv = argv + i;
}

/* In the child: redirect, limit, exec. Exit code 127 if any step fails. */
static void child_exec(const struct runner_opts *o)
{
    const char *paths[2] = {o->stdout_path, o->stderr_path};
    int fd, n;

    for (n = 0; n < 2; n++) {
        if (!paths[n])
            continue;
        fd = open(paths[n], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0 || dup2(fd, n + 1) < 0) {
            fprintf(stderr, "bench_runner: %s: %s\n", paths[n], strerror(errno));
            _exit(127);
        }
    }
    if (o->as_limit) {
        struct rlimit rl = {.rlim_cur = o->as_limit, .rlim_max = o->as_limit};

        if (setrlimit(RLIMIT_AS, &rl) < 0) {
            fprintf(stderr, "bench_runner: setrlimit(RLIMIT_AS): %s\n", strerror(errno));
            _exit(127);
        }
    }
    if (o->self && ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0) {
        fprintf(stderr, "bench_runner: ptrace(PTRACE_TRACEME): %s\n", strerror(errno));
        _exit(127);
    }
    execvp(o->argv[0], o->argv);
    fprintf(stderr, "bench_runner: %s: %s\n", o->argv[0], strerror(errno));
    _exit(127);
}

/* The command's own figures (--self), read at its exit stop. */
struct self_figures {
    int seen;
    int64_t user_ns, sys_ns;
    uint64_t minflt, hwm_kb;
};

static void self_read(pid_t pid, struct self_figures *f)
{
    char path[64], buf[4096];
    unsigned long minflt, utime, stime;
    long tick = sysconf(_SC_CLK_TCK);
    const char *p;
    FILE *fp;
    size_t n;

    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    if (!(fp = fopen(path, "r")))
        return;
    n = fread(buf, 1, sizeof(buf) - 1, fp);
    fclose(fp);
    buf[n] = 0;
    /* Fields after the command name, which may hold spaces and ')'. */
    p = strrchr(buf, ')');
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %lu %*u %*u %*u %lu %lu", &minflt, &utime,
                     &stime) != 3)
        return;
    f->user_ns = (int64_t)utime * (1000000000 / tick);
    f->sys_ns = (int64_t)stime * (1000000000 / tick);
    f->minflt = minflt;
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    if ((fp = fopen(path, "r"))) {
        while (fgets(buf, sizeof(buf), fp))
            if (sscanf(buf, "VmHWM: %" SCNu64, &f->hwm_kb) == 1)
                break;
        fclose(fp);
    }
    f->seen = 1;
}

/* A ptrace stop of the command (--self): the stop after exec sets the
 * options, the exit stop reads its figures, a signal is passed on. */
static void self_stopped(pid_t child, int st, struct self_figures *f)
{
    int sig = WSTOPSIG(st);

    if (st >> 8 == (SIGTRAP | PTRACE_EVENT_EXIT << 8)) {
        self_read(child, f);
        sig = 0;
    } else if (sig == SIGTRAP) {
        ptrace(PTRACE_SETOPTIONS, child, NULL,
               (void *)(long)(PTRACE_O_TRACEEXIT | PTRACE_O_EXITKILL));
        sig = 0;
    }
    ptrace(PTRACE_CONT, child, NULL, (void *)(long)sig);
}

/* Reap every process that has exited, without blocking. Returns 1 once no
 * descendant is left, 0 otherwise. */
static int reap_all(pid_t child, int *child_st, struct self_figures *f)
{
    pid_t pid;
    int st;

    for (;;) {
        pid = waitpid(-1, &st, WNOHANG);
        if (pid > 0) {
            if (pid == child && WIFSTOPPED(st))
                self_stopped(child, st, f);
            else if (pid == child)
                *child_st = st;
            continue;
        }
        if (pid == 0)
            return 0;
        if (errno == EINTR)
            continue;
        if (errno == ECHILD)
            return 1;
        fprintf(stderr, "bench_runner: waitpid: %s\n", strerror(errno));
        exit(1);
    }
}

int main(int argc, char **argv)
{
    struct runner_opts o = {0};
    struct rusage before, after;
    struct self_figures self = {0};
    int64_t t0, t1, deadline = 0, user_ns, sys_ns;
    sigset_t waited, old;
    pid_t child;
    int child_st = 0, timed_out = 0, stop_sig = 0, sig;

    parse_args(argc, argv, &o);
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0) {
        fprintf(stderr, "bench_runner: prctl(PR_SET_CHILD_SUBREAPER): %s\n", strerror(errno));
        return 1;
    }
    /* These stay blocked and are taken with sigtimedwait(2): a wait with a
     * deadline and no race between checking and sleeping. */
    sigemptyset(&waited);
    sigaddset(&waited, SIGCHLD);
    sigaddset(&waited, SIGINT);
    sigaddset(&waited, SIGTERM);
    sigaddset(&waited, SIGHUP);
    sigprocmask(SIG_BLOCK, &waited, &old);
    fflush(stdout);
    getrusage(RUSAGE_CHILDREN, &before);
    t0 = now_ns();
    if (o.timeout_s)
        deadline = t0 + (int64_t)o.timeout_s * 1000000000;
    child = fork();
    if (child < 0) {
        fprintf(stderr, "bench_runner: fork: %s\n", strerror(errno));
        return 1;
    }
    if (child == 0) {
        sigprocmask(SIG_SETMASK, &old, NULL);
        setpgid(0, 0);
        child_exec(&o);
    }
    /* Also here: the group must exist before a timeout can kill it. */
    setpgid(child, child);
    /* Reap the command and every orphan it leaves behind, until none is left. */
    while (!reap_all(child, &child_st, &self)) {
        struct timespec ts = {.tv_sec = 1};
        int64_t left;

        if (deadline && !timed_out) {
            left = deadline - now_ns();
            if (left <= 0) {
                timed_out = 1;
                kill(-child, SIGKILL);
                continue;
            }
            if (left < 1000000000) {
                ts.tv_sec = 0;
                ts.tv_nsec = left;
            }
        }
        sig = sigtimedwait(&waited, NULL, &ts);
        if (sig < 0 && errno != EAGAIN && errno != EINTR) {
            fprintf(stderr, "bench_runner: sigtimedwait: %s\n", strerror(errno));
            return 1;
        }
        if (sig > 0 && sig != SIGCHLD && !stop_sig) {
            stop_sig = sig;
            kill(-child, SIGKILL);
        }
    }
    if (stop_sig) {
        fprintf(stderr, "bench_runner: stopped by signal %d; the command was killed\n", stop_sig);
        return 128 + stop_sig;
    }
    t1 = now_ns();
    getrusage(RUSAGE_CHILDREN, &after);
    user_ns = tv_ns(after.ru_utime) - tv_ns(before.ru_utime);
    sys_ns = tv_ns(after.ru_stime) - tv_ns(before.ru_stime);
    printf("wall_ns=%" PRId64 " user_ns=%" PRId64 " sys_ns=%" PRId64 " cpu_ns=%" PRId64
           " maxrss_kb=%ld ",
           t1 - t0, user_ns, sys_ns, user_ns + sys_ns, after.ru_maxrss);
    if (self.seen)
        printf("self_user_ns=%" PRId64 " self_sys_ns=%" PRId64 " self_minflt=%" PRIu64
               " self_hwm_kb=%" PRIu64 " ",
               self.user_ns, self.sys_ns, self.minflt, self.hwm_kb);
    printf("status=");
    if (timed_out)
        printf("timeout:%" PRIu64 "\n", o.timeout_s);
    else if (WIFSIGNALED(child_st))
        printf("signal:%d\n", WTERMSIG(child_st));
    else
        printf("exit:%d\n", WEXITSTATUS(child_st));
    return 0;
}
