/* SPDX-License-Identifier: MIT */
/* The recorder's parts (memscribe record), private to src/recorder/: the
 * recording session (rec_session.h is its public face), checking the
 * program, the traced process images and their rings, the time-ordered
 * merge into the trace writer, and the processes' lives. docs/protocol.md
 * explains the rules. */
#ifndef REC_INTERNAL_H
#define REC_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "format/fmt_shm.h"
#include "format/fmt_writer.h"
#include "recorder/rec_agg.h"
#include "recorder/rec_keep.h"
#include "recorder/rec_session.h"

/* What `memscribe record` writes unless told otherwise (docs/record.md):
 * times in units of 10 us (format 1.3: a nanosecond time took most of a
 * trace's bytes, and at 1 us still half of python3's, docs/format.md "Time
 * unit"), packed (1.4), references by rank and
 * recently ended addresses (1.5), realloc addresses through the address
 * model (1.7), pools announced at any time; each chunk's totals (1.10:
 * report --index) with record --totals (rec_session.c). The benchmark's
 * recorder replay (bench/rec_replay.c) writes the same. */
#define REC_WRITER_OPTIONS                                                                         \
    {                                                                                              \
        .time_unit_ns = REC_DEFAULT_TIME_UNIT_NS, .time_pack = 1, .free_ranks = 1,                 \
        .realloc_pred = 1, .pools = 1                                                              \
    }

/* A trace's mode (less the umask): it holds the command line, executable
 * and library paths and host name of everything it recorded, so only its
 * owner reads it, as perf.data (docs/record-programs.md, "Other users"). */
#define REC_TRACE_MODE 0600

/* Events younger than now - REC_GUARD_NS are held back: a producer's
 * marker store may still sit in its CPU's store buffer (docs/protocol.md). */
#define REC_GUARD_NS (2 * 1000 * 1000ull)
/* A pending word unchanged this long makes us ask whether its thread lives. */
#define REC_STALE_NS (100 * 1000 * 1000ull)
#define REC_MAX_SEGMENTS FMT_SHM_MAX_SEGMENTS
#define REC_MAX_RINGS_PER_SEGMENT 64
/* No call that succeeded covers more bytes: x86-64's largest address
 * space (5-level paging) is 2^57 bytes. A bigger size is a scribble. */
#define REC_MAX_EVENT_SIZE (1ull << 57)
/* Connections accepted whose hello has not arrived yet; beyond this many
 * the oldest silent one is dropped, and each gets REC_CONN_WAIT_NS at most. */
#define REC_MAX_CONNS 64
#define REC_CONN_WAIT_NS (1000 * 1000 * 1000ull)
/* Connections accepted in one round at most: anyone on the machine may
 * connect, and a process that only connects and closes kept an unbounded
 * accept loop from draining the rings for seconds (a traced storm of
 * 1.2 s took 8.7 s). The rest wait in the socket's queue for the next
 * rounds (rec_socket_accept, struct rec_queue). */
#define REC_ACCEPTS_PER_ROUND 64
/* The socket's queue: half a round's accepts, so that a pass reaches the
 * marker it queues behind a flood (struct rec_queue) and the merge is held
 * back a round at most; at 256 it was held back four rounds of a busy
 * recorder, and the traced storm waited up to 250 ms at a time, not 100.
 * A connect(2) beyond it waits in the kernel for its turn. */
#define REC_LISTEN_BACKLOG (REC_ACCEPTS_PER_ROUND / 2)
/* Collector messages printed per recording at most. */
#define REC_MAX_SAYS 100
/* Releases waiting for their realloc per image: one per busy ring at most;
 * beyond this the order of a reused address is left to the times alone. */
#define REC_MAX_RELEASED 64

struct rec_image;

/* rec_stackmap.c: process-local stack id -> trace stack id, memory bounded
 * by the STACK records received (never by the ids' values). */
