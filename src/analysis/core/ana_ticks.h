/* SPDX-License-Identifier: MIT */
/* Sampling at even moments, the one rule for the samplers that read a
 * model at intervals while events stream past (ana_vm_window's totals,
 * ana_frag_scan's fragmentation): nr moments over [t0, t1], moment k
 * (1..nr) at t0 + (t1 - t0) / nr * k and the last exactly at t1. A sampler
 * takes every moment before an event's time before it applies the event
 * (a moment sees the events up to and at it), and the moments left after
 * the last event. */
#ifndef ANA_TICKS_H
#define ANA_TICKS_H

#include <stdbool.h>
#include <stdint.h>

struct ana_ticks {
    uint64_t t0, t1;
    unsigned nr;   /* moments */
    unsigned next; /* the next one to take, 1..nr (nr + 1: all taken) */
    uint64_t at;   /* the next one's time (when next <= nr): asked before every event,
                      computed once per moment (a division) */
};

static inline void ana_ticks_set_at(struct ana_ticks *t)
{
    if (t->next <= t->nr)
        t->at = t->next == t->nr ? t->t1 : t->t0 + (t->t1 - t->t0) / t->nr * t->next;
}

static inline void ana_ticks_init(struct ana_ticks *t, uint64_t t0, uint64_t t1, unsigned nr)
{
    *t = (struct ana_ticks){.t0 = t0, .t1 = t1, .nr = nr, .next = 1};
    ana_ticks_set_at(t);
}

/* The next moment, if one is left before upto, in *at; take it, then call
 * ana_ticks_taken(). */
static inline bool ana_ticks_due(const struct ana_ticks *t, uint64_t upto, uint64_t *at)
{
    if (t->next > t->nr)
        return false;
    *at = t->at;
    return *at < upto;
}

static inline void ana_ticks_taken(struct ana_ticks *t)
{
    t->next++;
    ana_ticks_set_at(t);
}

#endif
