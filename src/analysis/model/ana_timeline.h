/* SPDX-License-Identifier: MIT */
/* Use over time, one row per interval and process image: heap in use at
 * the interval's end and its maximum within it, bytes and blocks allocated
 * so far ("total cumulative memory usage"), live blocks, and
 * the latest RSS sample, and committed and reserved memory. Rows are kept (they grow
 * with duration/interval, not with events); the heap numbers come from
 * ana_model, committed and reserved from the address-space model (ana_vm), both fed by
 * the same pass over the trace. */
#ifndef ANA_TIMELINE_H
#define ANA_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/core/ana_filter.h"
#include "analysis/core/ana_scan.h"
#include "memscribe/trace.h"

/* More rows than this is certainly an interval typed wrong. */
#define ANA_TIMELINE_MAX_ROWS 10000000u

struct ana_timeline_row {
    uint64_t t_ns; /* end of the interval (the last row: the last event) */
    uint32_t image;
    uint32_t pid;
    uint64_t heap;            /* heap in use at t */
    uint64_t heap_max;        /* its maximum within the interval */
    uint64_t allocated_bytes; /* cumulative */
    uint64_t nr_allocs;       /* cumulative */
    uint64_t live_blocks;
    uint64_t nr_temporary; /* cumulative: the blocks found temporary by t (ana_model's rule) */
    uint64_t rss;          /* latest sample at t, 0 if none yet */
    bool has_rss;
    /* A sampled trace's counted totals at t (ana_exact.h), as last
     * written before it: heap in use in usable bytes, allocations,
     * temporary allocations; has_exact: its image has counters. */
    bool has_exact;
    uint64_t exact_usable, exact_allocs, exact_temporary;
    uint64_t committed; /* mapped with access at t (ana_vm; docs/vmem.md) */
    uint64_t reserved;  /* mapped without access (PROT_NONE, MEM_RESERVE) at t */
};

struct ana_timeline {
    uint64_t interval_ns;
    uint64_t asked_ns; /* the interval asked (0: the default) */
    /* A range (timeline --from, --to; the live view's zoom): rows at
     * from_ns (the state then, heap_max its heap), every interval after it,
     * and at to_ns, or at the trace's end if that comes first (the state
     * after the last event), none elsewhere. The whole trace: 0 and
     * UINT64_MAX, rows at each multiple of the interval and at the end. In
     * an aggregated trace from_ns is a cut at or before the one asked and
     * to_ns one at or after it. */
    uint64_t from_ns, to_ns;
    /* An aggregated trace's period (0: exact): interval_ns is a multiple
     * of it (the one asked, or rounded up to one), and a row at t holds
     * the events at t too (the rows of the interval a cut ends). */
    uint64_t aggregate_ns;
    uint64_t nr_intervals;         /* rows per process image at most */
    uint32_t nr_images;            /* process images the filter selects */
    uint64_t nr_rows_needed;       /* rows they make, each from its start on */
    struct ana_timeline_row *rows; /* in time order, images in order within a time */
    size_t nr_rows, cap_rows;
    /* The trace has mappings that libc, ld.so or pthread_create made
     * themselves (recorded by record --vm-precise): without them committed
     * moves only with the program's own mmap calls. */
    bool vm_precise;
    /* From the chunks' totals (ana_timeline_from_totals): rows at chunk
     * ends (those of the range, at least an interval asked apart, then at
     * every chunk_stride-th of them, the last always, when a bound on the
     * points asks so), interval_ns 0, no committed or reserved memory. */
    bool index;
    uint32_t chunk_stride;
    /* private: what the rows are read off, during the pass */
    struct ana_model *m_;
    const struct ana_vm_replay *vm_;
    uint64_t end_ns_;
    uint64_t first_moment_, last_moment_; /* of the heap replay (ana_timeline_follow) */
    bool first_; /* the range's first moment comes: heap_max is the heap then */
};

/* The range and interval of a timeline (ana_timeline_compute_range). */
struct ana_timeline_range {
    uint64_t interval_ns;    /* 0: about 100 rows over the range */
    uint64_t from_ns, to_ns; /* 0 and UINT64_MAX: the whole trace */
};

/* interval_ns 0 picks one that gives about 100 intervals (in an
 * aggregated trace, a multiple of its period: see aggregate_ns). Returns 0,
 * -E2BIG (the interval makes more than ANA_TIMELINE_MAX_ROWS rows),
 * -EOVERFLOW (the selected images make nr_rows_needed rows, more than the
 * cap: too many processes; nothing is allocated), -errno. */
int ana_timeline_compute(struct ana_timeline *tl, struct fmt_reader *r, struct ana_filter *f,
                         uint64_t interval_ns, ana_progress_fn *progress, void *progress_arg);