struct rec_stackmap {
    uint64_t *slots; /* local << 32 | trace id; 0: empty */
    uint32_t cap, nr_entries;
};
/* Map local (not 0) to gid, replacing an earlier mapping: 0 or -ENOMEM. */
int rec_stackmap_put(struct rec_stackmap *m, uint32_t local, uint32_t gid);
static inline uint32_t rec_stackmap_slot(const struct rec_stackmap *m, uint32_t local)
{
    /* Fibonacci hashing: the collector's ids are dense (1, 2, 3, ...). */
    return (uint32_t)((local * 0x9e3779b97f4a7c15ull) >> 32) & (m->cap - 1);
}
/* The trace id of local, 0 if none was defined. Once per event: inline. */
static inline uint32_t rec_stackmap_get(const struct rec_stackmap *m, uint32_t local)
{
    if (!m->cap || local == 0)
        return 0;
    for (uint32_t j = rec_stackmap_slot(m, local); m->slots[j]; j = (j + 1) & (m->cap - 1))
        if ((uint32_t)(m->slots[j] >> 32) == local)
            return (uint32_t)m->slots[j];
    return 0;
}
void rec_stackmap_free(struct rec_stackmap *m);

/* rec_clock.c: every time the recorder handles is CLOCK_MONOTONIC ns;
 * collector times in TSC ticks are turned into it as they are copied. */
struct rec_clock {
    int tsc;              /* the collector stamps with rdtsc */
    int ready;            /* the line is known (at once without the TSC) */
    uint64_t tsc0, mono0; /* a tick and the ns it was read at */
    double ns_per_tick;
    uint64_t mult32; /* ns_per_tick << 32 */
    /* The line minus CLOCK_MONOTONIC, as last read (rec_clock_follow): what
     * a FMT_SHM_TS_SYSCLOCK stamp is moved by. The line is fixed at start,
     * CLOCK_MONOTONIC is slewed by NTP and the line's rate is good to
     * ~1e-5, so the two part by microseconds a second. */
    int64_t sys_off;
};

/* Decide on the clock (MEMSCRIBE_CLOCK=tsc|monotonic overrides) and, for
 * the TSC, take the first reading of its calibration. */
void rec_clock_init(struct rec_clock *c);
/* The same for a collector known to stamp with the TSC (the Windows
 * launcher's rdtsc): the first reading, whatever the kernel's clock. */
void rec_clock_init_tsc(struct rec_clock *c);
/* For the TSC, take the second reading once 10 ms have passed since the
 * first: 1 when the line is known, 0 while no time may be converted yet.
 * The program runs meanwhile (its hellos wait in the socket's queue, its
 * events in its rings), so tracing does not start 10 ms late. */
int rec_clock_settle(struct rec_clock *c);
/* The second reading at once, however short the span: for a recorder whose
 * programs have all ended before the 10 ms. Every time it will convert was
 * then stamped between the two readings, where the line is as exact as the
 * readings themselves, whatever its span. 1 when the line is known. */
int rec_clock_settle_now(struct rec_clock *c);
/* Now, in ns (CLOCK_MONOTONIC itself until the line is known). */
uint64_t rec_clock_now(const struct rec_clock *c);
/* Read how far the line is from CLOCK_MONOTONIC now (sys_off): once a
 * round, before stamps are converted. */
void rec_clock_follow(struct rec_clock *c);
/* A collector time in ns: t itself, or ticks converted when is_tsc (fixed
 * point, ns per tick << 32: one multiply per record); a FMT_SHM_TS_SYSCLOCK
 * stamp (CLOCK_MONOTONIC) moved onto the line. */
static inline uint64_t rec_clock_ns(const struct rec_clock *c, uint64_t t, int is_tsc)
{
    uint64_t d;

    if (t & FMT_SHM_TS_SYSCLOCK) {
        t &= ~FMT_SHM_TS_SYSCLOCK;
        return c->sys_off < 0 && (uint64_t)-c->sys_off > t ? 0 : t + (uint64_t)c->sys_off;
    }
    if (!is_tsc)
        return t;
    if (t >= c->tsc0)
        return c->mono0 + (uint64_t)(((unsigned __int128)(t - c->tsc0) * c->mult32) >> 32);
    d = (uint64_t)(((unsigned __int128)(c->tsc0 - t) * c->mult32) >> 32);
    return d < c->mono0 ? c->mono0 - d : 0;
}

