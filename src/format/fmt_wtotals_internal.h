/* SPDX-License-Identifier: MIT */
/* The writer's chunk totals (format 1.10, optional feature bit TOTALS;
 * docs/format-blocks.md, "TOTALS"): for each process image with events in the
 * chunk being built, what a range of a parallel replay counts of it
 * (ana_pmodel.c): its calls by kind, the change of its heap and the
 * highest that change reached after a block started or ended, its RSS
 * samples' highest and latest, its exit; and per stack (beside the live
 * deltas, fmt_wdelta_internal.h) the blocks it started and its temporary
 * allocations, decided by heaptrack's rule per thread as the analysis's
 * stepper decides it (ana_step.h). With the all-processes part (format
 * 1.11, feature bit TOTALS_ALL), also the change of the heap of the
 * running processes over the chunk, which an exit lowers by that image's
 * whole heap, and the highest that change reached, as the stepper's heap
 * of a whole trace moves. A report then merges the chunks' totals instead
 * of replaying their events (report --index).
 *
 * The hot path: the current context's image entry and thread slot, kept
 * until the context changes (fmt_wtot_event); memory follows the images
 * one chunk touches, and a word per thread of the trace. A writer without
 * totals never comes here (its fast paths are compiled without them,
 * fmt_wevent.c). */
#ifndef FMT_WTOTALS_INTERNAL_H
#define FMT_WTOTALS_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "memscribe/event.h"

struct fmt_wtimg {
    uint32_t image, pid;
    bool has_rss, ended;
    uint64_t first_ns, last_ns;
    int64_t heap, blocks;      /* change over the chunk so far */
    int64_t peak, peak_blocks; /* the highest heap change after a block started or ended */
    uint64_t peak_ns;
    uint64_t start_maps, carried, carried_bytes, arena_maps, unmatched, dropped;
    uint64_t allocs, alloc_bytes; /* blocks started by calls, their bytes */
    uint64_t rss_max, rss_max_ns, rss_last, rss_last_ns, end_ns;
    bool gone; /* exited, in this chunk or before: its blocks are not running */
    uint64_t calls[FMT_TOTALS_KEYS], failed[FMT_TOTALS_KEYS];
};

struct fmt_wtimg_at {
    uint64_t gen;         /* chunk number + 1 when the image is in v */
    uint32_t idx;         /* its index in v then */
    bool gone;            /* exited in a chunk before */
    int64_t heap, blocks; /* its heap and live blocks at the chunk's start */
    uint64_t rss;         /* its latest RSS sample */
};

/* The all-processes part (TOTALS_ALL): the running processes' heap and
 * live blocks, their change over the chunk so far, and the highest that
 * change reached after a block of a running process started or ended
 * (INT64_MIN: none yet), first reached; their RSS and its highest in the
 * chunk. */
struct fmt_wtall {
    int64_t heap, blocks;
    int64_t peak, peak_blocks;
    uint64_t peak_ns;
    uint64_t rss;                 /* the sum of their latest RSS samples (not a change) */
    bool has_rss;                 /* an RSS sample in the chunk: */
    uint64_t rss_max, rss_max_ns; /* the highest sum after one, first reached */
};

/* A thread's serial of its latest heap event if it started a block, else
 * 0. In a struct of its own: a store through a plain uint64_t pointer
 * could alias every counter, which the hot path would then load again
 * (gcc's type-based aliasing follows the struct). */
struct fmt_wthr {
    uint64_t last;
};

struct fmt_wtotals {
    bool on;             /* feature bit TOTALS */
    struct fmt_wtimg *v; /* the chunk's images, in the order of their first event */
    uint32_t nr, cap;
    struct fmt_wtimg_at *at; /* per image: where in v it is */
    uint32_t nr_at;
    struct fmt_wthr *thr_last; /* by thread */
    uint32_t nr_thr;
    struct fmt_wtimg *cur; /* the current event's image (fmt_wtot_event); NULL at a chunk's
                              start, and always without totals */
    struct fmt_wthr *thr;  /* the current event's thread's in thr_last */
    struct fmt_wtall all;  /* the chunk's all-processes part, */
    bool multi;            /* followed event by event once the chunk holds a second
                              image or an exit: before, it is its one image's */
    uint32_t ctx;          /* the writer's context of cur and thr */
    uint64_t ts;           /* the time of cur's latest event */
};

/* fmt_wtot_event() when the context changed (or at a chunk's start): who's
 * image's entry and thread's slot become the current ones. Returns 0 or
 * -ENOMEM. */
