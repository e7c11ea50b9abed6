/* SPDX-License-Identifier: MIT */
/* Run one command and measure it: wall time, and CPU time of its whole process tree.
 *
 * Usage: bench_runner [--as-limit BYTES] [--timeout SECONDS] [--stdout FILE]
 *                     [--stderr FILE] -- CMD ARGS...
 * Prints one line to stdout:
 *   wall_ns=N user_ns=N sys_ns=N cpu_ns=N maxrss_kb=N status=exit:N|signal:N|timeout:S
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
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct runner_opts {
    const char *stdout_path;
    const char *stderr_path;
    uint64_t as_limit;  /* 0: no limit */
    uint64_t timeout_s; /* 0: none */
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
                    "[--stderr FILE] -- CMD ARGS...\n");
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
    execvp(o->argv[0], o->argv);
    fprintf(stderr, "bench_runner: %s: %s\n", o->argv[0], strerror(errno));
    _exit(127);
}

/* Reap every process that has exited, without blocking. Returns 1 once no
 * descendant is left, 0 otherwise. */
static int reap_all(pid_t child, int *child_st)
{
    pid_t pid;
    int st;

    for (;;) {
        pid = waitpid(-1, &st, WNOHANG);
        if (pid > 0) {
            if (pid == child)
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
    while (!reap_all(child, &child_st)) {
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
           " maxrss_kb=%ld status=",
           t1 - t0, user_ns, sys_ns, user_ns + sys_ns, after.ru_maxrss);
    if (timed_out)
        printf("timeout:%" PRIu64 "\n", o.timeout_s);
    else if (WIFSIGNALED(child_st))
        printf("signal:%d\n", WTERMSIG(child_st));
    else
        printf("exit:%d\n", WEXITSTATUS(child_st));
    return 0;
}