/* One ring of a traced process, as the recorder drains it. Records with a
 * time are copied into buf (a FIFO) and wait there for the watermark. */
struct rec_ring {
    struct rec_image *img;
    struct fmt_shm_ring_ctl *ctl; /* NULL once the image is unmapped */
    unsigned char *data;
    uint32_t size;
    uint64_t tail;

    unsigned char *buf;
    size_t buf_pos, buf_len, buf_cap;
    uint64_t last_ts; /* time of the last record copied */

    int off;                   /* a bad record turned this stream off */
    uint64_t nr_bad;           /* records discarded after that */
    struct fmt_writer_who who; /* the owner's context, for fmt_writer_heap() */
    uint32_t tid;              /* current owner, from THREAD_START */
    uint32_t thread;           /* its dense thread index */
    int has_thread;
    int thread_ended; /* its THREAD_EXIT is written; no new owner yet */
    /* 1 + buf offset of the owner's THREAD_EXIT record while it waits in
     * buf (0: none): glibc frees after the thread's exit hook ran. */
    size_t exit_at;
    uint64_t seen_pending;    /* last pending value seen */
    uint64_t seen_pending_ns; /* when it was first seen */
    int pending_dead;         /* its thread is gone: ignore pending */
};

struct rec_image {
    uint32_t index; /* dense image index */
    uint32_t pid, ppid;
    uint64_t stream_id;
    int how;          /* enum fmt_start */
    int pidfd;        /* -1 if none */
    int open;         /* still producing: constrains the watermark */
    int clock_tsc;    /* its times are TSC ticks */
    int retired;      /* closed and fully written: its rings are freed */
    int gone;         /* its process has ended: closed once the queued hellos are read */
    int over;         /* closed because it ended (exit, exec), not at a detach: its threads too */
    int exit_pending; /* its PROCESS_EXIT is queued, not written: its rings stay */
    uint64_t gone_ns; /* when it was seen gone: hellos queued before then come first */
    int reach_seen;   /* its request for the scan at exit was answered (rec_reach.c) */
    /* Its hello's time, within the recording. */
    uint64_t start_ns;
    /* The thread index of its first thread (tid == pid), which also
     * carries the events the recorder makes for it (start, exit, RSS):
     * one context, one thread row, not a second unnamed one. */
    uint32_t main_thread;
    uint32_t nr_segs;
    struct {
        void *base;
        size_t size;
    } segs[REC_MAX_SEGMENTS];
    struct rec_ring **rings;
    uint32_t nr_rings, cap_rings;
    struct rec_stackmap stack_map;
    uint64_t nr_unknown_stacks;
    uint64_t last_rss_ns;
    uint64_t rss_sample_ns; /* time of the last RSS sample written: its exit comes after */
    /* A sampled recording's exact counters (rec_counters.c): the values
     * last written, and when. */
    const struct fmt_shm_counters *ctr_area; /* segment 0's, NULL: none (yet) */
    const struct fmt_shm_header *seg0;       /* segment 0 (its exit stamp), NULL: none */
    uint64_t ctr_written[FMT_CTR_ALL];
    uint64_t ctr_ns;
    /* Blocks a realloc/mremap released (RELEASE emitted) whose REALLOC or
     * MREMAP is not written yet: at most one per ring. */
    struct {
        uint64_t addr;
        struct rec_ring *ring;
    } released[REC_MAX_RELEASED];
    uint32_t nr_released;
};

/* An event the recorder makes itself (process start/exit, RSS, drops),
 * waiting for its turn in the merge. Strings are owned. */
struct rec_synth {
    struct fmt_event ev;
    char *str, *str2;
    uint64_t seq;
};

