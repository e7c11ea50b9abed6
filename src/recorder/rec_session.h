/* SPDX-License-Identifier: MIT */
/* A recording session (rec_session.c): one trace written from one traced
 * tree, from the moment its file is made to its last byte. The session owns
 * the recorder's loop, once for every way of recording. Each round: take in
 * the hellos waiting on the socket, read the watermark (docs/protocol-order.md,
 * "Time order"), reap children, close the images whose processes ended,
 * merge what is older than the watermark into the trace, let the mode read
 * its own input, run the taps, sample RSS, flush each second (flush_ns:
 * --live's quarter), also inside a long merge; then ask
 * the mode whether the recording is over, and wait for the next round.
 *
 * A mode says how the traced tree starts, when it is over, what a signal
 * sent to the recorder means and how it ends; the loop knows none of them.
 * Every mode is listed at the end of this header: a new one is a file
 * rec_mode_<name>.c with its constructor here, and cmd_record.c only parses
 * its options. A tap is what else runs each round on the trace being
 * written (record --snapshot-every, cli_snap.c; the live view to come).
 *
 * The session's parts (the streams of the traced images and their merge)
 * are in rec_internal.h, private to src/recorder/. */
#ifndef REC_SESSION_H
#define REC_SESSION_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct rec_session;

/* What the session and its modes say while they record, handed to the
 * caller to print: a note is for a person watching (--quiet drops it), a
 * warning is always shown. */
enum rec_say_level { REC_SAY_NOTE, REC_SAY_WARN };
typedef void rec_say_fn(void *arg, enum rec_say_level level, const char *msg);

/* Times in units of 10 us unless told otherwise (docs/format.md, "Time
 * unit"; rec_internal.h's REC_WRITER_OPTIONS). */
#define REC_DEFAULT_TIME_UNIT_NS 10000u

/* --reach's copy of the heap at most, unless --reach-copy says (1 GiB). */
#define REC_REACH_COPY_DEFAULT ((uint64_t)1 << 30)

/* The options every mode shares (memscribe record's). */
struct rec_options {
    const char *out_path;  /* NULL: <name>.<pid>.mscr here, name and pid from the mode */
    uint32_t depth;        /* frames kept per stack */
    uint32_t time_unit_ns; /* the trace's time unit */
    uint64_t sample_bytes; /* --sample's rate, 0: every block */
    const char *only;      /* --only's glob, NULL: every process */
    int no_follow;         /* --no-follow */
    int reach;             /* --reach: class the live blocks at each image's exit */
    uint64_t reach_copy;   /* --reach-copy: the most bytes of a process's heap copied into the
                              recorder for the search (REC_REACH_COPY_DEFAULT in record); the
                              rest is read from the stopped process as the search needs it */
    int totals;            /* --totals: each chunk's totals (format 1.10: report --index) */
    uint64_t aggregate_ns; /* --aggregate's period: an aggregated trace (docs/aggregate.md);
                              0: exact */
    uint64_t max_size;     /* --max-size: exact until the trace reaches it, then aggregated
                              at aggregate_ns (which must be set); 0: no limit */
    uint64_t keep_last_ns; /* --keep-last: the last this long exact in segments beside the
                              trace, aggregated at aggregate_ns (which must be set); 0: none */
    uint64_t flush_ns;     /* how often what was merged reaches the file, in whole chunks
                              (a reader of the unfinished trace sees it); 0: every second;
                              UINT64_MAX: never by the clock (a benchmark's replay) */
    rec_say_fn *say;       /* NULL: nothing is said */
    void *say_arg;
};

/* A way of recording. start and done are required, the rest may be NULL.
 * Each member gets the mode's own state (the constructor's). */
