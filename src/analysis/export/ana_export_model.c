/* SPDX-License-Identifier: MIT */
/* The exporters' reading of heap events (the analysis core's, ana_step.h,
 * with the export's options and progress), and the per-stack model the
 * exporters print, taken from ana_model so the numbers are the report's.
 * Memory grows with stacks and threads. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/export/ana_export_internal.h"
#include "analysis/export/ana_export_map.h"
#include "analysis/model/ana_model.h"

int ana_xstep_event(struct ana_xtemp *t, const struct fmt_event *ev, struct ana_xstep *st)
{
    int rc;

    /* Every pass calls this for every event: a cheap place for progress. */
    if (t->o && t->o->progress && !(++t->nr_events & 0xfffff))
        t->o->progress(t->o->progress_arg, ev->ts_ns);
    if (!t->started) {
        ana_stepper_init(&t->step,
                         &(struct ana_step_options){.filter = t->o ? t->o->filter : NULL});
        t->started = true;
    }
    struct ana_step step;
    if ((rc = ana_stepper_event(&t->step, ev, &step)) < 0)
        return rc;
    st->ends = step.ends;
    st->starts = step.starts;
    st->temporary = step.temporary == ANA_TEMP_YES;
    st->heap = step.heap;
    return rc;
}

void ana_xtemp_release(struct ana_xtemp *t)
{
    if (t->started)
        ana_stepper_release(&t->step);
    t->started = false;
}

/* Find the ordinal of the heap event that reached the peak (the last one
 * whose step reached a new peak), which the core does not keep: the exporters that place the peak
 * in a stream of events (massif, DHAT, heaptrack) need it. */
static int pass(struct fmt_reader *r, const struct ana_export_options *o, struct ana_model *am,
                struct ana_xmodel *m)
{
    struct ana_filter *filter = o ? o->filter : NULL;
    struct fmt_event ev;
    uint64_t step = 0, nr_events = 0;
    bool first = true;
    int rc;

    while ((rc = fmt_reader_next(r, &ev)) > 0) {
        if (!ana_filter_image(filter, ev.image, ev.pid))
            continue;
        if (o && o->progress && !(++nr_events & 0xfffff))
            o->progress(o->progress_arg, ev.ts_ns);
        if (first)
            m->first_ts_ns = ev.ts_ns, first = false;
        m->end_ts_ns = ev.ts_ns;
        struct ana_step st;
        if ((rc = ana_model_event_step(am, &ev, &st)))
            break;
        if (!st.ends && !st.starts)
            continue;
        step++;
        if (st.peak)
            m->peak_step = step;
    }
    return rc;
}

int ana_xmodel_build(struct fmt_reader *r, const struct ana_export_options *o, struct ana_xmodel *m)
{
    struct ana_model_options mo = {.filter = o ? o->filter : NULL};
    struct fmt_trace_counts c;
    struct ana_model *am;
    int rc;

    memset(m, 0, sizeof(*m));
    fmt_reader_counts(r, &c);
    m->nr_stacks = c.nr_stacks;
    m->stacks = calloc((size_t)m->nr_stacks + 1, sizeof(*m->stacks));
    if (!m->stacks)
        return -ENOMEM;
    if ((rc = ana_model_create(&am, &mo))) {
        ana_xmodel_release(m);
        return rc;
    }
    if ((rc = fmt_reader_seek_chunk(r, 0)) || (rc = pass(r, o, am, m)) < 0)
        goto out;
    ana_model_finish(am);
    const struct ana_scope *all = ana_model_total(am);
    m->peak_bytes = all->peak;
    m->nr_allocs = all->nr_allocs;
    m->alloc_bytes = all->alloc_bytes;
    m->nr_temporary = all->nr_temporary;
    m->live_blocks = all->live_blocks;
    m->live_bytes = all->heap;
    m->peak_blocks = all->peak_blocks;
    m->peak_ts_ns = all->peak_ns;
    for (uint32_t i = 0; i < ana_model_nr_sites(am); i++) {
        const struct ana_site *s = ana_model_site(am, i);
        /* A stack id beyond the trace's table (a corrupt id) counts as no stack. */
        struct ana_xstack *x = &m->stacks[i <= m->nr_stacks ? i : 0];

        if (!s)
            continue; /* no event used this stack id */
        x->nr_allocs += s->nr_allocs;
        x->alloc_bytes += s->alloc_bytes;
        x->nr_temporary += s->nr_temporary;
        x->live_blocks += s->live_blocks > 0 ? (uint64_t)s->live_blocks : 0;
        x->live_bytes += s->live_bytes > 0 ? (uint64_t)s->live_bytes : 0;
        x->peak_bytes += s->peak_all_bytes;
    }
    rc = 0;
out:
    ana_model_destroy(am);
    if (rc)
        ana_xmodel_release(m);
    return rc;
}

void ana_xmodel_release(struct ana_xmodel *m)
{
    free(m->stacks);
    m->stacks = NULL;
}

int ana_xlive_each(struct fmt_reader *r, const struct ana_export_options *o,
                   const struct ana_map *live, ana_xlive_fn *fn, void *arg)
{
    struct fmt_event ev;
    int rc;

    if (!live->nr)
        return 0;
    if ((rc = fmt_reader_seek_chunk(r, 0)))
        return rc;
    while ((rc = fmt_reader_next(r, &ev)) > 0)
        if (ev.serial && fmt_kind_is_heap_alloc(ev.kind) &&
            ana_filter_image(o->filter, ev.image, ev.pid) && ana_xmap_get(live, ev.serial, NULL) &&
            (rc = fn(arg, &ev)))
            break;
    return rc;
}