/* What the recorder knows of its socket's queue of connections, which it
 * takes in REC_ACCEPTS_PER_ROUND at a time (rec_proc.c). The merge may
 * emit an event only once every hello sent before its time is in
 * (docs/protocol-order.md, "Time order"): while the queue is behind, that is
 * known up to in_ns, moved on by a connection of the recorder's own to its
 * socket (the marker), which the kernel queues behind every one before it. */
struct rec_queue {
    int behind;     /* the last pass stopped at its bound: more may wait */
    uint64_t in_ns; /* while behind: every connection made before this is accepted */
    enum {
        REC_MARKER_NONE,   /* (0: a session starts so) */
        REC_MARKER_MADE,   /* marker_fd is a socket the full queue refused */
        REC_MARKER_QUEUED, /* marker_fd is connected, in the queue */
    } marker;
    int marker_fd;
    uint64_t marker_ns; /* the time read just before it connected */
};

/* Connections to the socket that brought no hello, for the summary line:
 * anyone on the machine may connect (docs/record-programs.md, "Other users"). */
struct rec_conn_counts {
    uint64_t closed;  /* closed (or ended) before sending anything */
    uint64_t silent;  /* nothing within REC_CONN_WAIT_NS, or dropped for room */
    uint64_t refused; /* without the secret, malformed, unsealed */
};

/* Wait statuses collected by rec_reap(), by pid, until an image claims one. */
struct rec_status {
    pid_t pid;
    int status;
};

struct rec_statuses {
    struct rec_status *v;
    uint32_t n, cap;
    pid_t root;
    int root_status;
    int root_done;
};

/* A recording session (rec_session.h): the trace being written, the
 * streams of the traced images and their merge into it, and what drives
 * them: the mode, the taps and the loop's state. The stream and merge
 * functions below take it whole; a test or benchmark of them may zero one
 * and set only w, clock, root_pid and recorder_pid. */
struct rec_session {
    /* The streams and their merge (first: the merge's hot fields keep
     * short offsets). */
    struct fmt_writer *w;
    /* record --aggregate: what the merge writes goes through it (rec_agg.h);
     * NULL: straight to the writer */
    struct rec_agg *agg;
    /* record --keep-last: the exact segments beside it (rec_keep.h) */
    struct rec_keep *keep;
    char *keep_dir;
    /* record --max-size: the trace's bytes at the last check and the most
     * they grew between two (rec_merge.c) */
    uint64_t max_size_seen, max_size_step;
    struct rec_clock clock;
    int write_err; /* first writer error (-errno), then events are counted, not written */
    uint64_t start_mono_ns;
    uint32_t recorder_pid;
    pid_t root_pid;
    uint8_t secret[FMT_SHM_SECRET_BYTES]; /* a hello without it is refused */
    struct {
        int fd;
        int early; /* an authentic hello waits for an earlier segment's */
        uint64_t since_ns;
    } conns[REC_MAX_CONNS]; /* accepted, hello not read yet (rec_proc.c) */
    uint32_t nr_conns;
    struct rec_queue queue;
    struct rec_conn_counts ignored;
    uint32_t nr_says; /* collector messages printed */

    struct rec_image **images;
    uint32_t nr_images, cap_images;
    struct rec_ring **heap; /* merge scratch */
    uint32_t heap_cap;

    struct rec_synth *synth;
    uint32_t nr_synth, cap_synth;
    uint64_t synth_seq;

    uint32_t next_thread;
    uint64_t last_emitted_ns; /* relative, for the non-decreasing guarantee */
    uint64_t nr_events;       /* events handed to the writer */
    uint64_t nr_dropped;      /* events reported lost */
    uint64_t nr_copied;       /* bytes copied out of rings, ever */
    uint64_t last_flush_ns;   /* the clock at the last periodic flush (rec_session_flush_due) */

