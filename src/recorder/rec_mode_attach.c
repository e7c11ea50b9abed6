/* SPDX-License-Identifier: MIT */
/* `memscribe record -p PID` (rec_session.h): the attach build of the
 * collector loaded into a running process (rec_attach.c) with the
 * recording's settings; the recording ends when the process does, when
 * --duration has passed, or when INT/TERM/HUP asks to detach (the program
 * is not ours to stop): its GOTs are put back and it runs on untraced.
 * docs/record-attach.md, "Attach". */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "recorder/rec_attach.h"
#include "recorder/rec_class.h"
#include "recorder/rec_proc.h"

/* Once detached, wait this long for hooks that were under way to publish
 * their last events before the rings are read for the last time. */
#define REC_DETACH_SETTLE_MS 20

struct rec_attach {
    pid_t pid;
    int pidfd; /* -1 if none */
    int is32;
    char *lib;      /* the attach collector */
    char *settings; /* memscribe_attach_start()'s */
    uint64_t duration_ns, start_ns;
    volatile sig_atomic_t detach_asked;
    int detach; /* the recording ends by detaching, not by the process's end */
    char comm[64];
};

/* The attach build beside the collector: <dir>/libmemscribe-attach.so, or
 * <dir>/i386/libmemscribe-attach.so for a 32-bit program (malloc'd). NULL
 * with the reason in msg if it is missing. */
static char *rec_attach_lib(const char *collector, int pid, int is32, char *msg, size_t msg_size)
{
    const char *slash = strrchr(collector, '/');
    char *lib;

    if (asprintf(&lib, "%.*s/%slibmemscribe-attach.so", slash ? (int)(slash - collector) : 1,
                 slash ? collector : ".", is32 ? "i386/" : "") < 0) {
        snprintf(msg, msg_size, "out of memory");
        return NULL;
    }
    if (access(lib, R_OK) == 0)
        return lib;
    if (is32)
        snprintf(msg, msg_size,
                 "process %d is a 32-bit program and the i386 attach collector %s is not there "
                 "(%s): build memscribe with gcc-multilib",
                 pid, lib, strerror(errno));
    else
        snprintf(msg, msg_size, "-p needs the attach collector %s: %s", lib, strerror(errno));
    free(lib);
    return NULL;
}

/* The settings memscribe_attach_start() takes, "NAME=value\n" lines: the
 * socket, secret, depth, clock, sampling rate, the scan at exit, and the collector's own
 * variables of our environment (MEMSCRIBE_UNWIND, ...). NULL when out of
 * memory. */
static char *rec_attach_settings(const struct rec_session *s)
{
    static const char *const passed[] = {"MEMSCRIBE_FREE_STACKS", "MEMSCRIBE_UNWIND",
                                         "MEMSCRIBE_SAMPLE_SEED"};
    char *out = NULL, *more;

    if (asprintf(&out, "%s=%s\n%s=%s\n%s=%u\n%s=%s\n%s=0\n%s=%llu\n%s=%d\n%s=%d\n",
                 FMT_SHM_ENV_SOCKET, s->sock, FMT_SHM_ENV_SECRET, s->secret_hex, FMT_SHM_ENV_DEPTH,
                 s->opt.depth, FMT_SHM_ENV_CLOCK, s->clock.tsc ? "tsc" : "monotonic",
                 FMT_SHM_ENV_NO_FOLLOW, FMT_SHM_ENV_SAMPLE, (unsigned long long)s->opt.sample_bytes,
                 FMT_SHM_ENV_RECORDER_PID, (int)getpid(), FMT_SHM_ENV_REACH, s->opt.reach) < 0)
        return NULL;
    for (size_t i = 0; i < sizeof(passed) / sizeof(passed[0]); i++) {
        const char *v = getenv(passed[i]);

        if (!v || strchr(v, '\n'))
            continue;
        if (asprintf(&more, "%s%s=%s\n", out, passed[i], v) < 0) {
            free(out);
            return NULL;
        }
        free(out);
        out = more;
    }
    return out;
}

/* The process's name, for the default trace name. */
static void rec_attach_comm(struct rec_attach *m)
{
    char path[64];
    FILE *f;

    snprintf(m->comm, sizeof(m->comm), "process");
    snprintf(path, sizeof(path), "/proc/%d/comm", (int)m->pid);
    if ((f = fopen(path, "re"))) {
        if (!fgets(m->comm, sizeof(m->comm), f))
            snprintf(m->comm, sizeof(m->comm), "process");
        m->comm[strcspn(m->comm, "\n/")] = 0;
        fclose(f);
    }
}

