/* SPDX-License-Identifier: MIT */
/* memscribe record -- prog.exe ARGS: a Windows program (a PE file, known by
 * its header) run under Wine by the Windows launcher, memscribe.exe, which
 * loads the collector into it and appends its records to a file that the
 * recorder's Wine channel (recorder/rec_win.c) writes into the trace while
 * the program runs (docs/windows.md, "memscribe record on Linux"). */
#include "cli/cmd_record_win.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "recorder/rec_internal.h"
#include "recorder/rec_proc.h"
#include "recorder/rec_win.h"
#include "util/util_outfile.h"

extern char **environ;

/* How often the event file is read (the launcher drains every 2 ms). */
#define RW_POLL_MS 5
#define RW_FLUSH_PERIOD_NS (1000 * 1000 * 1000ull)
/* The launcher records at most this many frames (win_rec.h). */
#define RW_MAX_DEPTH 32u

static volatile pid_t rw_forward_pid;

static void rw_on_signal(int sig)
{
    if (rw_forward_pid > 0)
        kill(rw_forward_pid, sig);
}

static int rw_exists(const char *path)
{
    return access(path, X_OK) == 0;
}

/* The wine loader for machine: MEMSCRIBE_WINE, else Debian's. */
static const char *rw_wine(unsigned machine)
{
    const char *env = getenv("MEMSCRIBE_WINE");

    if (env && *env)
        return env;
    return machine == 0x14c ? "/usr/lib/wine/wine" : "/usr/lib/wine/wine64";
}

/* The directory holding memscribe.exe and memscribe_collector.dll for arch:
 * MEMSCRIBE_WINDOWS_DIR, else beside an installed memscribe
 * (lib/memscribe/windows/ARCH), else in the build tree (windows/ARCH). */
static char *rw_launcher_dir(const char *arch)
{
    const char *env = getenv("MEMSCRIBE_WINDOWS_DIR");
    char self[PATH_MAX], *dir, *slash;
    ssize_t n;

    if (env && *env)
        return strdup(env);
    n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n <= 0)
        return NULL;
    self[n] = 0;
    slash = strrchr(self, '/');
    *slash = 0;
    for (int i = 0; i < 2; i++) {
        char exe[PATH_MAX];

        if (asprintf(&dir, i ? "%s/../windows/%s" : "%s/../lib/memscribe/windows/%s", self, arch) <
            0)
            return NULL;
        snprintf(exe, sizeof(exe), "%s/memscribe.exe", dir);
        if (i || access(exe, R_OK) == 0)
            return dir;
        free(dir);
    }
    return NULL;
}

/* A host path as Wine names it: Z:\ is / (Wine's default drive mapping). */
static char *rw_wine_path(const char *path)
{
    char *abs = realpath(path, NULL), *w;

    if (!abs)
        return NULL;
    if (asprintf(&w, "Z:%s", abs) < 0)
        w = NULL;
    free(abs);
    for (char *c = w; c && *c; c++)
        if (*c == '/')
            *c = '\\';
    return w;
}

/* The event file: MEMSCRIBE_WINE_EVENTS (kept), else a fresh one in a
 * private temporary directory (removed at the end). Made here, as every
 * file memscribe writes (util_outfile.h), and read through this descriptor;
 * the launcher writes it through the same descriptor (rw_event_wine_path).
 * Dies saying why not. */
static int rw_event_file(char *path, size_t size, char *tmpdir, size_t tmp_size)
{
    const char *keep = getenv("MEMSCRIBE_WINE_EVENTS");
    const char *t = getenv("TMPDIR");
    struct util_outfile o;
    int fd;

    tmpdir[0] = 0;
    if (keep && *keep) {
        snprintf(path, size, "%s", keep);
    } else {
        snprintf(tmpdir, tmp_size, "%s/memscribe-wine.XXXXXX", t && *t ? t : "/tmp");
        if (!mkdtemp(tmpdir))
            cli_die("record: cannot make a directory for the event file %s: %s", tmpdir,
                    strerror(errno));
        snprintf(path, size, "%s/events.mswin", tmpdir);
    }
    fd = util_outfile_open(path, O_RDONLY, 0600, &o);
    if (fd < 0)
        cli_die("record: cannot create the event file %s: %s", path, o.why);
    return fd;
}

/* The event file as the launcher opens it: this process's descriptor of
 * it, /proc/<pid>/fd/<efd> (Wine's Z:\ is /), so that the launcher writes
 * the very file made here even if its name is taken away meanwhile (the
 * directory of MEMSCRIBE_WINE_EVENTS may be another user's to rename in). */
