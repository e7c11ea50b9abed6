/* SPDX-License-Identifier: MIT */
/* What the exporters share: an output sink with optional compression, the
 * export's passes of the heap replay (which block an event starts and
 * ends, and whether the ended one was temporary), the per-stack model
 * built in the first, the blocks left live, and symbolized stacks. */
#ifndef ANA_EXPORT_INTERNAL_H
#define ANA_EXPORT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/core/ana_ended.h"
#include "analysis/core/ana_map.h"
#include "analysis/core/ana_sample.h"
#include "analysis/export/ana_export_api.h"
#include "analysis/model/ana_heap_replay.h"
#include "analysis/model/ana_model.h"
#include "analysis/model/ana_step.h"
#include "analysis/sym/ana_symbolize.h"
#include "memscribe/trace.h"

/* ---- Output sink: buffered writes to an fd, plain, gzip or zstd. The
 * first error sticks; every later call is a no-op returning it. */
struct ana_xout;

int ana_xout_open(struct ana_xout **out, int fd, enum ana_export_compress c);
int ana_xout_write(struct ana_xout *o, const void *p, size_t n);
__attribute__((format(printf, 2, 3))) int ana_xout_printf(struct ana_xout *o, const char *fmt, ...);
/* Write len bytes of s with JSON escaping (no quotes added), through the
 * one JSON escaper, ana_json_escape(). */
int ana_xout_json_strn(struct ana_xout *o, const char *s, size_t len);
/* Flush, end the compressed stream, free. Returns the first error. */
int ana_xout_close(struct ana_xout *o);

/* ---- An export: one or two passes of the heap replay (ana_heap_replay.h)
 * shared by every output, the model they read, and one symbolizer.
 *
 * Each output is a job. Its exporter's run (the table in
 * ana_export_run.c) subscribes what it reads to the passes and sets the
 * job's hooks; then the export replays pass 0 (every output's first
 * reading, and the model), calls each model_ready hook, replays pass 1 if
 * an output subscribed to it (one that places the model's peak, or its
 * times, in its stream: massif, DHAT, heaptrack), and calls each write
 * hook. The passes' filter is the export's (o->filter). */
struct ana_xrun;
struct ana_xmodel;

struct ana_export_job {
    struct ana_xrun *run;
    struct fmt_reader *r;
    const struct ana_export_options *o;
    struct ana_xout *out; /* the output stream (NULL: a database) */
    const char *path;     /* the output's file (the database's), or NULL */
    /* The passes. pass[1] is replayed only if something subscribed to it;
     * its steps count heap events (nr_steps) as pass[0]'s do. */
    struct ana_heap_replay *pass[2];
    /* The exporter's state and hooks (ana_xjob_state). */
    void *state;
    const struct ana_xjob_hooks *hooks;
    /* The job's output failed (SQLite's message in err), not its input. */
    int *output_failed;
    char *err;
    size_t err_size;
};

/* An exporter's hooks; any may be NULL. Each returns 0 or -errno. */
struct ana_xjob_hooks {
    int (*model_ready)(struct ana_export_job *job); /* after pass 0 */
    int (*write)(struct ana_export_job *job);       /* after the last pass */
    /* Always called, last, before the state is freed. */
    void (*release)(struct ana_export_job *job);
};

/* The job's state, size bytes zeroed (freed after hooks->release), and its
 * hooks. NULL: out of memory. */
void *ana_xjob_state(struct ana_export_job *job, size_t size, const struct ana_xjob_hooks *hooks);

/* The shared model of the export (ana_xmodel below), computed in pass 0
 * for every job that asks: NULL on allocation failure. Its numbers are
 * there from the model_ready hooks on. */
struct ana_xmodel *ana_xjob_model(struct ana_export_job *job);
/* The shared symbolizer, opened at the first call (NULL: *rc says why).
 * Its notes go to o->note when the export ends. */
struct ana_xsym *ana_xjob_sym(struct ana_export_job *job, int *rc);
/* ana_heap_replay_subscribe() to pass k of the job's export. */
int ana_xjob_subscribe(struct ana_export_job *job, unsigned k,
                       const struct ana_heap_replay_ops *ops, void *arg);

/* ---- The model: per-stack heap figures over the whole trace, taken from
 * the analysis core (ana_model.h) so that peak, leaked and temporary are
 * the numbers `memscribe report` prints. */