    /* The driver (rec_session.c), set up by rec_session_new and the mode's
     * constructor before the trace exists. */
    struct rec_options opt;
    const struct rec_mode_ops *mode;
    void *mode_arg;
    struct {
        const struct rec_tap_ops *ops;
        void *arg;
    } taps[REC_MAX_TAPS];
    uint32_t nr_taps;
    int lfd;                      /* the listening socket, -1: none (Wine) */
    struct rec_statuses statuses; /* .root: the first program */
    int no_children;              /* the last round's reap found no child left (helpers apart) */
    pid_t helpers[REC_MAX_TAPS];  /* the taps' own processes (rec_session_add_helper) */
    uint32_t nr_helpers;
    int own_tree; /* we started the tree: its statuses are ours */
    int runs_on;  /* the recording left the tree running (a detach): its images did not end */
    unsigned idle_wait_ms; /* the wait between rounds with nothing open */
    struct fmt_writer_options wopt;
    uint32_t attached_pid;        /* record -p's process, for the trace's header */
    struct rec_reach_stats reach; /* record --reach's scans (rec_reach.c) */
    const char *name;             /* the default trace name's program part */
    char *command;                /* the trace's command line, NUL-separated */
    size_t command_len;           /* its bytes, the last NUL included */
    /* A Windows program's Wine prefix and Wine's DLL folders (NUL-separated),
     * for the trace's header (META WINE_PREFIX, WINE_DLL_DIR); NULL: none */
    char *wine_prefix, *wine_dll_dirs;
    size_t wine_dll_dirs_len;
    char sock[108]; /* the socket's abstract name (rec_session_listen) */
    char secret_hex[2 * FMT_SHM_SECRET_BYTES + 1];
    char *out_made;  /* the default name, when made */
    int out_fd;      /* the trace, -1 before it is made */
    int out_created; /* ... by us: removed if nothing is recorded */
};

/* rec_check.c: may `path` be traced? Returns 0, or -1 with a message in
 * msg (naming the file). Follows "#!" to the interpreter. */
int rec_check_program(const char *path, char *msg, size_t msg_size);

/* rec_session.c, for the modes. Take the first clock reading (forced to
 * the TSC for the Wine launcher's ticks), note the recorder's pid and
 * start; a file size limit becomes a write error, not a signal. */
void rec_session_begin(struct rec_session *s, int tsc_forced);
/* Make the recording's secret and its socket, and become the tree's
 * subreaper (a warning if not). 0, or -1 with msg. */
