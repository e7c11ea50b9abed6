/* SPDX-License-Identifier: MIT */
/* The one reading of heap events every exporter uses (it mirrors the
 * analysis core's ana_model_event: a free or realloc ends the block the
 * reader matched, then an allocation starts one), and the per-stack model
 * the exporters print, taken from ana_model so the numbers are the
 * report's. Memory grows with stacks and threads. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/export/ana_export_internal.h"
#include "analysis/model/ana_model.h"

static int temp_grow(struct ana_xtemp *t, uint32_t thread)
{
    uint32_t n = t->nr_threads ? t->nr_threads : 16;
    uint64_t *p;

    while (n <= thread)
        n *= 2;
    p = realloc(t->last_alloc, n * sizeof(*p));
    if (!p)
        return -ENOMEM;
    memset(p + t->nr_threads, 0, (n - t->nr_threads) * sizeof(*p));
    t->last_alloc = p;
    t->nr_threads = n;
    return 0;
}

int ana_xstep_event(struct ana_xtemp *t, const struct fmt_event *ev, struct ana_xstep *st)
{
    memset(st, 0, sizeof(*st));
    /* Every pass calls this for every event: a cheap place for progress. */
    if (t->o && t->o->progress && !(++t->nr_events & 0xfffff))
        t->o->progress(t->o->progress_arg, ev->ts_ns);
    if (ev->kind != FMT_EV_FREE && !fmt_kind_is_heap_alloc(ev->kind))
        return 0;
    if (t->o && !ana_filter_pid(t->o->filter, ev->pid))
        return 0;
    if (ev->thread >= t->nr_threads && temp_grow(t, ev->thread))
        return -ENOMEM;
    if (ev->ref && (ev->kind == FMT_EV_FREE || ev->kind == FMT_EV_REALLOC ||
                    ev->kind == FMT_EV_REALLOCARRAY)) {
        st->ends = true;
        st->temporary = t->last_alloc[ev->thread] == ev->ref;
    }
    if (ev->kind != FMT_EV_FREE && ev->serial) {
        st->starts = true;
        t->last_alloc[ev->thread] = ev->serial;
    }
    return st->ends || st->starts;
}

void ana_xtemp_release(struct ana_xtemp *t)
{
    free(t->last_alloc);
    t->last_alloc = NULL;
    t->nr_threads = 0;
}

/* Find the ordinal of the heap event that reached the peak, which the
 * core does not keep: the exporters that place the peak in a stream of
 * events (massif, DHAT, heaptrack) need it. */
static int pass(struct fmt_reader *r, const struct ana_export_options *o, struct ana_model *am,
                struct ana_xmodel *m)
{
    struct ana_filter *filter = o ? o->filter : NULL;
    struct ana_xtemp t = {.o = o};
    struct fmt_event ev;
    struct ana_xstep st;
    uint64_t step = 0, heap = 0;
    bool first = true;
    int rc;

    while ((rc = fmt_reader_next(r, &ev)) > 0) {
        if (!ana_filter_pid(filter, ev.pid))
            continue;
        if (first)
            m->first_ts_ns = ev.ts_ns, first = false;
        m->end_ts_ns = ev.ts_ns;
        if ((rc = ana_model_event(am, &ev)) || (rc = ana_xstep_event(&t, &ev, &st)) < 0)
            break;
        if (!rc)
            continue;
        step++;
        heap += (st.starts ? ev.size : 0) - (st.ends ? ev.ref_size : 0);
        if (heap > m->peak_bytes) {
            m->peak_bytes = heap;
            m->peak_step = step;
        }
    }
    ana_xtemp_release(&t);
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
    if (all->peak != m->peak_bytes) {
        rc = -EPROTO;
        goto out;
    }
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
