/* SPDX-License-Identifier: MIT */
/* Chosen call sites' memory in use over time (heaptrack's stacked chart of
 * the top sites): at each moment of the heap replay, the live bytes of each
 * chosen site, read off the heap model the same pass feeds (as the
 * timeline reads its rows); the last values after the last event. Memory
 * grows with moments times sites, not with events. */
#ifndef ANA_SITE_SERIES_H
#define ANA_SITE_SERIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ana_heap_replay;
struct ana_model;
struct ana_timeline;

struct ana_site_series {
    uint32_t nr_sites;
    uint32_t *stacks; /* the sites' stack ids, in the caller's order */
    uint64_t *t_ns;   /* the moments, then the last event's time */
    uint64_t *bytes;  /* nr_times rows of nr_sites values: bytes[t * nr_sites + k] */
    size_t nr_times, cap_times;
    /* private */
    const struct ana_model *m_;
    uint64_t end_ns_; /* the last values' time; UINT64_MAX: none (ana_timeline_end) */
};

/* Follow the sites stacks[0..n) of model m (subscribed to p before) at the
 * moments of timeline tl's rows (ana_timeline_follow) and at its last row's
 * time if it has one (ana_timeline_end).
 * 0, -ENOMEM, or -E2BIG (too many consumers). */
int ana_site_series_subscribe(struct ana_site_series *s, struct ana_heap_replay *p,
                              const struct ana_model *m, const uint32_t *stacks, uint32_t n,
                              const struct ana_timeline *tl);
void ana_site_series_release(struct ana_site_series *s);

#endif