struct rec_mode_ops {
    /* The trace exists: let the program run (spawn, wine), load the
     * collector into it (attach) or tell the collector that started us
     * (serve). 0, or -1 with the reason in msg: nothing is recorded, and
     * the trace is removed. Signals reach on_signal from here on. */
    int (*start)(struct rec_session *s, void *mode, char *msg, size_t msg_size);
    /* The mode's own input, read each round after the merge (the Wine
     * event file), also after a write error. */
    void (*round)(struct rec_session *s, void *mode, uint64_t now_ns);
    /* Once a round, after the merge and the taps: 1 when the recording is
     * over. */
    int (*done)(struct rec_session *s, void *mode, uint64_t now_ns);
    /* SIGINT, SIGTERM or SIGHUP was sent to the recorder while it records:
     * called in the signal handler, so async-signal-safe only. */
    void (*on_signal)(void *mode, int sig, const siginfo_t *info);
    /* The loop is over: end the recording of the tree (detach) before the
     * last hellos are taken in and every image is drained. */
    void (*stop)(struct rec_session *s, void *mode);
    /* The trace is finished: the exit status `record` ends with when it was
     * written without error, and a closing note for the summary (at most
     * note_size bytes; left empty if none). */
    int (*finish)(struct rec_session *s, void *mode, char *note, size_t note_size);
    /* Free the mode's state; a program made but never let go is killed. */
    void (*release)(void *mode);
};

/* Something that runs each round beside the merge on the trace being
 * written. Members may be NULL. */
struct rec_tap_ops {
    /* Once a round, after the merge, while the trace has no write error. */
    void (*round)(struct rec_session *s, void *tap, uint64_t now_ns);
    /* After the trace is finished and every traced process reaped. */
    void (*finish)(struct rec_session *s, void *tap);
};

/* What record --aggregate's aggregator did (rec_agg.h). */
struct rec_agg_stats {
    uint64_t nr_cuts;      /* cuts that wrote something */
    uint64_t nr_transient; /* blocks counted in batch rows, never written */
    uint64_t nr_kept;      /* pending blocks written at a cut */
    uint64_t nr_rows;      /* batch rows written */
    uint64_t nr_moments;   /* transient groups written (each with its end) */
    uint64_t switched_ns;  /* record --max-size: when the trace became aggregated, 0: never */
    uint64_t exact_bytes;  /* ... and the trace's bytes written by then */
};

/* What record --keep-last's segments did (rec_keep.h): segments begun,
 * the first kept and how many, the span they hold (trace time, as a reader
 * of the segments dates it: from the first kept one's start to the last
 * event written), each segment's length, and the first error (-errno, 0:
 * none; the segments stopped there, the trace went on) and when. */
struct rec_keep_stats {
    uint32_t nr_segments, first_kept, nr_kept;
    uint64_t kept_from_ns, kept_to_ns;
    uint64_t segment_ns;
    uint64_t carried; /* events carried into the latest segment */
    int err;
    uint64_t err_ns;
};

/* What a recording did, for the summary `record` prints. */
struct rec_summary {
    const char *out_path; /* the trace (the session's, valid until it is freed) */
    uint64_t nr_events;   /* events in the trace */
    uint64_t nr_bytes;    /* its size */
    uint64_t nr_seen;     /* events handed to the writer, written or not */
    uint64_t nr_dropped;  /* events reported lost (FMT_EV_DROPPED) */
    /* Connections to the socket that brought no hello: closed without a
     * word, silent (or dropped for room), refused. */
    uint64_t nr_closed, nr_silent, nr_refused;
    uint32_t nr_images; /* process images that said hello */
    struct rec_reach_stats {
        /* record --reach: the scans made, the blocks they classed, and
         * their time: scan_ns reading the roots and blocks and classing
         * them (what LeakSanitizer's check does), held_ns the program
         * stopped (the scan, writing what it made before, the record);
         * last_ts_ns the trace time the latest scan is dated at. */
        uint32_t nr_scans;
        uint64_t nr_blocks, read_bytes, scan_ns, held_ns, max_held_ns, last_ts_ns;
    } reach;
    struct rec_agg_stats agg;   /* --aggregate's */
    struct rec_keep_stats keep; /* --keep-last's */
    const char *keep_dir;       /* its folder (the session's), NULL without it */
    int write_err;              /* the first write error (-errno), 0: the trace is whole */
    int exit_code;              /* the mode's (finish), when write_err is 0 */
    char note[512];             /* the mode's closing note, "" if none */
};

