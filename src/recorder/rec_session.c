/* SPDX-License-Identifier: MIT */
/* The recording session (rec_session.h): the trace made, the mode started,
 * the loop of rounds run once for every mode, and the end: the last
 * hellos, the last drain, the trace finished. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "recorder/rec_counters.h"
#include "recorder/rec_proc.h"
#include "util/util_outfile.h"

#define REC_RSS_PERIOD_NS (10 * 1000 * 1000ull)
#define REC_FLUSH_PERIOD_NS (1000 * 1000 * 1000ull)
/* Below this many bytes copied in a round, wait (1 ms, or a new process)
 * before the next one. A recorder that keeps right behind a thread reads
 * the cache line the thread is still filling, and every such line then
 * moves between the two CPUs twice; rounds of a few hundred KiB leave the
 * thread alone (4 MiB rings: ~12 ms of a malloc storm). */
#define REC_BATCH_BYTES (256 * 1024ull)
/* With no image open and no connection waiting (everything runs untraced,
 * as under --only until a match starts), wait this long between rounds:
 * a hello or a child's exit (SIGCHLD) ends the wait at once. Polling every
 * 1 ms cost the recorder 7-10 % of a CPU while it had nothing to do. */
#define REC_IDLE_WAIT_MS 50
/* Under --sample of this rate or more, the wait between rounds: an event
 * per 64 KiB allocated fills a 4 MiB ring in seconds, not milliseconds,
 * and waking each 1 ms cost a sampled service 2-3 % of its CPU in context
 * switches (perf, sqlite and python at --sample 512K). RSS is still
 * sampled about each 10 ms. */
#define REC_SAMPLED_MIN_BYTES (64 * 1024ull)
#define REC_SAMPLED_WAIT_MS 8

/* The session whose mode hears the signals; NULL outside the loop. */
static struct rec_session *volatile rec_signalled;

struct rec_session *rec_session_new(const struct rec_options *o)
{
    struct rec_session *s = calloc(1, sizeof(*s));

    if (!s)
        return NULL;
    s->opt = *o;
    s->lfd = -1;
    s->out_fd = -1;
    s->idle_wait_ms = REC_IDLE_WAIT_MS;
    /* pools: the program may announce its own pools at any time
     * (memscribe/annotate.h), after the header is written. */
    s->wopt = (struct fmt_writer_options)REC_WRITER_OPTIONS;
    s->wopt.time_unit_ns = o->time_unit_ns;
    s->wopt.reach = o->reach;
    s->wopt.totals = o->totals;
    /* Tests cut a small program's trace into many chunks so (the chunk
     * totals' merge, tests/e2e/ana_index_totals.sh); not for users. */
    const char *ce = getenv("MEMSCRIBE_CHUNK_EVENTS");
    if (ce && *ce)
        s->wopt.chunk_events = (uint32_t)strtoul(ce, NULL, 10);
    return s;
}

int rec_session_add_tap(struct rec_session *s, const struct rec_tap_ops *ops, void *tap)
{
    if (s->nr_taps == REC_MAX_TAPS)
        return -ENOSPC;
    s->taps[s->nr_taps].ops = ops;
    s->taps[s->nr_taps++].arg = tap;
    return 0;
}

void rec_session_say(const struct rec_session *s, enum rec_say_level level, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;

    if (!s->opt.say)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    s->opt.say(s->opt.say_arg, level, msg);
}

void rec_session_begin(struct rec_session *s, int tsc_forced)
{
    if (tsc_forced)
        rec_clock_init_tsc(&s->clock);
    else
        rec_clock_init(&s->clock);
    s->start_mono_ns = s->clock.mono0;
    s->recorder_pid = (uint32_t)getpid();
    /* A file size limit is a write error, like a full disk (a program we
     * start gets the default back before exec). */
    signal(SIGXFSZ, SIG_IGN);
}