static char *rw_event_wine_path(int efd)
{
    char *w;

    return asprintf(&w, "Z:\\proc\\%d\\fd\\%d", (int)getpid(), efd) < 0 ? NULL : w;
}

static void rw_check_options(const struct cmd_record_win_opts *o)
{
    if (o->only)
        cli_usage_error("record: --only is for Linux programs; a Windows program is traced "
                        "with its children");
    if (o->sample_bytes)
        cli_usage_error("record: --sample is for Linux programs; a Windows program is traced "
                        "whole");
    if (o->no_follow)
        cli_usage_error("record: --no-follow is for Linux programs; the Windows launcher "
                        "follows every child");
}

static char **rw_argv(const char *wine, const char *dir, const char *events_w, const char *prog_w,
                      int argc, char **argv)
{
    char **v = calloc((size_t)argc + 8, sizeof(*v));
    int k = 0;

    if (!v || asprintf(&v[1], "%s/memscribe.exe", dir) < 0)
        cli_die("record: out of memory");
    v[k++] = (char *)wine;
    k++;
    v[k++] = "record";
    v[k++] = "-o";
    v[k++] = (char *)events_w;
    v[k++] = "--";
    v[k++] = (char *)prog_w;
    for (int i = 1; i < argc; i++)
        v[k++] = argv[i];
    v[k] = NULL;
    return v;
}

/* The run: read the event file while wine runs, then what is left. */
static int rw_loop(struct rec_session *s, struct rec_win *w, pid_t pid, int *status)
{
    char msg[512];
    uint64_t last_flush = rec_clock_now(&s->clock);
    int bad = 0, done = 0;

    while (!done) {
        done = waitpid(pid, status, WNOHANG) == pid;
        uint64_t now = rec_clock_now(&s->clock);

        if (rec_win_poll(w, now, done, msg, sizeof(msg)) && !bad) {
            cli_warn("record: %s", msg);
            bad = 1;
        }
        if (now - last_flush > RW_FLUSH_PERIOD_NS && !s->write_err) {
            int rc = fmt_writer_flush(s->w);

            if (rc < 0)
                s->write_err = rc;
            last_flush = now;
        }
        if (!done)
            poll(NULL, 0, RW_POLL_MS);
    }
    return bad;
}

