/* SPDX-License-Identifier: MIT */
/* No wrapper (docs/record-programs.md, "Without memscribe record"): a program
 * started with LD_PRELOAD=libmemscribe.so and MEMSCRIBE_OUTPUT=FILE but no
 * recorder in its environment starts its own, `memscribe record --serve`,
 * as a process of its own (a grandchild in a session of its own, so the
 * program never waits for it, never gets its SIGCHLD and a crash of the
 * program loses nothing). The program binds the socket and passes it on,
 * so its hellos queue there before the recorder runs; it waits only until
 * the recorder says it has created FILE. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collector/col_internal.h"

#define COL_SELFREC_LFD 3 /* the listening socket, in the recorder */
#define COL_SELFREC_RFD 4 /* where the recorder says "ok" or why not */

/* Everything the recorder's exec needs, made before the fork: the child
 * of a multi-threaded program may only make system calls. */
static char col_rec_path[PATH_MAX];
static char col_rec_out[PATH_MAX];
static char col_rec_pid[24], col_rec_depth[32];
static char col_rec_env_sock[160], col_rec_env_secret[64], col_rec_env_clock[40];
static char col_rec_env_sample[48]; /* the program's MEMSCRIBE_SAMPLE: the trace must say so */
static char col_rec_env_reach[24];  /* the program's MEMSCRIBE_REACH: the scan at exit */
static char col_rec_env_agg[64];    /* the program's MEMSCRIBE_AGGREGATE: an aggregated trace */
/* The program's MEMSCRIBE_METRICS, _TOKEN_FILE and _LABELS: the recorder's
 * metrics server (docs/metrics.md); "NAME=" when unset. */
static const char *const col_rec_metrics_names[] = {FMT_SHM_ENV_METRICS, FMT_SHM_ENV_METRICS_TOKEN,
                                                    FMT_SHM_ENV_METRICS_LABELS};
static char col_rec_env_metrics[3][PATH_MAX + 40];

/* One line on the program's stderr: the user asked for a trace and gets
 * none. The only thing the collector ever writes there. MEMSCRIBE_OUTPUT
 * is emptied, so the processes the program starts do not try (and say so)
 * again, each of them. */
static void col_selfrec_fail(const char *what, const char *detail)
{
    char buf[PATH_MAX + 256];
    int n = snprintf(buf, sizeof(buf), "memscribe: %s%s%s; %s runs untraced\n", what,
                     detail && *detail ? ": " : "", detail ? detail : "",
                     program_invocation_short_name);

    if (n > 0)
        (void)!write(2, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
    setenv("MEMSCRIBE_OUTPUT", "", 1);
}

/* MEMSCRIBE_RECORDER, else the memscribe next to the collector:
 * <prefix>/lib/memscribe/[i386/]libmemscribe.so -> <prefix>/bin/memscribe. */
static int col_selfrec_find(void)
{
    static const char *const up[] = {"/../../bin/memscribe", "/../../../bin/memscribe"};
    const char *env = getenv("MEMSCRIBE_RECORDER");
    char lib[PATH_MAX];
    Dl_info info;
    char *slash;

    if (env && *env) {
        if (strlen(env) >= sizeof(col_rec_path))
            return -1;
        strcpy(col_rec_path, env);
        return access(col_rec_path, X_OK);
    }
    if (!dladdr((void *)col_selfrec_find, &info) || !info.dli_fname ||
        !realpath(info.dli_fname, lib) || !(slash = strrchr(lib, '/')))
        return -1;
    *slash = 0;
    for (unsigned i = 0; i < sizeof(up) / sizeof(up[0]); i++)
        if ((size_t)snprintf(col_rec_path, sizeof(col_rec_path), "%s%s", lib, up[i]) <
                sizeof(col_rec_path) &&
            access(col_rec_path, X_OK) == 0)
            return 0;
    strcpy(col_rec_path, lib);
    return -1;
}

/* FILE with each "%p" replaced by our pid. */
static int col_selfrec_output(const char *out, pid_t pid)
{
    size_t n = 0;

    for (const char *s = out; *s; s++) {
        int w;

        if (s[0] == '%' && s[1] == 'p') {
            w = snprintf(col_rec_out + n, sizeof(col_rec_out) - n, "%d", (int)pid);
            s++;
        } else {
            w = snprintf(col_rec_out + n, sizeof(col_rec_out) - n, "%c", *s);
        }
        if (w < 0 || (size_t)w >= sizeof(col_rec_out) - n)
            return -1;
        n += (size_t)w;
    }
    return 0;
}

/* The grandchild: the recorder, on fds 3 (socket) and 4 (its word),
 * /dev/null on 0-2, nothing else of the program's. System calls only. */
static void col_selfrec_exec(int lfd, int wfd)
{
    char *const argv[] = {col_rec_path, "record",      "--serve",  "--pid",     col_rec_pid,
                          "--depth",    col_rec_depth, "--output", col_rec_out, NULL};
    char *const envp[] = {col_rec_env_sock,       col_rec_env_secret,
                          col_rec_env_clock,      col_rec_env_sample,
                          col_rec_env_reach,      col_rec_env_agg,
                          col_rec_env_metrics[0], col_rec_env_metrics[1],
                          col_rec_env_metrics[2], NULL};
    static const char no_exec[] = "cannot run the recorder";
    const char *why;
    sigset_t none;
    int null, l2, w2, e;

    syscall(SYS_setsid);
    sigemptyset(&none);
    syscall(SYS_rt_sigprocmask, SIG_SETMASK, &none, NULL, _NSIG / 8);
    l2 = (int)syscall(SYS_fcntl, lfd, F_DUPFD_CLOEXEC, 10);
    w2 = (int)syscall(SYS_fcntl, wfd, F_DUPFD_CLOEXEC, 10);
    null = (int)syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDWR | O_CLOEXEC);
    if (l2 < 0 || w2 < 0 || null < 0 || syscall(SYS_dup3, null, 0, 0) < 0 ||
        syscall(SYS_dup3, null, 1, 0) < 0 || syscall(SYS_dup3, null, 2, 0) < 0 ||
        syscall(SYS_dup3, l2, COL_SELFREC_LFD, 0) < 0 ||
        syscall(SYS_dup3, w2, COL_SELFREC_RFD, 0) < 0)
        syscall(SYS_exit_group, 127);
    if (syscall(SYS_close_range, COL_SELFREC_RFD + 1, ~0U, 0) != 0)
        for (int fd = COL_SELFREC_RFD + 1; fd < 4096; fd++)
            syscall(SYS_close, fd);
    syscall(SYS_execve, col_rec_path, argv, envp);
    e = errno;
    why = strerrorname_np(e);
    syscall(SYS_write, COL_SELFREC_RFD, no_exec, sizeof(no_exec) - 1);
    if (why) {
        syscall(SYS_write, COL_SELFREC_RFD, ": ", 2);
        syscall(SYS_write, COL_SELFREC_RFD, why, strlen(why));
    }
    syscall(SYS_exit_group, 127);
}

