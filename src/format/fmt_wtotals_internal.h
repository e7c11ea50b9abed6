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
 * of a whole trace moves. With the programs' part (format 1.12, feature
 * bit TOTALS_PROGS; fmt_wtgroups.c), the same of each program's running
 * processes (the processes of one executable, as the per-program view
 * groups them), for each program two of whose processes had events in the
 * chunk, or one that exited: where a program's highest cannot be told
 * from its processes' own. A report then merges the chunks' totals instead
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
    bool gone;    /* exited, in this chunk or before: its blocks are not running */
    uint32_t grp; /* its program's part in the chunk's (gv), + 1; 0: none (exe unknown) */
    uint64_t calls[FMT_TOTALS_KEYS], failed[FMT_TOTALS_KEYS];
};

struct fmt_wtimg_at {
    uint64_t gen;         /* chunk number + 1 when the image is in v */
    uint32_t idx;         /* its index in v then */
    bool gone;            /* exited in a chunk before */
    int64_t heap, blocks; /* its heap and live blocks at the chunk's start */
    uint64_t rss;         /* its latest RSS sample */
    uint32_t group;       /* its program (fmt_wtgroups.c) + 1; 0: exe unknown */
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

/* A program's part of the chunk (TOTALS_PROGS): as the all-processes
 * part, of its processes only. */
struct fmt_wtgrp {
    uint32_t group, first_image;
    uint32_t nr; /* its images in the chunk */
    bool exits;  /* one of them exited in the chunk */
    bool late;   /* one joined it after a sample or a block of its own: no part */
    struct fmt_wtall part;
};

/* A program over the whole trace: its executable, its first image (which
 * names it in the record: a reader groups images by executable too), the
 * sum of its running processes' latest RSS samples, where its part of the
 * chunk being built is. */
struct fmt_wtprog {
    uint64_t hash;
    char *exe;
    uint32_t exe_len;
    uint32_t first_image;
    uint64_t rss;
    uint64_t gen; /* chunk number + 1 when it has a part in gv */
    uint32_t idx;
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
    struct fmt_wtimg *cur;    /* the current event's image (fmt_wtot_event); NULL at a chunk's
                                 start, and always without totals */
    struct fmt_wthr *thr;     /* the current event's thread's in thr_last */
    struct fmt_wtall all;     /* the chunk's all-processes part, */
    bool multi;               /* followed event by event once the chunk holds a second
                                 image or an exit: before, it is its one image's */
    uint32_t ctx;             /* the writer's context of cur and thr */
    uint64_t ts;              /* the time of cur's latest event */
    struct fmt_wtprog *progs; /* the programs, by id (fmt_wtgroups.c) */
    uint32_t nr_progs, cap_progs;
    uint32_t *by_hash; /* open addressing: program id + 1, 0 empty; size a power of 2 */
    uint32_t hash_size;
    struct fmt_wtgrp *gv; /* the programs' parts of the chunk */
    uint32_t nr_gv, cap_gv;
    uint64_t gen; /* the chunk's generation (number + 1) */
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
int fmt_wtot_other(struct fmt_wtotals *t, const struct fmt_event *ev);

/* The programs' parts (fmt_wtgroups.c): image e (its entry just made, or
 * its process just started) joins its program's part of the chunk;
 * PROCESS_START: e's image's program is the one of executable exe
 * (exe_len bytes; none when 0). Return 0 or -ENOMEM. */
int fmt_wtgrp_attach(struct fmt_wtotals *t, struct fmt_wtimg *e);
int fmt_wtgrp_start(struct fmt_wtotals *t, struct fmt_wtimg *e, const char *exe, uint32_t exe_len);
/* Append the parts of the programs two of whose images had events in the
 * chunk, or one exited, to b; then the chunk's parts are forgotten.
 * Returns 0 or -ENOMEM. */
struct fmt_buf;
int fmt_wtgrp_put(struct fmt_wtotals *t, struct fmt_buf *b, uint64_t base_ns);
void fmt_wtgrp_destroy(struct fmt_wtotals *t);
/* Part a of a chunk whose events start at base_ns, appended to b (room
 * for 8 varints made). */
void fmt_wtall_put(struct fmt_buf *b, const struct fmt_wtall *a, uint64_t base_ns);

/* A block of size bytes started in a running process: a part (the
 * all-processes', a program's) follows it. */
static inline void fmt_wtall_start(struct fmt_wtall *a, uint64_t size, uint64_t ts_ns)
{
    a->heap += (int64_t)size;
    a->blocks++;
    if (a->heap > a->peak) {
        a->peak = a->heap;
        a->peak_ns = ts_ns;
        a->peak_blocks = a->blocks;
    }
}

/* A block of size bytes ended in a running process (check: as
 * fmt_wtot_end's). */
static inline void fmt_wtall_end(struct fmt_wtall *a, uint64_t size, bool check, uint64_t ts_ns)
{
    a->heap -= (int64_t)size;
    a->blocks--;
    if (check && __builtin_expect(a->peak == INT64_MIN, 0)) {
        a->peak = a->heap;
        a->peak_ns = ts_ns;
        a->peak_blocks = a->blocks;
    }
}

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
    fmt_wtall_start(&t->all, size, ts_ns);
    if (e->grp)
        fmt_wtall_start(&t->gv[e->grp - 1].part, size, ts_ns);
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
    fmt_wtall_end(&t->all, size, check, ts_ns);
    if (e->grp)
        fmt_wtall_end(&t->gv[e->grp - 1].part, size, check, ts_ns);
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
