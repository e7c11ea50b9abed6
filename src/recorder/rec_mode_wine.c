/* SPDX-License-Identifier: MIT */
/* `memscribe record -- prog.exe ARGS` (rec_session.h): a Windows program (a
 * PE file, known by its header) run under Wine by the Windows launcher,
 * memscribe.exe, which loads the collector into it and appends its records
 * to a file that the Wine channel (rec_win.c) reads each round into the
 * trace while the program runs (docs/windows.md, "memscribe record on
 * Linux"). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "recorder/rec_proc.h"
#include "recorder/rec_win.h"
#include "util/util_outfile.h"
#include "util/util_wine.h"

extern char **environ;

/* How often the event file is read (the launcher drains every 2 ms). */
#define RW_POLL_MS 5
/* The launcher records at most this many frames (win_rec.h). */
#define RW_MAX_DEPTH 32u
#define RW_I386 0x14c
#define RW_X86_64 0x8664

struct rec_wine {
    const char *wine; /* the loader */
    char *dir;        /* memscribe.exe's */
    char events[PATH_MAX], tmpdir[PATH_MAX - 32];
    int efd; /* the event file, -1 before it is made */
    char *events_w, *prog_w, **argv;
    struct rec_win *w;
    struct rec_child child;
    int bad; /* the event file had a bad record (said once) */
};

