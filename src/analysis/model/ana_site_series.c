/* SPDX-License-Identifier: MIT */
/* Chosen call sites' memory in use over time (ana_site_series.h). */
#include "analysis/model/ana_site_series.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/model/ana_heap_replay.h"
#include "analysis/model/ana_model.h"
#include "analysis/model/ana_timeline.h"
#include "util/util_array.h"

/* The values of time t_ns: a new row, or the last one replaced when it
 * has that time already (the trace ends on a moment: one row a time). */
static int take(struct ana_site_series *s, uint64_t t_ns)
{
    if (!s->nr_times || s->t_ns[s->nr_times - 1] != t_ns) {
        if (s->max_cells_ && (s->nr_times + 1) * (size_t)s->nr_sites > s->max_cells_)
            return -EFBIG;
        size_t cap = s->cap_times;

        if (UTIL_ARRAY_RESERVE(s->t_ns, s->cap_times, s->nr_times + 1, 256))
            return -ENOMEM;
        if (s->cap_times != cap) {
            uint64_t *b =
                realloc(s->bytes, s->cap_times * (s->nr_sites ? s->nr_sites : 1) * sizeof(*b));
            if (!b)
                return -ENOMEM;
            s->bytes = b;
        }
        s->nr_times++;
    }
    s->t_ns[s->nr_times - 1] = t_ns;
    for (uint32_t k = 0; k < s->nr_sites; k++) {
        const struct ana_site *site = ana_model_site(s->m_, s->stacks[k]);
        uint64_t v = site ? ana_site_cost_value(s->cost, site) : 0;

        /* a site retired with its image: its last value (an ended
         * process's leaks stay in use, its counts stay counted) */
        s->bytes[(s->nr_times - 1) * s->nr_sites + k] = v                    ? v
                                                        : site || !s->final_ ? 0
                                                                             : s->final_[k];
    }
    return 0;
}

static int on_moment(void *arg, uint64_t t_ns)
{
    return take(arg, t_ns);
}

int ana_site_series_retire(void *arg, const struct ana_model *m, uint32_t image)
{
    struct ana_site_series *s = arg;

    if (!s->final_ && !(s->final_ = calloc((size_t)s->nr_sites + 1, sizeof(*s->final_))))
        return -ENOMEM;
    for (uint32_t k = 0; k < s->nr_sites; k++) {
        const struct ana_site *site = ana_model_site(m, s->stacks[k]);
        if (site && site->image == image)
            s->final_[k] = ana_site_cost_value(s->cost, site);
    }
    return 0;
}

uint64_t ana_site_cost_value(enum ana_site_cost c, const struct ana_site *s)
{
    switch (c) {
    case ANA_SITE_ALLOCATIONS:
        return s->nr_allocs;
    case ANA_SITE_TEMPORARY:
        return s->nr_temporary;
    case ANA_SITE_IN_USE:
        break;
    }
    return s->live_bytes > 0 ? (uint64_t)s->live_bytes : 0;
}

int ana_site_order(enum ana_site_cost c, const struct ana_site *a, uint32_t sa,
                   const struct ana_site *b, uint32_t sb)
{
    uint64_t va = c == ANA_SITE_IN_USE ? a->peak_bytes : ana_site_cost_value(c, a);
    uint64_t vb = c == ANA_SITE_IN_USE ? b->peak_bytes : ana_site_cost_value(c, b);

    if (va != vb)
        return va > vb ? -1 : 1;
    if (a->alloc_bytes != b->alloc_bytes)
        return a->alloc_bytes > b->alloc_bytes ? -1 : 1;
    return (sa > sb) - (sa < sb);
}

struct sort_arg {
    const struct ana_model *m;
    enum ana_site_cost c;
};

static int by_cost(const void *x, const void *y, void *arg)
{
    const struct sort_arg *s = arg;
    uint32_t sa = *(const uint32_t *)x, sb = *(const uint32_t *)y;

    return ana_site_order(s->c, ana_model_site(s->m, sa), sa, ana_model_site(s->m, sb), sb);
}

void ana_site_sort(const struct ana_model *m, enum ana_site_cost c, uint32_t *ids, size_t n)
{
    struct sort_arg arg = {m, c};

    qsort_r(ids, n, sizeof(*ids), by_cost, &arg);
}

/* Top mode's end: the chosen sites' columns, in their order. */
static int keep_top(struct ana_site_series *s)
{
    uint32_t n = 0, *col = malloc((s->nr_sites ? s->nr_sites : 1) * sizeof(*col));
    uint64_t *row = malloc((s->top_ ? s->top_ : 1) * sizeof(*row));

    if (!col || !row) {
        free(col);
        free(row);
        return -ENOMEM;
    }
    for (uint32_t k = 0; k < s->nr_sites; k++) {
        const struct ana_site *site = ana_model_site(s->m_, s->stacks[k]);
        if (site && site->nr_allocs)
            col[n++] = s->stacks[k];
    }
    ana_site_sort(s->m_, s->cost, col, n);
    n = n < s->top_ ? n : s->top_;
    /* Stack ids are the columns (stacks[k] == k): each row's kept values
     * gathered, then stored at the row's new place, which ends before the
     * next row's old one starts. */
    for (size_t t = 0; t < s->nr_times; t++) {
        for (uint32_t k = 0; k < n; k++)
            row[k] = s->bytes[t * s->nr_sites + col[k]];
        memcpy(s->bytes + t * n, row, n * sizeof(*row));
    }
    memcpy(s->stacks, col, n * sizeof(*col));
    free(col);
    free(row);
    s->nr_sites = n;
    return 0;
}

static int on_finish(void *arg)
{
    struct ana_site_series *s = arg;
    int rc = s->end_ns_ == UINT64_MAX ? 0 : take(s, s->end_ns_);

    return rc || !s->top_ ? rc : keep_top(s);
}

int ana_site_series_subscribe(struct ana_site_series *s, struct ana_heap_replay *p,
                              const struct ana_model *m, enum ana_site_cost c,
                              const uint32_t *stacks, uint32_t n, const struct ana_timeline *tl)
{
    static const struct ana_heap_replay_ops ops = {.moment = on_moment, .finish = on_finish};

    memset(s, 0, sizeof(*s));
    if (!(s->stacks = malloc((n ? n : 1) * sizeof(*s->stacks))))
        return -ENOMEM;
    memcpy(s->stacks, stacks, n * sizeof(*stacks));
    s->nr_sites = n;
    s->cost = c;
    s->m_ = m;
    s->end_ns_ = ana_timeline_end(tl);
    return ana_timeline_follow(tl, p, &ops, s);
}

int ana_site_series_subscribe_top(struct ana_site_series *s, struct ana_heap_replay *p,
                                  const struct ana_model *m, enum ana_site_cost c,
                                  uint32_t nr_stacks, uint32_t n, size_t max_cells,
                                  const struct ana_timeline *tl)
{
    uint32_t *ids = malloc(((size_t)nr_stacks + 1) * sizeof(*ids));
    int rc;

    if (!ids)
        return -ENOMEM;
    for (uint32_t id = 0; id <= nr_stacks; id++)
        ids[id] = id;
    rc = ana_site_series_subscribe(s, p, m, c, ids, nr_stacks + 1, tl);
    free(ids);
    s->top_ = n;
    s->max_cells_ = max_cells;
    return rc;
}

void ana_site_series_release(struct ana_site_series *s)
{
    free(s->stacks);
    free(s->t_ns);
    free(s->bytes);
    free(s->final_);
    memset(s, 0, sizeof(*s));
}