struct ana_xstack {
    uint64_t nr_allocs;   /* blocks started */
    uint64_t alloc_bytes; /* bytes requested */
    uint64_t nr_temporary;
    uint64_t live_blocks; /* at the end of the trace: leaked */
    uint64_t live_bytes;
    uint64_t peak_bytes; /* live at the peak instant (all images) */
};

struct ana_xmodel {
    uint32_t nr_stacks;        /* ids 0..nr_stacks; 0 = no stack */
    struct ana_xstack *stacks; /* nr_stacks + 1 entries */
    uint64_t nr_allocs;
    uint64_t alloc_bytes;
    uint64_t nr_temporary;
    uint64_t live_blocks; /* at the end */
    uint64_t live_bytes;
    uint64_t peak_bytes; /* maximum of heap in use, after an event */
    uint64_t peak_blocks;
    uint64_t peak_ts_ns;
    uint64_t peak_step; /* the pass's ordinal (nr_steps) of the heap event whose
                           step reached the peak; 0: none */
    uint64_t first_ts_ns;
    uint64_t end_ts_ns; /* last event's time */
    /* private: filled during the pass */
    struct ana_model *model_;
    const struct ana_heap_replay *pass_;
    bool seen_;
};

/* Make m (for the trace r reads) and subscribe what fills it to the pass
 * p, whose filter chooses the processes. Its numbers are there after the
 * pass; release it in any case. Returns 0 or -errno. */
int ana_xmodel_subscribe(struct ana_xmodel *m, struct ana_heap_replay *p, struct fmt_reader *r);
void ana_xmodel_release(struct ana_xmodel *m);
/* m's times (first_ts_ns, end_ts_ns), peak (peak_step, peak_bytes,
 * peak_ts_ns) and heap at the end (live_bytes) from the steps of the pass
 * p alone, without the model or its sites (nr_stacks 0, stacks NULL):
 * what massif on a process tree reads. 0 or -errno. */
int ana_xmodel_subscribe_times(struct ana_xmodel *m, struct ana_heap_replay *p);
/* For an output that writes each process at its end (ana_export_streams):
 * *m, a model of its own fed by the job's pass 0 (its filter) that hands
 * each image's sites to retire(job, ...) at the image's end. Returns 0 or
 * -errno. */
int ana_xjob_retiring_model(struct ana_export_job *job, ana_model_retire_fn *retire,
                            struct ana_model **m);
/* One pass over r (with o's filter and progress) into m. Returns 0 or
 * -errno. */
int ana_xmodel_build(struct fmt_reader *r, const struct ana_export_options *o,
                     struct ana_xmodel *m);

/* ---- The blocks a pass leaves live, as their allocations said: for the
 * exporters that list every block, ended ones as they end and the rest
 * last (csv, sqlite). Memory grows with live blocks. */
struct ana_xlive {
    struct ana_map blocks; /* serial -> struct fmt_event of its allocation, cut down */
};

void ana_xlive_init(struct ana_xlive *l);
void ana_xlive_release(struct ana_xlive *l);
/* Follow one step: a block it ends leaves (*kind its allocation's kind,
 * FMT_EV_MALLOC if unknown), a block it starts is kept. 0 or -ENOMEM. */
int ana_xlive_step(struct ana_xlive *l, const struct fmt_event *ev, const struct ana_step *st,
                   uint32_t *kind);
/* fn for each block still live, in trace order, with the fields of its
 * allocation (serial, kind, image, thread, addr, size, stack, ts_ns) set.
 * fn returns 0, or -errno to stop. Returns 0 or -errno. */
typedef int ana_xlive_fn(void *arg, const struct fmt_event *ev);
int ana_xlive_each(const struct ana_xlive *l, ana_xlive_fn *fn, void *arg);
/* ana_xlive_each for image's blocks only; with take they then leave l (an
 * image that ended: they stay live to the end). Returns 0 or -errno. */
int ana_xlive_each_of(struct ana_xlive *l, uint32_t image, bool take, ana_xlive_fn *fn, void *arg);

/* ---- Scratch files (ana_export_scratch.c): what an exporter keeps of the
 * processes of a tree that ended, out of memory until the end (csv's
 * rows, DHAT's program points). */

/* A file opened for reading and writing and already unlinked, in $TMPDIR,
 * else /tmp (what names it where O_TMPFILE is not supported). Returns the
 * descriptor or -errno. */
int ana_xscratch_open(const char *what);
/* n bytes of p at pos, all of them. 0 or -errno. */
int ana_xscratch_write(int fd, uint64_t pos, const void *p, size_t n);
/* n bytes at pos into p, all of them. 0, -EIO (the file is shorter) or -errno. */
int ana_xscratch_read(int fd, uint64_t pos, void *p, size_t n);

