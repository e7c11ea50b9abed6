/* SPDX-License-Identifier: MIT */
/* What one event means for the heap, decided once for every consumer: the
 * model, the window, the HTML report's window buckets, the timeline (through
 * the model) and each exporter read a struct ana_step instead of working it
 * out again. Per event: is it selected (--pid, --thread), does it end a
 * block, start one (a realloc does both, ending first as heaptrack orders
 * it), was the ended block temporary, what is the heap in use of the
 * selected blocks after it, and did that reach a new peak.
 *
 * Heap in use counts the blocks of processes still running: at a process
 * image's exit (FMT_EV_PROCESS_EXIT, which the recorder also writes for
 * the image an exec replaces) its remaining blocks leave heap (they stay
 * that image's leaks, which the model keeps), so the peak of a process
 * tree is the peak of the sum of its live processes. A partial range
 * (ana_pmodel.c) does not know an image's heap at its start and so keeps
 * exits out: ana_pmodel.c replays traces with more than one selected
 * image in one pass.
 *
 * Temporary (docs/architecture.md, "Meanings"): by default heaptrack's
 * rule applied per thread: the thread that allocated the block frees it
 * with nothing else, no allocation and no free, by that thread in
 * between. The loose rule (loose_temporary, `--temporary-threshold N`)
 * lets frees and up to N other allocations by the thread come between.
 *
 * An aggregated trace (docs/aggregate.md) writes only the blocks live at
 * a cut (kept blocks) event by event; the blocks born and freed inside an
 * interval are counted in batch rows (FMT_EV_HEAP_BATCH: a step that
 * starts and ends nothing, st->batch), and the transient bytes live at
 * each interval's moments of highest heap come as groups
 * (FMT_EV_HEAP_TRANSIENT, st->transient) that add them to heap and take
 * them away again, so that the peak and each site's share in it are
 * exact. After FMT_EV_AGGREGATE (or from the start of a replay that
 * begins after it: ana_stepper_aggregated) no kept block's end is
 * temporary: the recorder, which saw the transient calls in between,
 * counted every temporary in the batch rows. The new kinds take the
 * branch of the other non-heap kinds, so an exact trace's heap events
 * cost what they did.
 *
 * Cost: O(1) per event; memory grows with threads (and with live blocks
 * under a threshold above 0). */
#ifndef ANA_STEP_H
#define ANA_STEP_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "analysis/core/ana_filter.h"
#include "analysis/core/ana_map.h"
#include "memscribe/event.h"

enum ana_temp {
    ANA_TEMP_NO = 0,
    ANA_TEMP_YES,
    /* Partial replay: the thread had no heap event yet in the range, so
     * only the merge knows whether the block was its latest event. */
    ANA_TEMP_ASK_MERGE,
};

struct ana_step {
    bool selected;  /* its process passes --pid; nothing below is set otherwise */
    bool mine;      /* its thread passes --thread: the call counts */
    bool ends;      /* it ends block ev->ref (ev->ref_size, ref_stack, ref_thread) */
    bool unmatched; /* a free or realloc of an address never seen allocated (mine) */
    bool starts;    /* it starts block ev->serial (ev->size, stack, thread) */
    bool peak;      /* heap reached a new maximum at this event */
    /* Aggregated traces (docs/aggregate.md). batch: a FMT_EV_HEAP_BATCH
     * row of a thread that passes --thread: ev->arg[0] blocks of ev->size
     * bytes in all, allocated and freed inside the interval ending at
     * ev->ts_ns, at site ev->stack, size class ev->arg[3]
     * (ana_size_class); of every block the thread freed there (kept ones
     * too), ev->arg[1] temporary, of ev->arg[2] bytes. */
    bool batch;
    /* A FMT_EV_HEAP_TRANSIENT group: +1 the ev->size bytes in ev->arg[0]
     * blocks of site ev->stack live at this moment join heap (and the
     * peak check), -1 they leave it again; 0 none. Under --thread a group
     * (which has no thread) is left out: heap counts kept blocks only. */
    int8_t transient;
    enum ana_temp temporary; /* of the ended block */
    uint64_t heap;           /* heap in use by the selected blocks of running processes */
};

struct ana_step_options {
    struct ana_filter *filter; /* NULL: every event; its sets fixed before init */
    bool loose_temporary;      /* the loose rule with temporary_threshold (set by N > 0) */
    uint64_t temporary_threshold;
    /* A range that does not start at the trace's beginning: heap is a
     * delta from the range's start (two's complement below zero), its
     * peak the range's highest delta, and frees before a thread's first
     * heap event in the range are ANA_TEMP_ASK_MERGE. */
    bool partial;
};

