/* SPDX-License-Identifier: MIT */
/* The writer's chunk totals (format 1.10, optional feature bit TOTALS;
 * docs/format.md, "TOTALS"): for each process image with events in the
 * chunk being built, what a range of a parallel replay counts of it
 * (ana_pmodel.c): its calls by kind, the change of its heap and the
 * highest that change reached after a block started or ended, its RSS
 * samples' highest and latest, its exit; and per stack (beside the live
 * deltas, fmt_wdelta_internal.h) the blocks it started and its temporary
 * allocations, decided by heaptrack's rule per thread as the analysis's
 * stepper decides it (ana_step.h). A report then merges the chunks'
 * totals instead of replaying their events (report --index).
 *
 * The hot path: one entry per event, fetched by image (the last image's
 * without a lookup); memory follows the images one chunk touches, and a
 * word per thread of the trace. */
#ifndef FMT_WTOTALS_INTERNAL_H
#define FMT_WTOTALS_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "memscribe/event.h"

/* Call keys (docs/format.md, "TOTALS"): kind, + 64 for a pool's call, +
 * 128 for a free a heap's destruction made. */
#define FMT_TOT_KEYS 256

static inline unsigned fmt_tot_key(unsigned kind, unsigned flags)
{
    return (kind & 63) | (flags & FMT_EVF_POOL ? 64 : 0) |
           (flags & FMT_EVF_HEAP_DESTROYED ? 128 : 0);
}

struct fmt_wtimg {
    uint32_t image, pid;
    bool has_peak, has_rss, ended;
    uint64_t first_ns, last_ns;
    int64_t heap, blocks;      /* change over the chunk so far */
    int64_t peak, peak_blocks; /* the highest heap change after a block started or ended */
    uint64_t peak_ns;
    uint64_t start_maps, carried, carried_bytes, arena_maps, unmatched, dropped;
    uint64_t allocs, alloc_bytes; /* blocks started by calls (the stacks' sum: a timeline's) */
    uint64_t rss_max, rss_max_ns, rss_last, rss_last_ns, end_ns;
    uint64_t calls[FMT_TOT_KEYS], failed[FMT_TOT_KEYS];
};

struct fmt_wtimg_at {
    uint64_t gen; /* chunk number + 1 when the image is in v */
    uint32_t idx; /* its index in v then */
};

struct fmt_wtotals {
    bool on;             /* feature bit TOTALS */
    struct fmt_wtimg *v; /* the chunk's images, in the order of their first event */
    uint32_t nr, cap;
    struct fmt_wtimg_at *at; /* per image: where in v it is */
    uint32_t nr_at;
    uint64_t *thr_last; /* per thread: its latest heap event's serial if it started a block */
    uint32_t nr_thr;
    struct fmt_wtimg *cur; /* the current event's image (fmt_wtot_event); NULL at a chunk's start */
    uint32_t cur_thread;
    bool changed; /* the current event started or ended a heap block */
};

/* The entry of image in the chunk of generation gen, made if new; NULL if
 * out of memory. */
struct fmt_wtimg *fmt_wtot_img_slow(struct fmt_wtotals *t, uint64_t gen, uint32_t image,
                                    uint32_t pid, uint64_t ts_ns);

/* The slot of thread's latest heap event, NULL if out of memory. */
uint64_t *fmt_wtot_thread_slow(struct fmt_wtotals *t, uint32_t thread);

static inline uint64_t *fmt_wtot_thread(struct fmt_wtotals *t, uint32_t thread)
{
    return thread < t->nr_thr ? &t->thr_last[thread] : fmt_wtot_thread_slow(t, thread);
}

/* An event of (image, pid, thread) at ts_ns in the chunk of generation
 * gen: its image's entry becomes the current one. Returns 0 or -ENOMEM. */
static inline int fmt_wtot_event(struct fmt_wtotals *t, uint64_t gen, uint32_t image, uint32_t pid,
                                 uint32_t thread, uint64_t ts_ns)
{
    struct fmt_wtimg *e = t->cur;

    if (!t->on)
        return 0;
    /* cur is forgotten at each chunk's end (fmt_wtot_put) */
    if (!e || e->image != image) {
        e = image < t->nr_at && t->at[image].gen == gen
                ? &t->v[t->at[image].idx]
                : fmt_wtot_img_slow(t, gen, image, pid, ts_ns);
        if (!e)
            return -ENOMEM;
        t->cur = e;
    }
    e->last_ns = ts_ns;
    t->cur_thread = thread;
    t->changed = false;
    return 0;
}

/* The call of the current event (not a snapshot's copy). */
static inline void fmt_wtot_call(struct fmt_wtotals *t, unsigned kind, unsigned flags)
{
    if (!t->on)
        return;
    unsigned key = fmt_tot_key(kind, flags);
    t->cur->calls[key]++;
    t->cur->failed[key] += (flags & FMT_EVF_FAILED) != 0;
}

/* The current event's rarer parts: a snapshot's copy, an mmap (pymalloc's
 * arenas), an RSS sample, a drop count, an exit. */
void fmt_wtot_other(struct fmt_wtotals *t, const struct fmt_event *ev);

/* A heap block of size bytes starts (made: a call's, not a snapshot's
 * copy); its serial. */
static inline int fmt_wtot_start(struct fmt_wtotals *t, uint64_t size, uint64_t serial, bool made)
{
    if (!t->on)
        return 0;
    uint64_t *last = fmt_wtot_thread(t, t->cur_thread);
    if (!last)
        return -ENOMEM;
    *last = made ? serial : 0;
    t->cur->allocs += made;
    t->cur->alloc_bytes += made ? size : 0;
    t->cur->heap += (int64_t)size;
    t->cur->blocks++;
    t->changed = true;
    return 0;
}

/* The heap block serial of size bytes ends: 1 if it was temporary (its
 * thread's latest heap event was its start), 0 if not, -ENOMEM. */
static inline int fmt_wtot_end(struct fmt_wtotals *t, uint64_t size, uint64_t serial)
{
    if (!t->on)
        return 0;
    uint64_t *last = fmt_wtot_thread(t, t->cur_thread);
    if (!last)
        return -ENOMEM;
    int temp = *last == serial;
    *last = 0;
    t->cur->heap -= (int64_t)size;
    t->cur->blocks--;
    t->changed = true;
    return temp;
}

/* A free or realloc that ends no block names an address never seen. */
static inline void fmt_wtot_unmatched(struct fmt_wtotals *t, uint64_t addr)
{
    if (t->on && addr)
        t->cur->unmatched++;
}

/* After the current event: a new highest heap change if it started or
 * ended a block (the stepper's peak, in partial mode). */
static inline void fmt_wtot_after(struct fmt_wtotals *t, uint64_t ts_ns)
{
    struct fmt_wtimg *e = t->cur;

    if (!t->changed)
        return;
    if (!e->has_peak || e->heap > e->peak) {
        e->has_peak = true;
        e->peak = e->heap;
        e->peak_ns = ts_ns;
        e->peak_blocks = e->blocks;
    }
}

/* Append the chunk's TOTALS record (number chunk, first time base_ns) to
 * defs, the stacks' counts from the chunk's deltas, and forget the chunk.
 * Returns 0 or -ENOMEM. */
struct fmt_buf;
struct fmt_wdeltas;
int fmt_wtot_put(struct fmt_wtotals *t, struct fmt_buf *defs, uint64_t chunk, uint64_t base_ns,
                 struct fmt_wdeltas *d);

void fmt_wtot_destroy(struct fmt_wtotals *t);

#endif