/* Appends to a scratch file through a buffer; zeroed with fd set, it
 * appends from the file's start (len: where to append from). */
struct ana_xscratch_out {
    int fd;
    uint64_t len; /* written to the file; buf's nr bytes follow */
    size_t nr;
    unsigned char buf[64 * 1024];
};

/* Where the next byte appended goes. */
static inline uint64_t ana_xscratch_end(const struct ana_xscratch_out *o)
{
    return o->len + o->nr;
}
/* Append n bytes of p. 0 or -errno. */
int ana_xscratch_append(struct ana_xscratch_out *o, const void *p, size_t n);
/* Write what the buffer holds. 0 or -errno. */
int ana_xscratch_flush(struct ana_xscratch_out *o);
/* n bytes appended at pos, from the file or the buffer. 0 or -errno. */
int ana_xscratch_read_back(const struct ana_xscratch_out *o, uint64_t pos, void *p, size_t n);

/* Reads of a scratch file of len bytes through a window, for reads in
 * about the order of the file; zeroed with fd and len set, it is ready
 * (its buf freed after). Reset nr to 0 when the file changes. */
struct ana_xscratch_win {
    int fd;
    uint64_t len;
    uint64_t pos; /* of buf[0] */
    size_t nr, cap;
    unsigned char *buf;
};

/* *p: n bytes at pos, valid until the next call. 0 or -errno (-EIO: past
 * len). */
int ana_xscratch_get(struct ana_xscratch_win *w, uint64_t pos, size_t n, const void **p);

/* ---- Symbolized stacks. */
struct ana_xsym {
    struct fmt_reader *r;
    const struct ana_export_options *o;
    struct ana_sym *sym;
    struct ana_sym_stack raw; /* as the symbolizer gives it */
    struct ana_sym_stack st;  /* raw with its strings escaped */
    struct ana_sym_frame *frames;
    uint32_t cap_frames;
    /* Each string the symbolizer gave (they live as long as it does), by
     * its address: itself when it needs no escaping, else its escaped copy,
     * made once and kept in owned until close. */
    struct ana_map escaped;
    char **owned;
    uint32_t nr_owned, cap_owned;
    uint64_t *addrs;
    uint32_t cap_addrs;
};

/* Create the symbolizer (o->sym) and give it every module of the trace. */
int ana_xsym_open(struct ana_xsym *x, struct fmt_reader *r, const struct ana_export_options *o);
/* Pass the symbolizer's notes to o->note, and free it. */
void ana_xsym_close(struct ana_xsym *x);
/* Symbolize stack id (0: an empty stack), leaf first, allocator frames
 * cut. The frames' function, file and module are escaped (ana_text.h:
 * valid UTF-8, control characters as \xHH), since the program chose
 * their bytes. *out stays valid until the next call. Returns 0 or -errno. */
int ana_xsym_stack(struct ana_xsym *x, uint32_t id, const struct ana_sym_stack **out,
                   uint32_t *image);
/* A frame's short name: the function, else "module+0xOFF", else "0xADDR".
 * Returns buf (or the symbolizer's string). */
const char *ana_xsym_name(const struct ana_sym_frame *f, char *buf, size_t size);
/* s (len bytes; words: NUL-separated, as a command line) escaped as
 * ana_text.h says, in a new string the caller frees; NULL: out of memory. */
char *ana_xtext(const char *s, size_t len, bool words);
/* The last path component of a module, or "???" */
const char *ana_xsym_basename(const char *path);

/* ---- The exporters' runs (the table in ana_export_run.c): each sets
 * up its job as above. Returns 0 or -errno. */
int ana_export_folded(struct ana_export_job *job);
bool ana_export_folded_streams(const struct fmt_reader *r);
int ana_export_csv(struct ana_export_job *job);
bool ana_export_csv_streams(const struct fmt_reader *r);
int ana_export_pprof(struct ana_export_job *job);
bool ana_export_pprof_streams(const struct fmt_reader *r);
int ana_export_massif(struct ana_export_job *job);
bool ana_export_massif_streams(const struct fmt_reader *r);
int ana_export_dhat(struct ana_export_job *job);
bool ana_export_dhat_streams(const struct fmt_reader *r);
int ana_export_heaptrack(struct ana_export_job *job);
bool ana_export_heaptrack_streams(const struct fmt_reader *r);
int ana_export_sqlite(struct ana_export_job *job);
bool ana_export_sqlite_streams(const struct fmt_reader *r);

#endif
