/* SPDX-License-Identifier: MIT */
/* The one replay of the heap: the events of a trace in order, each
 * decided once by a stepper (ana_step.h: is it selected, which block it
 * ends and starts, was that one temporary, heap in use, a new peak) and
 * handed with that step to every consumer that subscribed, so that one
 * pass over the trace feeds several outputs. Every reader of heap events
 * replays them through it:
 *   - the heap model (ana_model_subscribe: report, leaks, tree, flamegraph,
 *     plot, diff, the HTML page, the exporters' shared model);
 *   - the timeline (ana_timeline_subscribe: rows at its moments, read off
 *     the model and the address space);
 *   - the size histogram (ana_histogram_subscribe);
 *   - the WPA window (ana_window_subscribe) and the HTML report's window
 *     cells (ana_html_wpa_subscribe);
 *   - the heaps of a trace with pools (ana_heaps_subscribe, and the heap of
 *     each stack, ana_heaps_by_stack_subscribe);
 *   - each exporter (ana_export_run: a first pass for every format, a
 *     second for those that place the peak in their stream);
 *   - the address-space replay (ana_heap_replay_add_vm: mappings replayed
 *     in the same pass, ana_vm_replay.h).
 * The parallel replay (ana_pmodel.c) cuts a trace into ranges, each
 * replayed by a replay of its own in partial mode (ana_step.h) into a
 * partial model, and merges them in order: a consumer joins it by having
 * a partial form and a merge (today the model).
 *
 * A consumer that reads another's state (the timeline reads the model) does
 * so at a moment: moments come before the event that passes them is
 * handed to any consumer. Otherwise consumers are told in the order they
 * subscribed, and know nothing of each other.
 *
 * Events come from ana_heap_replay_run (the pass over a trace file, its
 * loop and the stepper inlined: ana_scan_inline) or, for events from
 * elsewhere (a trace's part, a live stream), one by one through
 * ana_heap_replay_event and then ana_heap_replay_finish.
 *
 * Cost: the stepper once per event (ana_step.h), one call per consumer per
 * event; memory is the stepper's (threads) and the consumers'. */
#ifndef ANA_HEAP_REPLAY_H
#define ANA_HEAP_REPLAY_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/core/ana_scan.h"
#include "analysis/model/ana_step.h"
#include "memscribe/trace.h"

/* A consumer's step op (below). */
typedef int ana_heap_step_fn(void *arg, const struct fmt_event *ev, const struct ana_step *st);

/* What a consumer is told; any member may be NULL. Each returns 0, or
 * stops the pass with its -errno. */
struct ana_heap_replay_ops {
    /* Every event of the pass in trace order, with its step: events of
     * processes the filter leaves out too (st->selected false, and nothing
     * else in st set), so that a consumer sees the trace's times. */
    ana_heap_step_fn *step;
    /* Moment t_ns, every every_ns of the subscription (t = k * every_ns,
     * k >= 1), before the first event at or after it is handed to any
     * consumer: a moment sees the events before it. Moments after the
     * last event are the consumer's to take at finish. */
    int (*moment)(void *arg, uint64_t t_ns);
    /* The pass ended: every event up to the scan's end was handed out. */
    int (*finish)(void *arg);
};

/* Consumers of one pass at most: the HTML page has five; an export of
 * its most outputs (16) at most 18 in one pass. */
#define ANA_HEAP_REPLAY_MAX_CONSUMERS 24

struct ana_heap_consumer {
    const struct ana_heap_replay_ops *ops;
    void *arg;
    uint64_t every_ns; /* moments: 0 for none */
    uint64_t next_ns;  /* the next moment (UINT64_MAX: none) */
    uint64_t last_ns;  /* the last moment (UINT64_MAX: none) */
    bool after;        /* its moments see the events at their time too */
};

struct ana_heap_replay {
    struct ana_step_options opt; /* the stepper's: filter, temporary rule, partial */
    struct ana_stepper stepper;
    struct ana_heap_consumer consumers[ANA_HEAP_REPLAY_MAX_CONSUMERS];
    unsigned nr_consumers;
    /* The step ops of the consumers that have one, in order, flat: the
     * per-event loop reads nothing else. */
    ana_heap_step_fn *step_fn[ANA_HEAP_REPLAY_MAX_CONSUMERS];
    void *step_arg[ANA_HEAP_REPLAY_MAX_CONSUMERS];
    unsigned nr_step;
    /* The time of the first event that passes a consumer's next moment
     * (UINT64_MAX: none). */
    uint64_t next_moment;
    /* Selected events that ended or started a block, or moved heap by an
     * aggregated trace's transient group, so far (the stepper returned 1):
     * during a step, the ordinal of that event, from 1. The exporters
     * place the peak in their streams by it. */
    uint64_t nr_steps;
};

/* opt NULL: every event, the strict temporary rule, a whole trace. */
void ana_heap_replay_init(struct ana_heap_replay *p, const struct ana_step_options *opt);
void ana_heap_replay_release(struct ana_heap_replay *p);

/* Add a consumer (before the pass). every_ns: its moments (0: none).
 * Returns 0, or -E2BIG past ANA_HEAP_REPLAY_MAX_CONSUMERS. */
int ana_heap_replay_subscribe(struct ana_heap_replay *p, const struct ana_heap_replay_ops *ops,
                              void *arg, uint64_t every_ns);

/* ana_heap_replay_subscribe(), whose moment t sees the events at t too:
 * it comes before the first event after t. An aggregated trace's rows at
 * a cut (docs/aggregate.md) come at the cut's time, and a row at the cut
 * must hold them (the timeline's). */
int ana_heap_replay_subscribe_after(struct ana_heap_replay *p,
                                    const struct ana_heap_replay_ops *ops, void *arg,
                                    uint64_t every_ns);

/* Moments in a range only: first_ns, every every_ns after it, and last_ns
 * (at least first_ns), then none: a zoom into a long trace does not step
 * through the moments before it (timeline --from, --to). after: as
 * ana_heap_replay_subscribe_after. */
int ana_heap_replay_subscribe_range(struct ana_heap_replay *p,
                                    const struct ana_heap_replay_ops *ops, void *arg,
                                    uint64_t every_ns, uint64_t first_ns, uint64_t last_ns,
                                    bool after);

/* Feed the address-space replay vm (set up by the caller, for its own
 * processes and moments) every event of the pass. Finishing it (its
 * moments left, its open lifetimes) stays the caller's. Returns as
 * ana_heap_replay_subscribe(). */
struct ana_vm_replay;
int ana_heap_replay_add_vm(struct ana_heap_replay *p, struct ana_vm_replay *vm);

/* One event (an ana_event_fn: arg is the replay): its moments, its step,
 * each consumer. Returns 0, -ENOMEM or a consumer's -errno. */
int ana_heap_replay_event(void *arg, const struct fmt_event *ev);

/* After the last event: every consumer's finish. Returns 0 or the first
 * consumer's -errno. */
int ana_heap_replay_finish(struct ana_heap_replay *p);

/* The pass: ana_scan() of r with so (NULL: the whole trace, no progress)
 * through p, then ana_heap_replay_finish(). Returns 0 or -errno (reader
 * errors: see fmt_reader_error()). */
int ana_heap_replay_run(struct ana_heap_replay *p, struct fmt_reader *r,
                        const struct ana_scan_options *so);

#endif