/* A thread's state for the temporary rule. */
struct ana_step_thread {
    uint64_t last_serial; /* the thread's latest heap event if an allocation, else 0 */
    uint64_t last_alloc;  /* the thread's latest allocation (loose rule) */
    uint64_t seq;         /* allocations the thread made */
    uint64_t nr_heap;     /* its allocations and frees of known blocks */
    uint32_t tid;
};

/* A process image's part of heap (whole traces only). */
struct ana_step_image {
    uint64_t heap;
    bool ended; /* its exit was seen: its blocks no longer count in heap */
};

struct ana_stepper {
    struct ana_step_options opt;
    /* The temporary rule is not the strict one (loose, a threshold) or
     * there is none (aggregated): one test on the per-event path. */
    bool temp_other;
    bool aggregated; /* after FMT_EV_AGGREGATE: no temporary decided */
    struct ana_step_thread *threads;
    uint32_t nr_threads;
    struct ana_step_image *images;
    uint32_t nr_images;
    bool filtering; /* the filter selects some pids or tids */
    uint64_t heap, peak;
    struct ana_map seqs; /* loose rule above 0: serial -> the thread's seq then */
};

void ana_stepper_init(struct ana_stepper *s, const struct ana_step_options *opt);
void ana_stepper_release(struct ana_stepper *s);

/* The events fed from now on are of an aggregated stretch, as after
 * FMT_EV_AGGREGATE: for a replay that starts after that event (a range of
 * ana_pmodel.c) or of a trace aggregated from its start (ana_heap_replay_run
 * calls it from the trace's facts). */
void ana_stepper_aggregated(struct ana_stepper *s);

/* In partial mode the range's highest heap delta starts below any. */
#define ANA_STEP_PARTIAL_PEAK_START ((uint64_t)INT64_MIN)

/* The slow paths of ana_stepper_event() (private). */
struct ana_step_thread *ana_stepper_grow(struct ana_stepper *s, uint32_t thread);
bool ana_stepper_seq_end(struct ana_stepper *s, const struct ana_step_thread *t,
                         const struct fmt_event *ev);
int ana_stepper_seq_start(struct ana_stepper *s, const struct ana_step_thread *t,
                          const struct fmt_event *ev);
struct ana_step_image *ana_stepper_grow_images(struct ana_stepper *s, uint32_t image);
enum ana_temp ana_stepper_temporary_other(struct ana_stepper *s, const struct ana_step_thread *t,
                                          const struct fmt_event *ev);
int ana_stepper_aggregate_event(struct ana_stepper *s, const struct fmt_event *ev,
                                struct ana_step *st, bool mine, bool partial);

static inline struct ana_step_image *ana_stepper_image(struct ana_stepper *s, uint32_t image)
{
    return image < s->nr_images ? &s->images[image] : ana_stepper_grow_images(s, image);
}

/* A whole trace: the heap of image ev->image changes by +add -sub; heap
 * (of running images) with it unless the image has ended. */
static inline int ana_stepper_image_heap(struct ana_stepper *s, const struct fmt_event *ev,
                                         uint64_t add, uint64_t sub)
{
    struct ana_step_image *im = ana_stepper_image(s, ev->image);

    if (!im)
        return -ENOMEM;
    im->heap = (im->heap >= sub ? im->heap - sub : 0) + add;
    if (!im->ended)
        s->heap = (s->heap >= sub ? s->heap - sub : 0) + add;
    return 0;
}

/* A whole trace: image ev->image exits; its blocks leave heap. */
int ana_stepper_exit(struct ana_stepper *s, const struct fmt_event *ev);

static inline struct ana_step_thread *ana_stepper_thread(struct ana_stepper *s, uint32_t thread)
{
    return thread < s->nr_threads ? &s->threads[thread] : ana_stepper_grow(s, thread);
}

/* Was the block ev ends temporary? t: the freeing thread. */
static inline enum ana_temp ana_stepper_temporary(struct ana_stepper *s,
                                                  const struct ana_step_thread *t,
                                                  const struct fmt_event *ev, bool partial)
{
    if (s->temp_other)
        return ana_stepper_temporary_other(s, t, ev);
    if (partial && !t->nr_heap)
        return ANA_TEMP_ASK_MERGE;
    return t->last_serial == ev->ref ? ANA_TEMP_YES : ANA_TEMP_NO;
}

/* Decide what ev does into *st. Returns 1 if
 * it starts or ends a selected block or moves heap by a transient group,
 * 0 if not, or -ENOMEM. Feed every
 * event in trace order (the filter learns threads from each). Inline: it
 * is every report's per-event cost (bench/bench_report.sh). */