int rec_session_listen(struct rec_session *s, char *msg, size_t msg_size)
{
    /* Only the traced tree learns the secret (its environment), and the
     * recorder takes in only hellos that carry it (docs/protocol.md). */
    if (getrandom(s->secret, sizeof(s->secret), 0) != (ssize_t)sizeof(s->secret)) {
        snprintf(msg, msg_size, "cannot make the recording's secret: %s", strerror(errno));
        return -1;
    }
    for (unsigned i = 0; i < FMT_SHM_SECRET_BYTES; i++)
        snprintf(s->secret_hex + 2 * i, 3, "%02x", s->secret[i]);
    s->lfd = rec_socket_open(s->sock, sizeof(s->sock));
    if (s->lfd < 0) {
        snprintf(msg, msg_size, "cannot open the collector socket: %s", strerror(-s->lfd));
        return -1;
    }
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
        rec_session_say(s, REC_SAY_WARN,
                        "cannot become a subreaper (%s); orphaned children may be missed",
                        strerror(errno));
    return 0;
}

int rec_session_command_argv(struct rec_session *s, char *const argv[])
{
    size_t len = 0;

    for (int i = 0; argv[i]; i++)
        len += strlen(argv[i]) + 1;
    free(s->command);
    s->command = malloc(len ? len : 1);
    if (!s->command)
        return -ENOMEM;
    s->command_len = 0;
    for (int i = 0; argv[i]; i++) {
        size_t l = strlen(argv[i]) + 1;

        memcpy(s->command + s->command_len, argv[i], l);
        s->command_len += l;
    }
    return 0;
}

int rec_session_idle(const struct rec_session *s)
{
    if (s->nr_conns)
        return 0;
    for (uint32_t i = 0; i < s->nr_images; i++)
        if (s->images[i]->open)
            return 0;
    return 1;
}

uint64_t rec_session_start_ns(const struct rec_session *s)
{
    return s->start_mono_ns;
}

int rec_session_program_ended(const struct rec_session *s)
{
    return s->statuses.root_done;
}

int rec_session_program_status(const struct rec_session *s, int *status)
{
    if (s->statuses.root_done)
        *status = s->statuses.root_status;
    return s->statuses.root_done;
}

int rec_session_child_status(const struct rec_session *s, pid_t pid, int *status)
{
    for (uint32_t i = s->statuses.n; i-- > 0;) /* the latest first */
        if (s->statuses.v[i].pid == pid) {
            *status = s->statuses.v[i].status;
            return 1;
        }
    return 0;
}

int rec_session_add_helper(struct rec_session *s, pid_t pid)
{
    if (s->nr_helpers == REC_MAX_TAPS)
        return -ENOSPC;
    s->helpers[s->nr_helpers++] = pid;
    return 0;
}

/* Are the children left all helpers? The recorder is a subreaper, so the
 * traced tree's orphans are its children too: the kernel's lists of each
 * thread's children say who is left. 1 if only helpers are. */
static int rec_only_helpers_left(const struct rec_session *s)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    int only = d != NULL;

    while (d && only && (e = readdir(d))) {
        char path[300], buf[4096];
        int fd;
        ssize_t n;

        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "/proc/self/task/%s/children", e->d_name);
        if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
            continue; /* the thread ended */
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n < 0 || n == (ssize_t)sizeof(buf) - 1) {
            only = 0;
            break;
        }
        buf[n] = 0;
        for (char *p = buf, *end; *p; p = end) {
            long pid = strtol(p, &end, 10);
            int helper = 0;

            if (end == p)
                break;
            for (uint32_t i = 0; i < s->nr_helpers; i++)
                helper |= s->helpers[i] == (pid_t)pid;
            only &= helper;
        }
    }
    if (d)
        closedir(d);
    return only;
}

const char *rec_session_trace_path(const struct rec_session *s)
{
    return s->opt.out_path;
}

int rec_session_flush(struct rec_session *s)
{
    return fmt_writer_flush(s->w);
}

/* The trace, made under its final name at once, never a planted one
 * (util_outfile.h): MEMSCRIBE_OUTPUT's %p makes the name easy to guess. */