int rec_session_listen(struct rec_session *s, char *msg, size_t msg_size);
/* The trace's command line: argv joined, each with its NUL. 0 or -ENOMEM. */
int rec_session_command_argv(struct rec_session *s, char *const argv[]);
/* Say msg (printf's format) through the options' say function. */
void rec_session_say(const struct rec_session *s, enum rec_say_level level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Nothing traced is open and no connection waits for its hello. */
int rec_session_idle(const struct rec_session *s);
/* The trace (and --keep-last's segment) flushed if a second has passed
 * since the last time: between rounds, and inside a long merge, whose
 * round may last seconds when the recorder is behind (rec_merge_drain). */
void rec_session_flush_due(struct rec_session *s, uint64_t now);
/* Free what the streams and the merge hold (not the driver's parts). */
void rec_session_clear(struct rec_session *s);

/* rec_stream.c */
/* Take in a segment the collector announced: validate it, attach it to a
 * new image (IMAGE, FORK) or to its stream (SEGMENT). `seg` is mapped
 * shared, `size` bytes. Returns 0 or -errno (-EPROTO: malformed). On
 * success the session owns the mapping. */
int rec_stream_attach(struct rec_session *s, const struct fmt_shm_hello *hello, void *seg,
                      size_t size, int pidfd, uint64_t now_ns);
/* Copy out everything the image's rings hold. */
void rec_stream_drain(struct rec_session *s, struct rec_image *img);
/* The same, in the middle of a merge, for the rings whose copy not yet
 * merged is less than a ring: one the merge falls behind on keeps its
 * records in the ring, and its thread waits, rather than the recorder
 * holding an ever longer copy (storm-pool: 29 -> 623 MiB without this). */
void rec_stream_drain_ahead(struct rec_session *s, struct rec_image *img);
/* The image's process is gone (or replaced by exec): drain what is left,
 * unmap, and queue its exit. status_known: wait status is valid; or
 * REC_RUNS_ON: the recording stops while the process runs on (record -p
 * detached), and no exit is queued, so the trace does not see it end (its
 * blocks are live at the end, not leaked). Returns the time the exit is
 * (or would be) dated, 0 if img was closed already. */
#define REC_RUNS_ON (-1)
uint64_t rec_stream_close(struct rec_session *s, struct rec_image *img, int status,
                          int status_known, uint64_t now_ns);
struct rec_image *rec_stream_find_pid(struct rec_session *s, uint32_t pid);
/* 1 if hello announces a later segment of an open stream than the next one
 * expected: an earlier segment's connection is still waiting (rec_proc.c). */
int rec_stream_segment_early(struct rec_session *s, const struct fmt_shm_hello *hello);
/* Free the rings and stack map of closed images with nothing left to
 * write, so a long build's thousands of processes cost little. */
void rec_stream_retire(struct rec_session *s);

/* Where the time sits in a record kept for the merge (every type but PAD
 * and STACK has one). */
static inline uint64_t *rec_record_ts(unsigned char *p)
{
    switch (p[0]) {
    case FMT_SHM_REC_EVENT:
    case FMT_SHM_REC_RELEASE:
        return &((struct fmt_shm_event *)(void *)p)->ts_ns;
    case FMT_SHM_REC_THREAD_START:
    case FMT_SHM_REC_THREAD_EXIT:
    case FMT_SHM_REC_THREAD_NAME:
        return &((struct fmt_shm_thread *)(void *)p)->ts_ns;
    case FMT_SHM_REC_POOL:
        return &((struct fmt_shm_pool *)(void *)p)->ts_ns;
    default:
        return &((struct fmt_shm_module *)(void *)p)->ts_ns;
    }
}

/* rec_reach.c: answer the images that ask for the scan at exit (record
 * --reach, docs/leaks.md): stop the process, write every event it made,
 * class its live blocks, write the REACH record, let it go; and scan every
 * image after a SIGUSR1 to the recorder. Each round. */
void rec_reach_round(struct rec_session *s);
/* Class the live blocks of every open image whose process is alive, now,
 * whether it asked or not (a detach, a request to the recorder): a REACH
 * record each, dated now. */
void rec_reach_now(struct rec_session *s);
/* Under --reach, SIGUSR1 to the recorder asks rec_reach_round to scan
 * every image now (rec_reach_now): installed with the session's signals. */
void rec_reach_signals(struct rec_session *s);

/* rec_merge.c */
/* The time below which every event has been copied out: reads each open
 * ring's pending word, then drains it (order matters, docs/protocol.md). */
uint64_t rec_merge_watermark(struct rec_session *s, uint64_t now_ns);
/* Hand the writer every buffered event older than limit (absolute
 * CLOCK_MONOTONIC ns), in time order. UINT64_MAX: everything. */
void rec_merge_emit(struct rec_session *s, uint64_t limit);
/* Queue an event the recorder made; takes ownership of str/str2 (malloc'd). */
void rec_merge_synth(struct rec_session *s, const struct fmt_event *ev, uint64_t abs_ts, char *str,
                     uint32_t str_len, char *str2, uint32_t str2_len);
/* Write one event (relative times are filled here), counting errors. */
void rec_merge_write(struct rec_session *s, struct fmt_event *ev, uint64_t abs_ts);
/* Under --aggregate, a cut now (rec_agg_cut_at): every block live so far
 * is in the writer, for a scan that lists them (rec_reach.c) and at the
 * trace's end. Nothing without --aggregate. */
void rec_merge_cut(struct rec_session *s);

#endif