static int rec_attach_mode_start(struct rec_session *s, void *mode, char *msg, size_t msg_size)
{
    struct rec_attach *m = mode;

    /* A Ctrl-C while attaching detaches right after. */
    if (rec_attach_start(m->pid, m->lib, m->settings, msg, msg_size) != 0)
        return -1;
    m->start_ns = rec_clock_now(&s->clock);
    rec_session_say(s, REC_SAY_NOTE, "attached to process %d; Ctrl-C detaches", (int)m->pid);
    return 0;
}

static int rec_attach_done(struct rec_session *s, void *mode, uint64_t now_ns)
{
    struct rec_attach *m = mode;
    struct pollfd pfd = {.fd = m->pidfd, .events = POLLIN};

    if (m->detach_asked || (m->duration_ns && now_ns - m->start_ns >= m->duration_ns))
        return m->detach = 1;
    /* The process ended, its stream with it. */
    return m->pidfd >= 0 && poll(&pfd, 1, 0) == 1 && rec_session_idle(s);
}

static void rec_attach_on_signal(void *mode, int sig, const siginfo_t *info)
{
    struct rec_attach *m = mode;

    (void)sig;
    (void)info;
    m->detach_asked = 1;
}

/* The end by --duration or a signal: the program's GOTs put back and the
 * collector off, then what its hooks under way still publish. A process
 * that ended meanwhile needs no detaching. */
static void rec_attach_stop_mode(struct rec_session *s, void *mode)
{
    struct rec_attach *m = mode;
    char msg[1024];
    long nr_restored = 0;

    if (!m->detach)
        return;
    if (rec_attach_stop(m->pid, m->lib, &nr_restored, msg, sizeof(msg)) != 0) {
        if (kill(m->pid, 0) == 0)
            rec_session_say(s, REC_SAY_WARN, "detaching: %s", msg);
        return;
    }
    s->runs_on = 1;
    poll(NULL, 0, REC_DETACH_SETTLE_MS);
    for (uint32_t i = 0; i < s->nr_images; i++)
        if (s->images[i]->open)
            rec_stream_drain(s, s->images[i]);
    /* record --reach: the blocks live at the end of the trace, classed now
     * that the collector is off (no event after the scan; docs/leaks.md). */
    if (s->opt.reach)
        rec_reach_now(s);
    rec_session_say(s, REC_SAY_NOTE,
                    "detached from process %d (%ld GOT entries put back); it runs on untraced",
                    (int)m->pid, nr_restored);
}

static void rec_attach_release(void *mode)
{
    struct rec_attach *m = mode;

    if (m->pidfd >= 0)
        close(m->pidfd);
    free(m->lib);
    free(m->settings);
    free(m);
}

static const struct rec_mode_ops rec_attach_ops = {
    .start = rec_attach_mode_start,
    .done = rec_attach_done,
    .on_signal = rec_attach_on_signal,
    .stop = rec_attach_stop_mode,
    .release = rec_attach_release,
};

int rec_mode_attach(struct rec_session *s, pid_t pid, uint64_t duration_ns, char *msg,
                    size_t msg_size)
{
    struct rec_attach *m = calloc(1, sizeof(*m));
    char *collector;

    if (!m) {
        snprintf(msg, msg_size, "out of memory");
        return -1;
    }
    *m = (struct rec_attach){.pid = pid, .pidfd = -1, .duration_ns = duration_ns};
    if (rec_attach_check(pid, &m->is32, msg, msg_size) != 0 ||
        !(collector = rec_collector_path(msg, msg_size))) {
        free(m);
        return -1;
    }
    m->lib = rec_attach_lib(collector, (int)pid, m->is32, msg, msg_size);
    free(collector);
    s->mode = &rec_attach_ops;
    s->mode_arg = m;
    if (!m->lib)
        return -1;
    rec_session_begin(s, 0);
    if (rec_session_listen(s, msg, msg_size) != 0)
        return -1;
    s->root_pid = pid;
    s->statuses.root = pid;
    s->attached_pid = (uint32_t)pid;
    m->settings = rec_attach_settings(s);
    s->command = rec_proc_cmdline(pid, &s->command_len);
    if (!m->settings || !s->command) {
        snprintf(msg, msg_size, "out of memory");
        return -1;
    }
    m->pidfd = (int)syscall(SYS_pidfd_open, (long)pid, 0L);
    rec_attach_comm(m);
    s->name = m->comm;
    return 0;
}