static int rec_session_create(struct rec_session *s, char *msg, size_t msg_size)
{
    struct fmt_trace_info info = {0};
    struct util_outfile made;
    struct timespec rt;
    char host[256] = "";
    int rc;

    if (!s->opt.out_path) {
        if (asprintf(&s->out_made, "%s.%d.mscr", s->name, (int)s->statuses.root) < 0) {
            snprintf(msg, msg_size, "out of memory");
            return -1;
        }
        s->opt.out_path = s->out_made;
    }
    s->out_fd = util_outfile_open(s->opt.out_path, O_WRONLY, REC_TRACE_MODE, &made);
    if (s->out_fd < 0) {
        snprintf(msg, msg_size, "cannot create %s: %s", s->opt.out_path, made.why);
        return -1;
    }
    s->out_created = made.created;
    gethostname(host, sizeof(host) - 1);
    clock_gettime(CLOCK_REALTIME, &rt);
    info.start_monotonic_ns = s->start_mono_ns;
    info.start_realtime_ns = (uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec;
    info.recorder_pid = s->recorder_pid;
    info.stack_depth = s->opt.depth;
    info.sample_bytes = s->opt.sample_bytes;
    info.command = s->command;
    info.command_len = s->command_len ? (uint32_t)s->command_len - 1 : 0;
    info.hostname = host;
    info.only = s->opt.only;
    info.attached_pid = s->attached_pid;
    info.wine_prefix = s->wine_prefix;
    info.wine_dll_dirs = s->wine_dll_dirs;
    info.wine_dll_dirs_len = (uint32_t)s->wine_dll_dirs_len;
    /* record --aggregate: aggregated from the start (docs/aggregate.md),
     * or with --max-size once the trace reaches it (its FMT_EV_AGGREGATE
     * then says when); set here, after every mode's writer options (the
     * Wine mode's own). */
    info.aggregate_ns = s->opt.max_size ? 0 : s->opt.aggregate_ns;
    info.keep_last_ns = s->opt.keep_last_ns;
    s->wopt.aggregate = s->opt.aggregate_ns != 0;
    s->wopt.counters = s->opt.sample_bytes != 0;
    rc = fmt_writer_create(&s->w, s->out_fd, &info, &s->wopt);
    if (rc == 0 && s->opt.aggregate_ns)
        rc = rec_agg_new(&s->agg, s->w, s->opt.aggregate_ns, s->opt.max_size != 0);
    /* --keep-last: its segments in TRACE.last/ (docs/aggregate.md) */
    if (rc == 0 && s->opt.keep_last_ns) {
        char why[256];

        if (asprintf(&s->keep_dir, "%s.last", s->opt.out_path) < 0) {
            s->keep_dir = NULL;
            rc = -ENOMEM;
        } else if ((rc = rec_keep_new(&s->keep, s->keep_dir, &info, &s->wopt, s->opt.keep_last_ns,
                                      s->opt.aggregate_ns, s->w, s->agg, why, sizeof(why)))) {
            snprintf(msg, msg_size, "cannot start the segments of --keep-last in %s: %s",
                     s->keep_dir, why);
            return -1;
        }
    }
    if (rc < 0) {
        snprintf(msg, msg_size, "cannot start the trace %s: %s", s->opt.out_path, strerror(-rc));
        return -1;
    }
    return 0;
}

/* Nothing was recorded: no trace is left behind (a full disk, a failed
 * attach). */
static void rec_session_abandon(struct rec_session *s)
{
    rec_keep_free(s->keep);
    s->keep = NULL;
    rec_agg_free(s->agg);
    s->agg = NULL;
    if (s->w)
        fmt_writer_destroy(s->w);
    s->w = NULL;
    if (s->out_fd >= 0)
        close(s->out_fd);
    s->out_fd = -1;
    if (s->out_created)
        unlink(s->opt.out_path);
    s->out_created = 0;
}

/* Hand a signal someone sent us to the mode (a Ctrl-C from the terminal
 * reached the program's process group already: the mode tells them
 * apart by si_code). */
static void rec_on_signal(int sig, siginfo_t *info, void *uctx)
{
    struct rec_session *s = rec_signalled;

    (void)uctx;
    if (s && s->mode->on_signal)
        s->mode->on_signal(s->mode_arg, sig, info);
}

/* Only there to end the wait between rounds with EINTR. */
static void rec_on_child(int sig)
{
    (void)sig;
}

/* While the program runs, INT/TERM/HUP are for the mode, not for us: a
 * service manager that stops the group of a --serve program gets the trace
 * finished as soon as the program ends. */
static void rec_session_signals(struct rec_session *s)
{
    struct sigaction sa = {0};

    rec_signalled = s;
    sa.sa_sigaction = rec_on_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    rec_reach_signals(s);
    sa.sa_handler = rec_on_child;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGCHLD, &sa, NULL);
}

