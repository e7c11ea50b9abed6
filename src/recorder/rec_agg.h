/* SPDX-License-Identifier: MIT */
/* The aggregator of `record --aggregate` (docs/aggregate.md): between the
 * time-ordered merge and the trace writer, it keeps every heap block live
 * at a cut (a multiple of the period P of trace time, or the trace's end)
 * event by event, and counts the blocks born and ended between two cuts in
 * batch rows instead of writing them.
 *
 * What it decides, per event, in the order of the merge:
 * - a block allocated since the last cut is *pending*; ended before the
 *   next cut it is *transient*: counted in the interval's batch row
 *   (allocating thread, stack, size class) and never written; live at a
 *   cut it becomes *kept*: its allocation is written with its own time,
 *   thread, stack and size, and so is its end;
 * - temporary, heaptrack's rule per thread as ana_step.h decides it (the
 *   thread ends the block its latest heap event allocated), for every
 *   block, into the batch rows of the thread that ended it;
 * - the heap in use of all running images and of each image (an image's
 *   blocks leave the running heap at its FMT_EV_PROCESS_EXIT), the first
 *   moment of each one's highest value in an interval, and there the
 *   transient bytes live per image and stack (FMT_EV_HEAP_TRANSIENT);
 * - a free of an address it does not know (a block from before record -p
 *   attached) passes through as an exact trace writes it.
 * Everything the interval writes (non-heap events, ends of kept blocks, the
 * pending allocations that turn out kept, the transient moments) waits in
 * a buffer in arrival order and is written at the cut, in time order.
 *
 * Cost: O(1) per event (hash tables, amortized); memory grows with the
 * live blocks and the interval's written events, never with its transient
 * calls. Not thread-safe: the recorder's one thread calls it. The pieces:
 * rec_agg.c (events in), rec_agg_table.c (the live blocks), rec_agg_ix.c
 * (the interval's sites and batch rows), rec_agg_cut.c (a cut),
 * rec_agg_exact.c (record --max-size's exact stretch, before the switch). */
#ifndef REC_AGG_H
#define REC_AGG_H

#include <stdint.h>

#include "format/fmt_writer.h"
#include "memscribe/event.h"
#include "recorder/rec_session.h"

struct rec_agg;

/* An aggregator writing into w, which must have been made with the option
 * aggregate and, for a trace aggregated from its start, the trace info's
 * aggregate_ns = period_ns (the FMT_EV_AGGREGATE event is then written at
 * time 0 before the first event). exact_first (record --max-size, the
 * trace info's aggregate_ns 0): every event is written as it comes until
 * rec_agg_switch asks for the aggregated stretch, which begins at the next
 * cut with an FMT_EV_AGGREGATE event of arg[1] 1. Returns 0 or -ENOMEM /
 * -EINVAL (period 0). */
int rec_agg_new(struct rec_agg **out, struct fmt_writer *w, uint64_t period_ns, int exact_first);
void rec_agg_free(struct rec_agg *a);

/* The events of the merge, with the trace's relative times, non-
 * decreasing: as fmt_writer_heap (a plain MALLOC or FREE),
 * fmt_writer_realloc (a plain REALLOC) and fmt_writer_event (any event;
 * its strings and module are copied). A cut whose time came is made first.
 * Returns 0 or the writer's -errno (the trace cannot go on). */
int rec_agg_heap(struct rec_agg *a, const struct fmt_writer_who *who, unsigned kind, uint64_t ts_ns,
                 uint64_t addr, uint64_t size, uint32_t stack);
int rec_agg_realloc(struct rec_agg *a, const struct fmt_writer_who *who, unsigned flags,
                    uint64_t ts_ns, uint64_t old_addr, uint64_t addr, uint64_t size,
                    uint32_t stack);
int rec_agg_event(struct rec_agg *a, const struct fmt_event *ev);

/* Every event before ts_ns has been given: make the cuts at multiples of
 * the period up to ts_ns. Returns the time of the last cut made so far
 * (events given later must not be older) in *last, and 0 or -errno. */
int rec_agg_advance(struct rec_agg *a, uint64_t ts_ns, uint64_t *last);

/* A cut now, at ts_ns (at least the last event's time), whatever the
 * period: at the trace's end, and before a scan that must find every live
 * block in the writer (record --reach, fmt_writer_live_blocks). The next
 * cut is at the next multiple of the period. Returns 0 or -errno. */
int rec_agg_cut_at(struct rec_agg *a, uint64_t ts_ns);

/* record --max-size: aggregate from the latest event's time on, a cut
 * there (nothing if aggregated already). */
void rec_agg_switch(struct rec_agg *a);
/* 1 while the trace is exact (before the switch). */
int rec_agg_exact_now(const struct rec_agg *a);

/* record --keep-last (rec_keep.c) carries the heap blocks live into each
 * new segment. rec_agg_live_each calls fn with each live block (a slab
 * index k, its allocation's time and its image), in no order, until fn returns
 * non-zero (returned); rec_agg_block_event gives block k's allocation as
 * it was made (a realloc's block as a realloc of NULL), which needs the
 * other fields of kept blocks kept (rec_agg_keep_fields, before the first
 * event: they cost memory only with calloc's, pools' and Windows heaps'). */
typedef int rec_agg_block_fn(void *arg, uint32_t k, uint64_t ts_ns, uint32_t image);
int rec_agg_live_each(const struct rec_agg *a, rec_agg_block_fn *fn, void *arg);
void rec_agg_block_event(const struct rec_agg *a, uint32_t k, struct fmt_event *ev);
void rec_agg_keep_fields(struct rec_agg *a);

/* What it did so far (struct rec_agg_stats, rec_session.h). */
void rec_agg_get_stats(const struct rec_agg *a, struct rec_agg_stats *st);

#endif