struct fmt_writer_who;
int fmt_wtot_switch(struct fmt_wtotals *t, uint64_t gen, uint32_t ctx,
                    const struct fmt_writer_who *who, uint64_t ts_ns);

/* An event of context ctx (who) at ts_ns in the chunk of generation gen,
 * in a writer with totals (t->on: its callers ask). The context of the
 * event before, the usual case, keeps its entry and slot. Returns 0 or
 * -ENOMEM. */
static inline int fmt_wtot_event(struct fmt_wtotals *t, uint64_t gen, uint32_t ctx,
                                 const struct fmt_writer_who *who, uint64_t ts_ns)
{
    struct fmt_wtimg *e = t->cur;

    /* cur is NULL at each chunk's start (fmt_wtot_put); an image's last
     * time is kept when its context is left (its last event's, t->ts) */
    if (__builtin_expect(e && t->ctx == ctx, 1)) {
        t->ts = ts_ns;
        return 0;
    }
    return fmt_wtot_switch(t, gen, ctx, who, ts_ns);
}

/* The call of the current event (not a snapshot's copy). */
static inline void fmt_wtot_call(struct fmt_wtotals *t, unsigned kind, unsigned flags)
{
    struct fmt_wtimg *e = t->cur;

    if (!e)
        return;
    unsigned key = fmt_totals_key(kind, flags);
    e->calls[key]++;
    e->failed[key] += (flags & FMT_EVF_FAILED) != 0;
}

/* The current event's rarer parts: a snapshot's copy, an mmap (pymalloc's
 * arenas), an RSS sample, a drop count, an exit. */
void fmt_wtot_other(struct fmt_wtotals *t, const struct fmt_event *ev);

/* A heap block of size bytes starts (made: a call's, not a snapshot's
 * copy); its serial. The image's heap and blocks are followed for its
 * peak: checked after each start (after the whole event: a realloc ends
 * its old block first), the stepper's rule. */
static inline void fmt_wtot_start(struct fmt_wtotals *t, uint64_t size, uint64_t serial, bool made,
                                  uint64_t ts_ns)
{
    struct fmt_wtimg *e = t->cur;

    if (!e)
        return;
    t->thr->last = made ? serial : 0;
    e->allocs += made;
    e->alloc_bytes += size & -(uint64_t)made;
    e->heap += (int64_t)size;
    e->blocks++;
    if (e->heap > e->peak) {
        e->peak = e->heap;
        e->peak_ns = ts_ns;
        e->peak_blocks = e->blocks;
    }
    if (__builtin_expect(!t->multi || e->gone, 1))
        return;
    t->all.heap += (int64_t)size;
    t->all.blocks++;
    if (t->all.heap > t->all.peak) {
        t->all.peak = t->all.heap;
        t->all.peak_ns = ts_ns;
        t->all.peak_blocks = t->all.blocks;
    }
}

/* The heap block serial of size bytes ends: true if it was temporary (its
 * thread's latest heap event was its start). check: the event starts no
 * block after it (a free, a realloc that fails or frees; a realloc's start
 * checks the peak itself): the peak checked. */
static inline bool fmt_wtot_end(struct fmt_wtotals *t, uint64_t size, uint64_t serial, bool check,
                                uint64_t ts_ns)
{
    struct fmt_wtimg *e = t->cur;

    if (!e)
        return false;
    bool temp = t->thr->last == serial;
    t->thr->last = 0;
    e->heap -= (int64_t)size;
    e->blocks--;
    /* a free lowers the heap: a peak only if none yet in the chunk */
    if (check && __builtin_expect(e->peak == INT64_MIN, 0)) {
        e->peak = e->heap;
        e->peak_ns = ts_ns;
        e->peak_blocks = e->blocks;
    }
    if (__builtin_expect(!t->multi || e->gone, 1))
        return temp;
    t->all.heap -= (int64_t)size;
    t->all.blocks--;
    if (check && __builtin_expect(t->all.peak == INT64_MIN, 0)) {
        t->all.peak = t->all.heap;
        t->all.peak_ns = ts_ns;
        t->all.peak_blocks = t->all.blocks;
    }
    return temp;
}

/* A free or realloc that ends no block names an address never seen. */
static inline void fmt_wtot_unmatched(struct fmt_wtotals *t, uint64_t addr)
{
    if (t->cur && addr)
        t->cur->unmatched++;
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