/* Is the TSC's line known (rec_clock.c)? 10 ms after the start, or as soon
 * as the whole tree has ended when we started it: a program shorter than
 * the calibration does not wait for it, every time it stamped lying
 * between the two readings. */
static int rec_session_clock_known(struct rec_session *s)
{
    if (rec_clock_settle(&s->clock))
        return 1;
    return s->own_tree && rec_reap(&s->statuses) && s->statuses.root_done &&
           rec_clock_settle_now(&s->clock);
}

/* One round; returns the bytes it copied out of rings. */
static uint64_t rec_session_round(struct rec_session *s, uint64_t now)
{
    uint64_t limit, before = s->nr_copied;

    if (s->lfd >= 0)
        rec_socket_accept(s, s->lfd, now, REC_ACCEPTS_PER_ROUND);
    limit = rec_merge_watermark(s, now);
    s->no_children = rec_reap(&s->statuses);
    if (!s->no_children && s->nr_helpers && s->statuses.root_done)
        s->no_children = rec_only_helpers_left(s);
    rec_check_exits(s, &s->statuses, s->lfd, rec_clock_now(&s->clock));
    rec_merge_emit(s, limit);
    if (s->wopt.reach)
        rec_reach_round(s);
    if (s->mode->round)
        s->mode->round(s, s->mode_arg, now);
    for (uint32_t i = 0; i < s->nr_taps && s->write_err == 0; i++)
        if (s->taps[i].ops->round)
            s->taps[i].ops->round(s, s->taps[i].arg, now);
    rec_sample_rss(s, now, REC_RSS_PERIOD_NS);
    rec_counters_round(s, now);
    return s->nr_copied - before;
}

void rec_session_flush_due(struct rec_session *s, uint64_t now)
{
    if (now - s->last_flush_ns < (s->opt.flush_ns ? s->opt.flush_ns : REC_FLUSH_PERIOD_NS) ||
        s->write_err)
        return;
    int rc = rec_session_flush(s);

    if (rc < 0)
        s->write_err = rc;
    if (s->keep)
        rec_keep_flush(s->keep);
    s->last_flush_ns = now;
}

static void rec_session_loop(struct rec_session *s)
{
    int wait_ms = s->opt.sample_bytes >= REC_SAMPLED_MIN_BYTES ? REC_SAMPLED_WAIT_MS : 1;

    s->last_flush_ns = s->clock.mono0;
    for (;;) {
        uint64_t now, copied;

        if (!rec_session_clock_known(s)) {
            /* Calibrating the TSC: no time can be converted yet. */
            poll(NULL, 0, 1);
            continue;
        }
        now = rec_clock_now(&s->clock);
        copied = rec_session_round(s, now);
        rec_session_flush_due(s, now);
        if (s->mode->done(s, s->mode_arg, now))
            break;
        if (copied < REC_BATCH_BYTES) {
            /* A queue left behind (a flood of connections) does not cut
             * the wait short: it is worked through a pass a round. */
            struct pollfd pfd = {.fd = s->queue.behind ? -1 : s->lfd, .events = POLLIN};
            int idle = rec_session_idle(s) && !s->queue.behind;

            poll(&pfd, 1, idle ? (int)s->idle_wait_ms : wait_ms);
        }
    }
}

