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
        int64_t live = site ? site->live_bytes : 0;

        s->bytes[(s->nr_times - 1) * s->nr_sites + k] = live > 0 ? (uint64_t)live : 0;
    }
    return 0;
}

static int on_moment(void *arg, uint64_t t_ns)
{
    return take(arg, t_ns);
}

static int on_finish(void *arg)
{
    struct ana_site_series *s = arg;

    return s->end_ns_ == UINT64_MAX ? 0 : take(s, s->end_ns_);
}

int ana_site_series_subscribe(struct ana_site_series *s, struct ana_heap_replay *p,
                              const struct ana_model *m, const uint32_t *stacks, uint32_t n,
                              const struct ana_timeline *tl)
{
    static const struct ana_heap_replay_ops ops = {.moment = on_moment, .finish = on_finish};

    memset(s, 0, sizeof(*s));
    if (!(s->stacks = malloc((n ? n : 1) * sizeof(*s->stacks))))
        return -ENOMEM;
    memcpy(s->stacks, stacks, n * sizeof(*stacks));
    s->nr_sites = n;
    s->m_ = m;
    s->end_ns_ = ana_timeline_end(tl);
    return ana_timeline_follow(tl, p, &ops, s);
}

void ana_site_series_release(struct ana_site_series *s)
{
    free(s->stacks);
    free(s->t_ns);
    free(s->bytes);
    memset(s, 0, sizeof(*s));
}
