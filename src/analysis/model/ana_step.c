/* SPDX-License-Identifier: MIT */
/* What one event means for the heap (see ana_step.h). */
#include "analysis/model/ana_step.h"
#include "analysis/model/ana_model_internal.h"

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
