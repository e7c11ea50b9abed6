/* SPDX-License-Identifier: MIT */
/* What one event means for the heap (see ana_step.h). */
#include "analysis/model/ana_step.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/util_array.h"

struct seq_val {
    uint64_t seq;
    uint32_t thread;
};

void ana_stepper_init(struct ana_stepper *s, const struct ana_step_options *opt)
{
    memset(s, 0, sizeof(*s));
    if (opt)
        s->opt = *opt;
    s->filtering = !ana_filter_is_empty(s->opt.filter);
    if (s->opt.temporary_threshold)
        s->opt.loose_temporary = true;
    s->temp_other = s->opt.loose_temporary;
    if (s->opt.partial)
        s->peak = ANA_STEP_PARTIAL_PEAK_START;
    ana_map_init(&s->seqs, sizeof(struct seq_val));
}

void ana_stepper_release(struct ana_stepper *s)
{
    free(s->threads);
    free(s->images);
    ana_map_release(&s->seqs);
    memset(s, 0, sizeof(*s));
}

struct ana_step_thread *ana_stepper_grow(struct ana_stepper *s, uint32_t thread)
{
    if (UTIL_ARRAY_RESERVE_ZERO(s->threads, s->nr_threads, (size_t)thread + 1, 16))
        return NULL;
    return &s->threads[thread];
}

struct ana_step_image *ana_stepper_grow_images(struct ana_stepper *s, uint32_t image)
{
    if (UTIL_ARRAY_RESERVE_ZERO(s->images, s->nr_images, (size_t)image + 1, 16))
        return NULL;
    return &s->images[image];
}

int ana_stepper_exit(struct ana_stepper *s, const struct fmt_event *ev)
{
    struct ana_step_image *im = ana_stepper_image(s, ev->image);

    if (!im)
        return -ENOMEM;
    if (!im->ended) {
        im->ended = true;
        s->heap = s->heap >= im->heap ? s->heap - im->heap : 0;
    }
    return 0;
}

void ana_stepper_aggregated(struct ana_stepper *s)
{
    s->aggregated = true;
    s->temp_other = true;
}

enum ana_temp ana_stepper_temporary_other(struct ana_stepper *s, const struct ana_step_thread *t,
                                          const struct fmt_event *ev)
{
    bool yes = s->opt.temporary_threshold ? ana_stepper_seq_end(s, t, ev)
               : s->opt.loose_temporary   ? t->last_alloc == ev->ref
                                          : false;

    /* Aggregated: the kept block's temporary (if it was) is in a batch
     * row; the reader lacks the transient calls that decide it. */
    return yes && !s->aggregated ? ANA_TEMP_YES : ANA_TEMP_NO;
}

/* A transient group (ana_step.h): its bytes join or leave heap. */
static int transient(struct ana_stepper *s, const struct fmt_event *ev, struct ana_step *st,
                     bool partial)
{
    bool end = ev->flags & FMT_EVF_TRANSIENT_END;

    if (partial)
        s->heap += end ? -ev->size : ev->size; /* a delta, as the blocks' */
    else if (ana_stepper_image_heap(s, ev, end ? 0 : ev->size, end ? ev->size : 0))
        return -ENOMEM;
    st->transient = end ? -1 : 1;
    /* As after an allocation; signed in partial mode (ana_step.h). */
    if (!end && (partial ? (int64_t)s->heap > (int64_t)s->peak : s->heap > s->peak)) {
        s->peak = s->heap;
        st->peak = true;
    }
    st->heap = s->heap;
    return 1;
}

int ana_stepper_aggregate_event(struct ana_stepper *s, const struct fmt_event *ev,
                                struct ana_step *st, bool mine, bool partial)
{
    int rc = 0;

    *st = (struct ana_step){.selected = true, .mine = mine, .heap = s->heap};
    switch (ev->kind) {
    case FMT_EV_HEAP_BATCH:
        st->batch = mine;
        break;
    case FMT_EV_HEAP_TRANSIENT:
        /* A group has no thread: under --thread heap is of kept blocks. */
        if (!s->filtering || !s->opt.filter->nr_tids)
            rc = transient(s, ev, st, partial);
        break;
    case FMT_EV_AGGREGATE:
        ana_stepper_aggregated(s);
        break;
    }
    if (rc < 0)
        *st = (struct ana_step){0};
    return rc;
}

bool ana_stepper_seq_end(struct ana_stepper *s, const struct ana_step_thread *t,
                         const struct fmt_event *ev)
{
    const struct seq_val *v = ana_map_get(&s->seqs, ev->ref);
    bool yes = v && v->thread == ev->thread && t->seq - v->seq <= s->opt.temporary_threshold;

    ana_map_del(&s->seqs, ev->ref);
    return yes;
}

int ana_stepper_seq_start(struct ana_stepper *s, const struct ana_step_thread *t,
                          const struct fmt_event *ev)
{
    struct seq_val *v = ana_map_put(&s->seqs, ev->serial, NULL);

    if (!v)
        return -ENOMEM;
    v->seq = t->seq;
    v->thread = ev->thread;
    return 0;
}
