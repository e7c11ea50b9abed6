/* SPDX-License-Identifier: MIT */
/* The one replay of the heap (see ana_heap_replay.h). */
#include "analysis/model/ana_heap_replay.h"

#include <errno.h>
#include <string.h>

#include "analysis/vm/ana_vm_replay.h"

void ana_heap_replay_init(struct ana_heap_replay *p, const struct ana_step_options *opt)
{
    memset(p, 0, sizeof(*p));
    if (opt)
        p->opt = *opt;
    p->next_moment = UINT64_MAX;
    ana_stepper_init(&p->stepper, &p->opt);
}

void ana_heap_replay_release(struct ana_heap_replay *p)
{
    ana_stepper_release(&p->stepper);
}

/* The time of the first event that passes c's next moment. */
static uint64_t due(const struct ana_heap_consumer *c)
{
    return c->after && c->next_ns != UINT64_MAX ? c->next_ns + 1 : c->next_ns;
}

static int subscribe(struct ana_heap_replay *p, const struct ana_heap_replay_ops *ops, void *arg,
                     uint64_t every_ns, uint64_t first_ns, uint64_t last_ns, bool after)
{
    if (p->nr_consumers == ANA_HEAP_REPLAY_MAX_CONSUMERS)
        return -E2BIG;
    every_ns = ops->moment ? every_ns : 0;
    struct ana_heap_consumer *c = &p->consumers[p->nr_consumers++];
    *c = (struct ana_heap_consumer){
        .ops = ops,
        .arg = arg,
        .every_ns = every_ns,
        .next_ns = every_ns ? first_ns : UINT64_MAX,
        .last_ns = last_ns,
        .after = after,
    };
    if (due(c) < p->next_moment)
        p->next_moment = due(c);
    if (ops->step) {
        p->step_fn[p->nr_step] = ops->step;
        p->step_arg[p->nr_step++] = arg;
    }
    return 0;
}

int ana_heap_replay_subscribe(struct ana_heap_replay *p, const struct ana_heap_replay_ops *ops,
                              void *arg, uint64_t every_ns)
{
    return subscribe(p, ops, arg, every_ns, every_ns, UINT64_MAX, false);
}

int ana_heap_replay_subscribe_after(struct ana_heap_replay *p,
                                    const struct ana_heap_replay_ops *ops, void *arg,
                                    uint64_t every_ns)
{
    return subscribe(p, ops, arg, every_ns, every_ns, UINT64_MAX, true);
}

int ana_heap_replay_subscribe_range(struct ana_heap_replay *p,
                                    const struct ana_heap_replay_ops *ops, void *arg,
                                    uint64_t every_ns, uint64_t first_ns, uint64_t last_ns,
                                    bool after)
{
    if (last_ns < first_ns)
        return -EINVAL;
    return subscribe(p, ops, arg, every_ns, first_ns, last_ns, after);
}

static int vm_step(void *arg, const struct fmt_event *ev, const struct ana_step *st)
{
    int rc = ana_vm_replay_event_inline(arg, ev);

    return rc > 0 ? 0 : rc; /* past its `until`: it keeps what it has */
}

int ana_heap_replay_add_vm(struct ana_heap_replay *p, struct ana_vm_replay *vm)
{
    static const struct ana_heap_replay_ops vm_ops = {.step = vm_step};

    return ana_heap_replay_subscribe(p, &vm_ops, vm, 0);
}

/* The moments before ts, each consumer's in turn (a consumer's own are in
 * order; those of different consumers concern only each). */
static int moments(struct ana_heap_replay *p, uint64_t ts)
{
    uint64_t next = UINT64_MAX;
    int rc;

    for (unsigned i = 0; i < p->nr_consumers; i++) {
        struct ana_heap_consumer *c = &p->consumers[i];
        /* UINT64_MAX: no moment left (none at all, or past the last time). */
        while (due(c) <= ts && c->next_ns != UINT64_MAX) {
            if ((rc = c->ops->moment(c->arg, c->next_ns)))
                return rc;
            uint64_t t = c->next_ns;
            c->next_ns = t >= c->last_ns                 ? UINT64_MAX
                         : t <= UINT64_MAX - c->every_ns ? t + c->every_ns
                                                         : UINT64_MAX;
            if (c->next_ns > c->last_ns && t < c->last_ns)
                c->next_ns = c->last_ns;
        }
        if (due(c) < next)
            next = due(c);
    }
    p->next_moment = next;
    return 0;
}

/* One event in one mode: partial is a constant in each caller, so the
 * stepper's other mode drops out of the per-event path (ana_step.h). */
static inline __attribute__((always_inline)) int event(struct ana_heap_replay *p,
                                                       const struct fmt_event *ev, bool partial)
{
    struct ana_step st;
    int rc;

    if (ev->ts_ns >= p->next_moment && (rc = moments(p, ev->ts_ns)))
        return rc;
    if ((rc = ana_stepper_event_mode(&p->stepper, ev, &st, partial)) < 0)
        return rc;
    p->nr_steps += (unsigned)rc;
    for (unsigned i = 0, n = p->nr_step; i < n; i++)
        if ((rc = p->step_fn[i](p->step_arg[i], ev, &st)))
            return rc;
    return 0;
}

static inline __attribute__((always_inline)) int event_partial(void *arg,
                                                               const struct fmt_event *ev)
{
    return event(arg, ev, true);
}

static inline __attribute__((always_inline)) int event_whole(void *arg, const struct fmt_event *ev)
{
    return event(arg, ev, false);
}

int ana_heap_replay_event(void *arg, const struct fmt_event *ev)
{
    const struct ana_heap_replay *p = arg;

    return p->opt.partial ? event_partial(arg, ev) : event_whole(arg, ev);
}

int ana_heap_replay_finish(struct ana_heap_replay *p)
{
    int rc;

    for (unsigned i = 0; i < p->nr_consumers; i++) {
        const struct ana_heap_consumer *c = &p->consumers[i];
        if (c->ops->finish && (rc = c->ops->finish(c->arg)))
            return rc;
    }
    return 0;
}

int ana_heap_replay_run(struct ana_heap_replay *p, struct fmt_reader *r,
                        const struct ana_scan_options *so)
{
    struct ana_scan_options whole;
    int rc;

    if (!so) {
        ana_scan_options_init(&whole);
        so = &whole;
    }
    /* A pass that starts after the trace's FMT_EV_AGGREGATE (a range of
     * ana_pmodel.c, which in an aggregated trace cuts where time advances,
     * so a range starting at its time holds it) does not meet it: the
     * trace's facts say. */
    const struct fmt_trace_info *info = fmt_reader_info(r);
    const struct fmt_chunk_info *first =
        so->from_chunk < fmt_reader_nr_chunks(r) ? fmt_reader_chunk(r, so->from_chunk) : NULL;
    if (info->aggregate_ns &&
        (!info->aggregate_from_ns || (first && first->first_ts_ns > info->aggregate_from_ns)))
        ana_stepper_aggregated(&p->stepper);
    /* The loop with the event's work inlined, one per mode. */
    rc = p->opt.partial ? ana_scan_inline(r, so, event_partial, p)
                        : ana_scan_inline(r, so, event_whole, p);
    return rc ? rc : ana_heap_replay_finish(p);
}