static void rw_trace_info(struct fmt_trace_info *info, const struct rec_session *s, uint32_t depth,
                          int argc, char **argv, char **command, char *host, size_t host_size)
{
    size_t len = 0;
    struct timespec rt;

    for (int i = 0; i < argc; i++)
        len += strlen(argv[i]) + 1;
    if (!(*command = malloc(len ? len : 1)))
        cli_die("record: out of memory");
    len = 0;
    for (int i = 0; i < argc; i++) {
        memcpy(*command + len, argv[i], strlen(argv[i]) + 1);
        len += strlen(argv[i]) + 1;
    }
    gethostname(host, host_size - 1);
    clock_gettime(CLOCK_REALTIME, &rt);
    *info = (struct fmt_trace_info){
        .start_monotonic_ns = s->start_mono_ns,
        .start_realtime_ns = (uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec,
        .recorder_pid = s->recorder_pid,
        .stack_depth = depth,
        .command = *command,
        .command_len = len ? (uint32_t)len - 1 : 0,
        .hostname = host,
    };
}

int cmd_record_win(const char *prog, unsigned machine, int argc, char **argv,
                   const struct cmd_record_win_opts *o)
{
    const char *arch = machine == 0x14c ? "i686" : "x86_64", *wine = rw_wine(machine);
    char events[PATH_MAX], tmpdir[PATH_MAX], exe[PATH_MAX + 32], host[256] = "", *command;
    char *dir, *events_w, *prog_w, **wargv, *default_out = NULL;
    const char *out_path = o->out_path;
    uint32_t depth = o->depth < RW_MAX_DEPTH ? o->depth : RW_MAX_DEPTH;
    struct fmt_writer_options wopt = {.pe_process = 1, .time_unit_ns = o->time_unit_ns};
    struct rec_session s = {0};
    struct fmt_trace_info info;
    struct fmt_writer_stats stats;
    struct util_outfile out_made;
    struct rec_win *w;
    int go_fd, err_fd, exec_err = 0, efd, out_fd, status = 0, bad, rc;
    pid_t pid;

    rw_check_options(o);
    if (machine != 0x8664 && machine != 0x14c)
        cli_die("record: %s: a PE file for machine 0x%x; memscribe traces x86-64 and i386 "
                "Windows programs",
                prog, machine);
    if (!rw_exists(wine))
        cli_die("record: %s is a Windows program, and %s is missing (install wine64: "
                "scripts/setup.sh --test; or set MEMSCRIBE_WINE)",
                prog, wine);
    if (!(dir = rw_launcher_dir(arch)))
        cli_die("record: cannot find my own executable: %s", strerror(errno));
    snprintf(exe, sizeof(exe), "%s/memscribe.exe", dir);
    if (access(exe, R_OK) != 0)
        cli_die("record: %s is a Windows program, and the Windows launcher %s is missing "
                "(build with mingw-w64, or set MEMSCRIBE_WINDOWS_DIR)",
                prog, exe);
    efd = rw_event_file(events, sizeof(events), tmpdir, sizeof(tmpdir));
    if (!(events_w = rw_event_wine_path(efd)) || !(prog_w = rw_wine_path(prog)))
        cli_die("record: out of memory");
    wargv = rw_argv(wine, dir, events_w, prog_w, argc, argv);

    /* The launcher's rdtsc is this machine's TSC: the recorder's line
     * turns its ticks into CLOCK_MONOTONIC, as for a Linux collector. */
    s.clock.tsc = 1;
    s.clock.tsc0 = __builtin_ia32_rdtsc();
    {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        s.clock.mono0 = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    }
    s.start_mono_ns = s.clock.mono0;
    s.recorder_pid = (uint32_t)getpid();
    signal(SIGXFSZ, SIG_IGN);
    if (!getenv("WINEDEBUG"))
        setenv("WINEDEBUG", "-all", 1); /* Wine's fixme lines are not the program's */
    pid = rec_spawn(wine, wargv, environ, &go_fd, &err_fd);
    if (pid < 0)
        cli_die("record: cannot start %s: %s", wine, strerror(errno));
    if (!out_path) {
        const char *base = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];

        if (asprintf(&default_out, "%s.%d.mscr", base, (int)pid) < 0)
            cli_die("record: out of memory");
        out_path = default_out;
    }
    out_fd = util_outfile_open(out_path, O_WRONLY, REC_TRACE_MODE, &out_made);
    rw_trace_info(&info, &s, depth, argc, argv, &command, host, sizeof(host));
    if (out_fd < 0 || (rc = fmt_writer_create(&s.w, out_fd, &info, &wopt)) < 0) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        cli_die("record: cannot create %s: %s", out_path,
                out_fd < 0 ? out_made.why : strerror(-rc));
    }
    if (!(w = rec_win_new(&s, efd, events, depth)))
        cli_die("record: out of memory");
    rw_forward_pid = pid;
    signal(SIGINT, rw_on_signal);
    signal(SIGTERM, rw_on_signal);
    signal(SIGHUP, rw_on_signal);
    while (!rec_clock_settle(&s.clock))
        poll(NULL, 0, 1);
    if ((rc = rec_spawn_go(go_fd, err_fd, &exec_err)))
        cli_warn("record: cannot release %s: %s", wine, strerror(-rc));
    if (exec_err)
        cli_warn("record: cannot run %s: %s", wine, strerror(exec_err));

    bad = rw_loop(&s, w, pid, &status);
    rw_forward_pid = 0;
    if (!s.write_err && (rc = fmt_writer_finish(s.w)) < 0)
        s.write_err = rc;
    fmt_writer_get_stats(s.w, &stats);
    fmt_writer_destroy(s.w);
    if (close(out_fd) != 0 && !s.write_err)
        s.write_err = -errno;
    rec_win_free(w);
    close(efd);
    if (tmpdir[0]) {
        unlink(events);
        rmdir(tmpdir);
    }
    if (s.write_err) {
        cli_warn("record: writing %s failed: %s; the trace holds what was written before", out_path,
                 strerror(-s.write_err));
        rc = CLI_EXIT_FAIL;
    } else {
        if (!o->quiet)
            cli_warn("record: trace written to %s: %llu events, %llu bytes", out_path,
                     (unsigned long long)stats.nr_events, (unsigned long long)stats.bytes_written);
        /* Wine passes on the low 8 bits of the program's status */
        rc = bad                 ? CLI_EXIT_FAIL
             : exec_err          ? 127
             : WIFEXITED(status) ? WEXITSTATUS(status)
                                 : 128 + WTERMSIG(status);
    }
    rec_session_free(&s);
    free(wargv[1]);
    free(wargv);
    free(events_w);
    free(prog_w);
    free(dir);
    free(command);
    free(default_out);
    return rc;
}