/* After the loop: every connection made before now taken in, every image
 * drained and closed, every event written, the trace finished. */
static void rec_session_end(struct rec_session *s, struct rec_summary *sum)
{
    struct fmt_writer_stats stats;
    struct rec_agg_stats agg = {0};
    struct rec_keep_stats keep = {0};
    int rc;

    if (s->lfd >= 0)
        rec_socket_catch_up(s, s->lfd);
    /* After a detach, what is still open runs on, untraced: it did not end. */
    for (uint32_t i = 0; i < s->nr_images; i++)
        rec_stream_close(s, s->images[i], 0, s->runs_on ? REC_RUNS_ON : 0,
                         rec_clock_now(&s->clock));
    rec_merge_emit(s, UINT64_MAX);
    rec_merge_cut(s); /* --aggregate: the last interval, every live block kept */
    if (s->keep) {
        rec_keep_finish(s->keep);
        rec_keep_get_stats(s->keep, &keep);
        rec_keep_free(s->keep);
        s->keep = NULL;
    }
    if (s->lfd >= 0)
        close(s->lfd);
    s->lfd = -1;
    if (s->write_err == 0) {
        rc = fmt_writer_finish(s->w);
        if (rc < 0)
            s->write_err = rc;
    }
    fmt_writer_get_stats(s->w, &stats);
    fmt_writer_destroy(s->w);
    s->w = NULL;
    if (s->agg)
        rec_agg_get_stats(s->agg, &agg);
    rec_agg_free(s->agg);
    s->agg = NULL;
    if (close(s->out_fd) != 0 && s->write_err == 0)
        s->write_err = -errno;
    s->out_fd = -1;
    s->out_created = 0; /* it is the recording's now */
    *sum = (struct rec_summary){
        .keep = keep,
        .keep_dir = s->keep_dir,
        .agg = agg,
        .out_path = s->opt.out_path,
        .nr_events = stats.nr_events,
        .nr_bytes = stats.bytes_written,
        .nr_seen = s->nr_events,
        .nr_dropped = s->nr_dropped,
        .nr_closed = s->ignored.closed,
        .nr_silent = s->ignored.silent,
        .nr_refused = s->ignored.refused,
        .nr_images = s->nr_images,
        .reach = s->reach,
        .write_err = s->write_err,
    };
}

int rec_session_run(struct rec_session *s, struct rec_summary *sum, char *msg, size_t msg_size)
{
    if (rec_session_create(s, msg, msg_size) != 0) {
        rec_session_abandon(s);
        return -1;
    }
    rec_session_signals(s);
    if (s->mode->start(s, s->mode_arg, msg, msg_size) != 0) {
        rec_signalled = NULL;
        rec_session_abandon(s);
        return -1;
    }
    rec_session_loop(s);
    if (s->mode->stop)
        s->mode->stop(s, s->mode_arg);
    rec_signalled = NULL;
    rec_session_end(s, sum);
    for (uint32_t i = 0; i < s->nr_taps; i++)
        if (s->taps[i].ops->finish)
            s->taps[i].ops->finish(s, s->taps[i].arg);
    sum->exit_code =
        s->mode->finish ? s->mode->finish(s, s->mode_arg, sum->note, sizeof(sum->note)) : 0;
    return 0;
}

void rec_session_free(struct rec_session *s)
{
    if (!s)
        return;
    if (s->mode && s->mode->release)
        s->mode->release(s->mode_arg);
    rec_session_abandon(s); /* only if the run did not get to the end */
    if (s->lfd >= 0)
        close(s->lfd);
    rec_session_clear(s);
    free(s->statuses.v);
    free(s->command);
    free(s->wine_prefix);
    free(s->wine_dll_dirs);
    free(s->out_made);
    free(s);
}
