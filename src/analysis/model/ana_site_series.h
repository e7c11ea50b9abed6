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
struct ana_site;
struct ana_timeline;

/* What a series follows of each site (timeline --site-cost), and the
 * order its top sites are picked in: heaptrack_gui's three charts of the
 * top functions over time. */
enum ana_site_cost {
    ANA_SITE_IN_USE,      /* bytes in use; by bytes at their process's peak */
    ANA_SITE_ALLOCATIONS, /* allocations so far; by allocations */
    ANA_SITE_TEMPORARY,   /* temporary allocations so far; by temporary allocations */
};

struct ana_site_series {
    uint32_t nr_sites;
    enum ana_site_cost cost;
    uint32_t *stacks; /* the sites' stack ids, in the caller's order (top mode: by peak) */
    uint64_t *t_ns;   /* the moments, then the last event's time */
    uint64_t *bytes;  /* nr_times rows of nr_sites values (of cost): bytes[t * nr_sites + k] */
    size_t nr_times, cap_times;
    /* private */
    const struct ana_model *m_;
    uint64_t end_ns_;  /* the last values' time; UINT64_MAX: none (ana_timeline_end) */
    uint32_t top_;     /* top mode: keep this many at the end (0: the caller's sites) */
    size_t max_cells_; /* top mode: at most this many values (0: no bound) */
    uint64_t *final_;  /* by site: its live bytes when its image ended (retire) */
};

/* A site's value of cost c now. */
uint64_t ana_site_cost_value(enum ana_site_cost c, const struct ana_site *s);

/* The order of sites a and b (of stacks sa and sb) by cost c: the larger
 * first (bytes at their process's peak for ANA_SITE_IN_USE, then bytes
 * allocated, then stack id). Sites kept apart from a model too (a tree's,
 * picked as each image ends). */
int ana_site_order(enum ana_site_cost c, const struct ana_site *a, uint32_t sa,
                   const struct ana_site *b, uint32_t sb);
/* Sort ids (stack ids of sites of m) in that order. */
void ana_site_sort(const struct ana_model *m, enum ana_site_cost c, uint32_t *ids, size_t n);

/* Follow cost c of the sites stacks[0..n) of model m (subscribed to p before) at the
 * moments of timeline tl's rows (ana_timeline_follow) and at its last row's
 * time if it has one (ana_timeline_end).
 * 0, -ENOMEM, or -E2BIG (too many consumers). */
int ana_site_series_subscribe(struct ana_site_series *s, struct ana_heap_replay *p,
                              const struct ana_model *m, enum ana_site_cost c,
                              const uint32_t *stacks, uint32_t n, const struct ana_timeline *tl);

/* Follow the sites of a model that retires its images' sites at their
 * end (ana_model_options.retire): the callback that keeps the followed
 * sites' last live bytes (an ended process's leaks stay in use), for a
 * model that drops every other site. Returns 0 or -ENOMEM. */
int ana_site_series_retire(void *s, const struct ana_model *m, uint32_t image);

/* Top mode, one pass instead of a model's pass to pick the sites first:
 * follow every stack id below nr_stacks + 1 (the trace's) and, when the
 * pass ends (m finished: the peaks known), keep the n with allocations
 * first by ana_site_order, as a model's pass would have picked them.
 * Memory grows with moments times stacks: the pass fails with -EFBIG past
 * max_cells values, and the caller picks the sites the other way. */
int ana_site_series_subscribe_top(struct ana_site_series *s, struct ana_heap_replay *p,
                                  const struct ana_model *m, enum ana_site_cost c,
                                  uint32_t nr_stacks, uint32_t n, size_t max_cells,
                                  const struct ana_timeline *tl);
void ana_site_series_release(struct ana_site_series *s);

#endif