/* The same, keeping the heap model the rows were read off in *model
 * (finished; the caller destroys it), or NULL: none kept. Its scopes
 * only: its sites went at their images' ends (a build's replay keeps the
 * running processes'). */
struct ana_model;
int ana_timeline_compute_model(struct ana_timeline *tl, struct fmt_reader *r, struct ana_filter *f,
                               uint64_t interval_ns, ana_progress_fn *progress, void *progress_arg,
                               struct ana_model **model);

/* The interval of a timeline over span_ns asked with none: about 100 rows
 * (at least 1 ns). */
uint64_t ana_timeline_default_interval(uint64_t span_ns);

/* The same over a range (struct ana_timeline_range), with more consumers
 * on the pass: more(more_arg, p, m, tl) is called once the timeline is
 * subscribed (tl->interval_ns is known) and subscribes what it wants to p,
 * which reads m (ana_timeline_follow: at the rows' moments); 0 or -errno.
 * -ERANGE: the range starts after the trace's last event. */
struct ana_heap_replay;
typedef int ana_timeline_more_fn(void *arg, struct ana_heap_replay *p, struct ana_model *m,
                                 const struct ana_timeline *tl);
int ana_timeline_compute_range(struct ana_timeline *tl, struct fmt_reader *r, struct ana_filter *f,
                               const struct ana_timeline_range *range, ana_progress_fn *progress,
                               void *progress_arg, ana_timeline_more_fn *more, void *more_arg);

/* The same rows from a pass shared with other outputs: the heap replay p
 * feeds the model m (made with p's filter: ana_model_subscribe) and the
 * address-space replay vm (every event of every process:
 * ana_heap_replay_add_vm), and tl reads them at its moments (every
 * interval) and at the end of the pass (the last row). r: the trace p
 * reads. Returns as ana_timeline_compute(), before the pass, or
 * -E2BIG for too many consumers. */
struct ana_heap_replay;
struct ana_vm_replay;
int ana_timeline_subscribe(struct ana_timeline *tl, struct ana_heap_replay *p, struct fmt_reader *r,
                           uint64_t interval_ns, struct ana_model *m,
                           const struct ana_vm_replay *vm);
/* The same over a range. */
int ana_timeline_subscribe_range(struct ana_timeline *tl, struct ana_heap_replay *p,
                                 struct fmt_reader *r, const struct ana_timeline_range *range,
                                 struct ana_model *m, const struct ana_vm_replay *vm);
void ana_timeline_release(struct ana_timeline *tl);

/* The time of the last row, the state after the last event, which the
 * pass's finish makes: the trace's last time, or UINT64_MAX when the
 * range ends before it or starts after it (valid once subscribed). */
uint64_t ana_timeline_end(const struct ana_timeline *tl);

/* Subscribe ops (arg) to p at the moments of tl's rows (subscribed to p
 * before): every interval, or over the range, after the events at a
 * moment's time in an aggregated trace, as the rows are read. Its finish
 * reads the last row's state at ana_timeline_end. Returns as
 * ana_heap_replay_subscribe. */
struct ana_heap_replay_ops;
int ana_timeline_follow(const struct ana_timeline *tl, struct ana_heap_replay *p,
                        const struct ana_heap_replay_ops *ops, void *arg);

/* timeline --index (format 1.10): a row per image at the end of each
 * chunk from the chunks' totals and summaries, no event decoded (see
 * ana_timeline_index.c), and with se the series of the n sites stacks
 * (their live bytes at the same ends). range (NULL: the whole trace, no
 * interval) narrows the rows to the chunks that hold it (from the first
 * that ends at or after from_ns to the first that ends at or after
 * to_ns), each row's end at least range->interval_ns after the row
 * before (the last one always); the totals hold nothing finer than a
 * chunk. max_points (0: no bound) bounds the rows of each image: then
 * the rows are at every k-th of those ends and the last, k the smallest
 * that fits (tl->chunk_stride). Each row's heap_max is the highest since
 * the row before (the first's: inside its chunk). Returns 0, -ERANGE (the
 * range starts after the last chunk), -EOVERFLOW (too many rows), -EPROTO
 * (corrupt totals: the reader's error says why), -ENOMEM.
 * ana_timeline_index_refusal says why it cannot (no totals, a selection,
 * the index's reasons), or NULL. */
struct ana_site_series;
const char *ana_timeline_index_refusal(struct fmt_reader *r, const struct ana_filter *f);
int ana_timeline_from_totals(struct ana_timeline *tl, struct fmt_reader *r,
                             const struct ana_timeline_range *range, const uint32_t *stacks,
                             uint32_t n, struct ana_site_series *se, uint64_t max_points);

/* Does image's committed column never change (or has it no rows)? */
bool ana_timeline_committed_flat(const struct ana_timeline *tl, uint32_t image);

#endif