/* ana_stepper_event() with partial (== s->opt.partial) a constant the
 * compiler can fold into a caller that picks the mode once. */
static inline __attribute__((always_inline)) int ana_stepper_event_mode(struct ana_stepper *s,
                                                                        const struct fmt_event *ev,
                                                                        struct ana_step *st,
                                                                        bool partial)
{
    struct ana_filter *f = s->filtering ? s->opt.filter : NULL;
    bool mine = true, ends = false, starts = false, unmatched = false, peak = false;
    enum ana_temp temp = ANA_TEMP_NO;
    int rc;

    if (f) {
        if ((rc = ana_filter_note(f, ev)))
            goto fail;
        if (!ana_filter_image(f, ev->image, ev->pid)) {
            *st = (struct ana_step){.heap = s->heap};
            return 0;
        }
        mine = ana_filter_thread(f, ev->thread);
    }
    /* Heap kinds are MALLOC..PVALLOC; REALLOC, REALLOCARRAY and FREE (3..5)
     * end blocks: two compares instead of a switch per event. */
    unsigned kind = ev->kind;
    if (kind - FMT_EV_MALLOC > FMT_EV_PVALLOC - FMT_EV_MALLOC) {
        if (kind == FMT_EV_PROCESS_EXIT && !partial && (rc = ana_stepper_exit(s, ev)))
            goto fail;
        /* An aggregated trace's kinds, out of line: never on the path of
         * an exact trace's heap events. */
        if (kind - FMT_EV_HEAP_BATCH <= FMT_EV_AGGREGATE - FMT_EV_HEAP_BATCH)
            return ana_stepper_aggregate_event(s, ev, st, mine, partial);
        goto other;
    }
    if (kind - FMT_EV_REALLOC <= FMT_EV_FREE - FMT_EV_REALLOC) {
        if (ev->ref) {
            struct ana_step_thread *t = ana_stepper_thread(s, ev->thread);
            if (!t)
                goto nomem;
            if (!f || ana_filter_thread(f, ev->ref_thread)) {
                ends = true;
                temp = ana_stepper_temporary(s, t, ev, partial);
                /* Partial mode keeps a delta, which may wrap below zero;
                 * a whole trace saturates rather than wrap on an
                 * inconsistent trace. */
                if (partial)
                    s->heap -= ev->ref_size;
                else if (ana_stepper_image_heap(s, ev, 0, ev->ref_size))
                    goto nomem;
            }
            /* Any free by the thread ends the strict rule's chance. */
            t->last_serial = 0;
            t->nr_heap++;
        } else {
            unmatched = (kind == FMT_EV_FREE ? ev->addr : ev->old_addr) && mine;
        }
    }
    if (kind != FMT_EV_FREE && ev->serial && mine) {
        struct ana_step_thread *t = ana_stepper_thread(s, ev->thread);
        if (!t)
            goto nomem;
        starts = true;
        if (partial)
            s->heap += ev->size;
        else if (ana_stepper_image_heap(s, ev, ev->size, 0))
            goto nomem;
        /* A block a --keep-last segment carries in (origin SNAPSHOT):
         * the thread's calls before the segment are not in it, so the
         * next free is not judged by it. */
        t->last_serial = ev->origin == FMT_ORIGIN_SNAPSHOT ? 0 : ev->serial;
        t->last_alloc = ev->serial;
        t->nr_heap++;
        t->seq++;
        t->tid = ev->tid;
        if (s->opt.temporary_threshold && (rc = ana_stepper_seq_start(s, t, ev)))
            goto fail;
    }
    /* Signed in partial mode, where heap and peak are deltas; the same for
     * a whole trace, whose heap never reaches 2^63. */
    if (partial ? (int64_t)s->heap > (int64_t)s->peak : s->heap > s->peak) {
        s->peak = s->heap;
        peak = true;
    }
other:
    /* Field by field, not a compound literal, which zeroes the padding
     * too: three more instructions an event. */
    st->selected = true;
    st->mine = mine;
    st->ends = ends;
    st->unmatched = unmatched;
    st->starts = starts;
    st->peak = peak;
    st->batch = false;
    st->transient = 0;
    st->temporary = temp;
    st->heap = s->heap;
    return starts || ends;
nomem:
    rc = -ENOMEM;
fail:
    *st = (struct ana_step){0};
    return rc;
}

static inline __attribute__((always_inline)) int
ana_stepper_event(struct ana_stepper *s, const struct fmt_event *ev, struct ana_step *st)
{
    return ana_stepper_event_mode(s, ev, st, s->opt.partial);
}

#endif