/* Fork twice without a signal to the program (exit signal 0, reaped here
 * with __WCLONE), and read the recorder's word: "ok", or why not. */
static int col_selfrec_spawn(int lfd, char *word, size_t word_size)
{
    int rp[2], status;
    size_t got = 0;
    long pid;

    if (pipe2(rp, O_CLOEXEC) != 0)
        return -1;
    pid = syscall(SYS_clone, 0L, 0L, 0L, 0L, 0L);
    if (pid == 0) {
        if (syscall(SYS_clone, (long)SIGCHLD, 0L, 0L, 0L, 0L) == 0)
            col_selfrec_exec(lfd, rp[1]);
        syscall(SYS_exit_group, 0);
    }
    close(rp[1]);
    if (pid > 0)
        while (waitpid((pid_t)pid, &status, __WCLONE) < 0 && errno == EINTR)
            ;
    while (pid > 0 && got < word_size - 1) {
        ssize_t n = read(rp[0], word + got, word_size - 1 - got);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    word[got] = 0;
    close(rp[0]);
    return pid > 0 ? 0 : -1;
}

int col_selfrec_start(char *sock_name, size_t sock_size, uint8_t secret[FMT_SHM_SECRET_BYTES])
{
    const char *out = getenv("MEMSCRIBE_OUTPUT"), *clock = getenv(FMT_SHM_ENV_CLOCK);
    const char *depth = getenv(FMT_SHM_ENV_DEPTH);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    char hex[2 * FMT_SHM_SECRET_BYTES + 1], word[512];
    uint64_t nonce;
    pid_t pid = getpid();
    size_t len;
    int lfd, rc;

    if (!out || !*out)
        return -1; /* preloaded with nothing to do: untraced, as always */
    if (col_selfrec_find() != 0) {
        col_selfrec_fail("cannot find the recorder (set MEMSCRIBE_RECORDER)", col_rec_path);
        return -1;
    }
    if (col_selfrec_output(out, pid) != 0) {
        col_selfrec_fail("MEMSCRIBE_OUTPUT is too long", NULL);
        return -1;
    }
    /* A rate that does not parse would record exactly and say nothing. */
    const char *rate = getenv(FMT_SHM_ENV_SAMPLE);
    if (rate && *rate && strcmp(rate, "0") && !col_sample_env_rate()) {
        col_selfrec_fail("MEMSCRIBE_SAMPLE is not a size (524288, 512K)", rate);
        return -1;
    }
    if (syscall(SYS_getrandom, secret, FMT_SHM_SECRET_BYTES, 0) != FMT_SHM_SECRET_BYTES ||
        syscall(SYS_getrandom, &nonce, sizeof(nonce), 0) != (long)sizeof(nonce)) {
        col_selfrec_fail("cannot make the recording's secret", strerrorname_np(errno));
        return -1;
    }
    for (unsigned i = 0; i < FMT_SHM_SECRET_BYTES; i++)
        snprintf(hex + 2 * i, 3, "%02x", secret[i]);
    /* of one length whatever the pid (rec_socket_open) */
    snprintf(sock_name, sock_size, "memscribe-%010d-%016llx", (int)pid, (unsigned long long)nonce);
    len = strlen(sock_name);
    memcpy(sa.sun_path + 1, sock_name, len);
    lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (lfd < 0 ||
        bind(lfd, (struct sockaddr *)&sa,
             (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + len)) != 0 ||
        listen(lfd, SOMAXCONN) != 0) {
        col_selfrec_fail("cannot open the recorder's socket", strerrorname_np(errno));
        if (lfd >= 0)
            close(lfd);
        sock_name[0] = 0;
        return -1;
    }
    snprintf(col_rec_pid, sizeof(col_rec_pid), "%d", (int)pid);
    if (depth && *depth)
        snprintf(col_rec_depth, sizeof(col_rec_depth), "%s", depth);
    else
        snprintf(col_rec_depth, sizeof(col_rec_depth), "%d", FMT_SHM_DEFAULT_DEPTH);
    snprintf(col_rec_env_sock, sizeof(col_rec_env_sock), "%s=%s", FMT_SHM_ENV_SOCKET, sock_name);
    snprintf(col_rec_env_secret, sizeof(col_rec_env_secret), "%s=%s", FMT_SHM_ENV_SECRET, hex);
    snprintf(col_rec_env_clock, sizeof(col_rec_env_clock), "%s=%s", FMT_SHM_ENV_CLOCK,
             clock && !strcmp(clock, "tsc") ? "tsc" : "monotonic");
    /* The collector samples at the rate its MEMSCRIBE_SAMPLE asks for: the
     * recorder writes that rate into the trace. */
    snprintf(col_rec_env_sample, sizeof(col_rec_env_sample), "%s=%llu", FMT_SHM_ENV_SAMPLE,
             (unsigned long long)col_sample_env_rate());
    /* MEMSCRIBE_REACH=1: the recorder answers the scan at exit. */
    snprintf(col_rec_env_reach, sizeof(col_rec_env_reach), "%s=%d", FMT_SHM_ENV_REACH,
             getenv(FMT_SHM_ENV_REACH) && *getenv(FMT_SHM_ENV_REACH) == '1');
    /* MEMSCRIBE_AGGREGATE=PERIOD: the recorder aggregates (it checks the
     * period; one too long to pass is none). */
    snprintf(col_rec_env_agg, sizeof(col_rec_env_agg), "%s=%s", FMT_SHM_ENV_AGGREGATE,
             getenv(FMT_SHM_ENV_AGGREGATE) && strlen(getenv(FMT_SHM_ENV_AGGREGATE)) < 32
                 ? getenv(FMT_SHM_ENV_AGGREGATE)
                 : "");
    /* Passed on whole: a value cut short would be another. */
    for (unsigned i = 0; i < 3; i++) {
        const char *v = getenv(col_rec_metrics_names[i]);
        if ((size_t)snprintf(col_rec_env_metrics[i], sizeof(col_rec_env_metrics[i]), "%s=%s",
                             col_rec_metrics_names[i],
                             v ? v : "") >= sizeof(col_rec_env_metrics[i])) {
            col_selfrec_fail("too long a value", col_rec_metrics_names[i]);
            close(lfd);
            sock_name[0] = 0;
            return -1;
        }
    }
    rc = col_selfrec_spawn(lfd, word, sizeof(word));
    close(lfd);
    word[strcspn(word, "\n")] = 0;
    if (!strncmp(word, "memscribe: ", 11))
        memmove(word, word + 11, strlen(word + 11) + 1);
    if (rc != 0 || strcmp(word, "ok") != 0) {
        col_selfrec_fail(rc != 0 ? "cannot fork the recorder"
                         : *word ? word
                                 : "the recorder died",
                         rc != 0 ? strerrorname_np(errno) : NULL);
        sock_name[0] = 0;
        return -1;
    }
    /* The program's children find this recorder, as under `record`. */
    setenv(FMT_SHM_ENV_SOCKET, sock_name, 1);
    setenv(FMT_SHM_ENV_SECRET, hex, 1);
    setenv(FMT_SHM_ENV_CLOCK, col_rec_env_clock + sizeof(FMT_SHM_ENV_CLOCK), 1);
    return 0;
}
