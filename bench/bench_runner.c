/* SPDX-License-Identifier: MIT */
/* Run one command and measure it: wall time, and CPU time of its whole process tree.
 *
 * Usage: bench_runner [--as-limit BYTES] [--stdout FILE] [--stderr FILE] -- CMD ARGS...
 * Prints one line to stdout:
 *   wall_ns=N user_ns=N sys_ns=N cpu_ns=N maxrss_kb=N status=exit:N|signal:N
 *
 * Tracers start helper processes (heaptrack_interpret and its compressor, the
 * memscribe recorder) that may outlive the process that started them. The
 * runner makes itself a child subreaper (prctl(2) PR_SET_CHILD_SUBREAPER), so
 * every descendant that is orphaned is reparented to it, and it waits until no
 * descendant is left: wall time ends when the last one exits, and
 * getrusage(RUSAGE_CHILDREN) then holds the CPU time of all of them. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
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
    uint64_t as_limit; /* 0: no limit */
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
    fprintf(stderr, "usage: bench_runner [--as-limit BYTES] [--stdout FILE] [--stderr FILE] "
                    "-- CMD ARGS...\n");
    exit(2);
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
            char *end;

            errno = 0;
            o->as_limit = strtoull(argv[++i], &end, 10);
            if (errno || *end || o->as_limit == 0) {
                fprintf(stderr, "bench_runner: --as-limit: not a positive byte count: '%s'\n",
                        argv[i]);
                exit(2);
            }
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

int main(int argc, char **argv)
{
    struct runner_opts o = {0};
    struct rusage before, after;
    int64_t t0, t1, user_ns, sys_ns;
    pid_t child, pid;
    int st, child_st = 0;

    parse_args(argc, argv, &o);
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0) {
        fprintf(stderr, "bench_runner: prctl(PR_SET_CHILD_SUBREAPER): %s\n", strerror(errno));
        return 1;
    }
    fflush(stdout);
    getrusage(RUSAGE_CHILDREN, &before);
    t0 = now_ns();
    child = fork();
    if (child < 0) {
        fprintf(stderr, "bench_runner: fork: %s\n", strerror(errno));
        return 1;
    }
    if (child == 0)
        child_exec(&o);
    /* Reap the command and every orphan it leaves behind, until none is left. */
    for (;;) {
        pid = waitpid(-1, &st, 0);
        if (pid < 0) {
            if (errno == EINTR)
                continue;
            if (errno == ECHILD)
                break;
            fprintf(stderr, "bench_runner: waitpid: %s\n", strerror(errno));
            return 1;
        }
        if (pid == child)
            child_st = st;
    }
    t1 = now_ns();
    getrusage(RUSAGE_CHILDREN, &after);
    user_ns = tv_ns(after.ru_utime) - tv_ns(before.ru_utime);
    sys_ns = tv_ns(after.ru_stime) - tv_ns(before.ru_stime);
    printf("wall_ns=%" PRId64 " user_ns=%" PRId64 " sys_ns=%" PRId64 " cpu_ns=%" PRId64
           " maxrss_kb=%ld status=%s:%d\n",
           t1 - t0, user_ns, sys_ns, user_ns + sys_ns, after.ru_maxrss,
           WIFSIGNALED(child_st) ? "signal" : "exit",
           WIFSIGNALED(child_st) ? WTERMSIG(child_st) : WEXITSTATUS(child_st));
    return 0;
}