/* A session with the options o (the strings must outlive it); NULL when
 * out of memory. A mode's constructor below makes it ready to run. */
struct rec_session *rec_session_new(const struct rec_options *o);
/* Add a tap (at most REC_MAX_TAPS); 0 or -ENOSPC. */
#define REC_MAX_TAPS 4
int rec_session_add_tap(struct rec_session *s, const struct rec_tap_ops *ops, void *tap);
/* Record: make the trace, start the mode, run the rounds until the mode is
 * done, stop it, take in and drain what is left, finish the trace, finish
 * the taps. 0 with *sum filled in, or -1 with the reason in msg (nothing
 * was recorded; the program, if one was made, is killed when the session
 * is freed). */
int rec_session_run(struct rec_session *s, struct rec_summary *sum, char *msg, size_t msg_size);
/* Free the session and its mode. */
void rec_session_free(struct rec_session *s);

/* For taps. The recorder's clock at the start of the recording (ns). */
uint64_t rec_session_start_ns(const struct rec_session *s);
/* Process pid, a child a tap started (record --live's server), does not
 * keep the recording going: the tree is over when only such children are
 * left. 0, or -ENOSPC (at most REC_MAX_TAPS). */
int rec_session_add_helper(struct rec_session *s, pid_t pid);
/* The trace's path (its default name is made when the trace is). */
const char *rec_session_trace_path(const struct rec_session *s);
/* Has the first program ended (its wait status collected)? */
int rec_session_program_ended(const struct rec_session *s);
/* Its wait status into *status: 1, or 0 when it was not collected (a
 * program attached to, or left running). */
int rec_session_program_status(const struct rec_session *s, int *status);
/* The wait status of child pid, if a round has collected it: 1, else 0. */
int rec_session_child_status(const struct rec_session *s, pid_t pid, int *status);
/* Write out every event merged so far, in whole chunks, so that a reader
 * of the unfinished file sees them. 0 or -errno. */
int rec_session_flush(struct rec_session *s);

/* The modes. Each constructor does what comes before the trace exists
 * (checks, the socket, the program made but held), fills in the session
 * and returns 0, or -1 with the reason in msg (msg_size bytes). */

/* rec_mode_spawn.c: `record -- CMD`: run prog (found on PATH already) with
 * argv under the collector, follow its tree, end when every process of it
 * has ended; the exit status is the program's. */
int rec_mode_spawn(struct rec_session *s, const char *prog, char *const argv[], char *msg,
                   size_t msg_size);
/* rec_mode_attach.c: `record -p PID`: load the attach collector into the
 * running process pid (ptrace), record until it ends, duration_ns passes
 * (0: no limit) or a signal asks to detach; the exit status is 0. */
int rec_mode_attach(struct rec_session *s, pid_t pid, uint64_t duration_ns, char *msg,
                    size_t msg_size);
/* rec_mode_serve.c: `record --serve --pid PID`: the recorder a collector
 * started for itself (no wrapper), on the socket it hands over; ends when
 * no process of the tree is left that could still say hello. */
int rec_mode_serve(struct rec_session *s, pid_t pid, char *msg, size_t msg_size);
/* rec_mode_wine.c: `record -- prog.exe`: a Windows program (machine: its
 * PE header's, from rec_win_pe_machine) run with argv under Wine by the
 * Windows launcher, whose event file is read each round; the exit status
 * is the program's. */
int rec_mode_wine(struct rec_session *s, const char *prog, unsigned machine, char *const argv[],
                  char *msg, size_t msg_size);
/* rec_win.c: 0 for a file that is no PE image (or cannot be read), else
 * the machine of its PE header (0x8664 x86-64, 0x14c i386). By content,
 * not name. */
unsigned rec_win_pe_machine(const char *path);
/* rec_check.c: find cmd on PATH (or take it as a path if it has a '/').
 * Returns a malloc'd path or NULL with errno set. */
char *rec_resolve_command(const char *cmd);

#endif