/* The wine loader for machine: MEMSCRIBE_WINE, else Debian's. */
static const char *rw_wine(unsigned machine)
{
    const char *env = getenv("MEMSCRIBE_WINE");

    if (env && *env)
        return env;
    return machine == RW_I386 ? "/usr/lib/wine/wine" : "/usr/lib/wine/wine64";
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
 * 0, or -1 with the reason in msg. */
static int rw_event_file(struct rec_wine *m, char *msg, size_t msg_size)
{
    const char *keep = getenv("MEMSCRIBE_WINE_EVENTS");
    const char *t = getenv("TMPDIR");
    struct util_outfile o;

    if (keep && *keep) {
        snprintf(m->events, sizeof(m->events), "%s", keep);
    } else {
        snprintf(m->tmpdir, sizeof(m->tmpdir), "%s/memscribe-wine.XXXXXX", t && *t ? t : "/tmp");
        if (!mkdtemp(m->tmpdir)) {
            snprintf(msg, msg_size, "cannot make a directory for the event file %s: %s", m->tmpdir,
                     strerror(errno));
            m->tmpdir[0] = 0;
            return -1;
        }
        snprintf(m->events, sizeof(m->events), "%s/events.mswin", m->tmpdir);
    }
    m->efd = util_outfile_open(m->events, O_RDONLY, 0600, &o);
    if (m->efd < 0) {
        snprintf(msg, msg_size, "cannot create the event file %s: %s", m->events, o.why);
        return -1;
    }
    return 0;
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

/* wine memscribe.exe record -o EVENTS -- PROG ARGS; NULL if out of memory. */
static char **rw_argv(const struct rec_wine *m, char *const argv[])
{
    int argc = 0, k = 0;
    char **v;

    while (argv[argc])
        argc++;
    if (!(v = calloc((size_t)argc + 8, sizeof(*v))))
        return NULL;
    if (asprintf(&v[1], "%s/memscribe.exe", m->dir) < 0) {
        free(v);
        return NULL;
    }
    v[k++] = (char *)m->wine;
    k++;
    v[k++] = "record";
    v[k++] = "-o";
    v[k++] = m->events_w;
    v[k++] = "--";
    v[k++] = m->prog_w;
    for (int i = 1; i < argc; i++)
        v[k++] = argv[i];
    v[k] = NULL;
    return v;
}

/* The launcher's rdtsc is this machine's TSC: its ticks are converted by
 * the recorder's line, which is settled before the program runs. */
static int rw_start(struct rec_session *s, void *mode, char *msg, size_t msg_size)
{
    struct rec_wine *m = mode;

    (void)msg;
    (void)msg_size;
    while (!rec_clock_settle(&s->clock))
        poll(NULL, 0, 1);
    rec_child_go(s, &m->child, m->wine);
    return 0;
}

/* What the event file holds now; all of it once wine has ended. */
static void rw_round(struct rec_session *s, void *mode, uint64_t now_ns)
{
    struct rec_wine *m = mode;
    char msg[512];

    if (rec_win_poll(m->w, now_ns, s->statuses.root_done, msg, sizeof(msg)) && !m->bad) {
        rec_session_say(s, REC_SAY_WARN, "%s", msg);
        m->bad = 1;
    }
}

static int rw_done(struct rec_session *s, void *mode, uint64_t now_ns)
{
    (void)mode;
    (void)now_ns;
    return s->statuses.root_done;
}

static void rw_on_signal(void *mode, int sig, const siginfo_t *info)
{
    struct rec_wine *m = mode;

    (void)info;
    if (m->child.pid > 0)
        kill(m->child.pid, sig);
}

/* Wine passes on the low 8 bits of the program's status. */
static int rw_finish(struct rec_session *s, void *mode, char *note, size_t note_size)
{
    struct rec_wine *m = mode;

    (void)note;
    (void)note_size;
    return m->bad ? 1 : rec_child_exit_code(&m->child, s->statuses.root_status);
}

static void rw_release(void *mode)
{
    struct rec_wine *m = mode;

    rec_child_drop(&m->child);
    rec_win_free(m->w);
    if (m->efd >= 0)
        close(m->efd);
    if (m->tmpdir[0]) {
        unlink(m->events);
        rmdir(m->tmpdir);
    }
    if (m->argv)
        free(m->argv[1]);
    free(m->argv);
    free(m->events_w);
    free(m->prog_w);
    free(m->dir);
    free(m);
}

static const struct rec_mode_ops rec_wine_ops = {
    .start = rw_start,
    .round = rw_round,
    .done = rw_done,
    .on_signal = rw_on_signal,
    .finish = rw_finish,
    .release = rw_release,
};

/* Are Wine and the launcher there for machine? 0, or -1 with msg. */
static int rw_find(struct rec_wine *m, const char *prog, unsigned machine, char *msg,
                   size_t msg_size)
{
    char exe[PATH_MAX + 32];

    if (machine != RW_X86_64 && machine != RW_I386) {
        snprintf(msg, msg_size,
                 "%s: a PE file for machine 0x%x; memscribe traces x86-64 and i386 Windows "
                 "programs",
                 prog, machine);
        return -1;
    }
    m->wine = rw_wine(machine);
    if (access(m->wine, X_OK) != 0) {
        snprintf(msg, msg_size,
                 "%s is a Windows program, and %s is missing (install wine64: scripts/setup.sh "
                 "--test; or set MEMSCRIBE_WINE)",
                 prog, m->wine);
        return -1;
    }
    if (!(m->dir = rw_launcher_dir(machine == RW_I386 ? "i686" : "x86_64"))) {
        snprintf(msg, msg_size, "cannot find my own executable: %s", strerror(errno));
        return -1;
    }
    snprintf(exe, sizeof(exe), "%s/memscribe.exe", m->dir);
    if (access(exe, R_OK) != 0) {
        snprintf(msg, msg_size,
                 "%s is a Windows program, and the Windows launcher %s is missing (build with "
                 "mingw-w64, or set MEMSCRIBE_WINDOWS_DIR)",
                 prog, exe);
        return -1;
    }
    return 0;
}

int rec_mode_wine(struct rec_session *s, const char *prog, unsigned machine, char *const argv[],
                  char *msg, size_t msg_size)
{
    struct rec_wine *m = calloc(1, sizeof(*m));

    if (!m) {
        snprintf(msg, msg_size, "out of memory");
        return -1;
    }
    m->efd = m->child.go_fd = m->child.err_fd = -1;
    s->mode = &rec_wine_ops;
    s->mode_arg = m;
    if (rw_find(m, prog, machine, msg, msg_size) || rw_event_file(m, msg, msg_size))
        return -1;
    if (!(m->events_w = rw_event_wine_path(m->efd)) || !(m->prog_w = rw_wine_path(prog)) ||
        !(m->argv = rw_argv(m, argv)) || rec_session_command_argv(s, argv)) {
        snprintf(msg, msg_size, "out of memory");
        return -1;
    }
    /* Where the symbolizer finds C:\ paths and Wine's own DLLs, recorded
     * (the prefix need not exist yet: Wine makes it on its first run). */
    s->wine_prefix = util_wine_prefix();
    s->wine_dll_dirs = util_wine_dll_dirs(m->wine, machine == RW_I386, &s->wine_dll_dirs_len);
    /* The launcher's own trace options: no sampling, --only or pools. */
    s->wopt = (struct fmt_writer_options){.pe_process = 1, .time_unit_ns = s->wopt.time_unit_ns};
    if (s->opt.depth > RW_MAX_DEPTH)
        s->opt.depth = RW_MAX_DEPTH;
    rec_session_begin(s, 1);
    if (!getenv("WINEDEBUG"))
        setenv("WINEDEBUG", "-all", 1); /* Wine's fixme lines are not the program's */
    if (rec_child_spawn(&m->child, m->wine, m->argv, environ) != 0) {
        snprintf(msg, msg_size, "cannot start %s: %s", m->wine, strerror(errno));
        return -1;
    }
    if (!(m->w = rec_win_new(s, m->efd, m->events, s->opt.depth))) {
        snprintf(msg, msg_size, "out of memory");
        return -1;
    }
    s->root_pid = m->child.pid;
    s->statuses.root = m->child.pid;
    s->own_tree = 1;
    s->idle_wait_ms = RW_POLL_MS;
    s->name = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
    return 0;
}
