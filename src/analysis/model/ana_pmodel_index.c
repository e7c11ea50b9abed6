/* SPDX-License-Identifier: MIT */
/* The heap model of a moment from the trace's index (ana_pmodel.h,
 * ana_pmodel_index_build; the planner's index route): one range replayed from the chunk that
 * reaches the moment, merged as ana_pmodel.c merges ranges, plus what the chunk summaries say was
 * live before it (ana_index.h). With opt->retire (a fold: leaks
 * --index on a build), each image's sites are retired as soon as its live
 * state is read, image by image, as a replay retires them at each exit:
 * the model then holds a few processes' sites, not every stack of the
 * build. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "analysis/model/ana_index.h"
#include "analysis/model/ana_model_internal.h"
#include "analysis/model/ana_pmodel_internal.h"

const char *ana_pmodel_index_refusal(struct fmt_reader *r, const struct ana_model_options *opt)
{
    struct ana_model_options o = ana_pmodel_plain_options(opt);

    if (!ana_pmodel_supported(&o))
        return "--all and the leak classes of a record --reach trace need every block";
    return ana_index_refusal(r, opt ? opt->filter : NULL);
}

struct base {
    struct fmt_reader *r;
    struct ana_model *m;
    const struct ana_filter *filter;
};

/* A stack's live heap at the index's chunk (ana_index_live_at). */
static int base_stack(void *arg, uint32_t stack, uint32_t image, int64_t bytes, int64_t blocks)
{
    struct base *b = arg;
    struct ana_site *s = ana_model_site_make(b->m, stack, image);
    struct ana_scope *img = ana_model_image_make(b->m, image);

    if (!s || !img)
        return -ENOMEM;
    s->live_bytes += bytes;
    s->live_blocks += blocks;
    struct ana_scope *sc[2] = {img, &b->m->total};
    for (int i = 0; i < 2; i++) {
        sc[i]->heap += (uint64_t)bytes;
        sc[i]->live_blocks += (uint64_t)blocks;
    }
    return 0;
}

/* Image's live state is all read (ana_index_image_fn): its sites are
 * retired (the range's with the summaries'); when it keeps none (the
 * filter leaves it out, or nothing of it was live), its stacks are let go
 * as a replay lets those of an image left out go at its exit. */
static int base_done(void *arg, uint32_t image, bool selected)
{
    struct base *b = arg;
    const struct ana_model_retire *rt = &b->m->opt.retire;
    const struct fmt_image_info *ii = fmt_reader_image(b->r, image);

    if (!rt->fn)
        return 0;
    if (selected && ana_model_first_site(b->m, image) != UINT32_MAX)
        return ana_model_retire_image(b->m, image);
    return rt->left_out && ii && ii->ended ? rt->left_out(rt->arg, image, ii->end_ns) : 0;
}

/* The images that had an event before chunk k (a thread's first event). */
static int base_seen(struct base *b, uint32_t k)
{
    if (k == 0)
        return 0;
    uint64_t before = fmt_reader_chunk(b->r, k - 1)->last_ts_ns;
    for (uint32_t t = 0; t < fmt_reader_nr_threads(b->r); t++) {
        const struct fmt_thread_info *ti = fmt_reader_thread(b->r, t);
        const struct fmt_image_info *ii = fmt_reader_image(b->r, ti->image);
        if (ti->start_ns > before || !ii || !ana_filter_image(b->filter, ti->image, ii->pid))
            continue;
        struct ana_scope *sc[2] = {ana_model_image_make(b->m, ti->image), &b->m->total};
        if (!sc[0])
            return -ENOMEM;
        for (int i = 0; i < 2; i++) {
            if (!sc[i]->seen || ti->start_ns < sc[i]->first_ns)
                sc[i]->first_ns = ti->start_ns;
            sc[i]->seen = true;
        }
        sc[0]->pid = ii->pid;
        if (ii->ended && ii->end_ns <= before) {
            sc[0]->ended = true;
            sc[0]->end_ns = ii->end_ns;
        }
    }
    return 0;
}

/* The replay of the chunks from the one that reaches until_ns (none if it
 * is past them all), merged, plus the summaries of the chunks before it. */
int ana_pmodel_index_build(struct ana_model **out, struct fmt_reader *r, const char *path,
                           const struct ana_model_options *opt, uint64_t until_ns, char *err,
                           size_t err_size)
{
    uint32_t k = fmt_reader_find_chunk(r, until_ns);
    struct ana_model_options ro = ana_pmodel_plain_options(opt);
    /* One chunk's stacks among a build's millions: its sites paged. */
    struct range rg = {.path = path,
                       .opt = &ro,
                       .first_chunk = k,
                       .end_ns = UINT64_MAX,
                       .until_ns = until_ns,
                       .paged_sites = true};
    struct base b = {.r = r, .filter = opt ? opt->filter : NULL};
    int rc = 0;

    if (k < fmt_reader_nr_chunks(r)) {
        rg.from_ns = rg.prog_end_ns = fmt_reader_chunk(r, k)->first_ts_ns;
        ana_pmodel_run_range(&rg);
        if ((rc = rg.rc) && err && err_size)
            snprintf(err, err_size, "%s", rg.err);
    } else if (!(rc = ana_model_create_partial(&rg.m, &ro))) {
        ana_heap_replay_init(&rg.replay, &(struct ana_step_options){.partial = true});
    }
    if (!rc && !(rc = ana_model_create(out, opt)) && (rc = ana_pmodel_merge(*out, &rg, 1))) {
        ana_model_destroy(*out);
        *out = NULL;
    }
    if (!rc) {
        b.m = *out;
        if (!(rc = base_seen(&b, k)))
            rc = ana_index_live_at(r, k, b.filter, base_stack, base_done, &b);
        /* Finish as a replay does: the per-program view summed, the images
         * not retired yet retired. The merged model has no peak
         * generations, so its sites' shares stay as the merge made them. */
        if (!rc)
            rc = ana_model_finish(*out);
        if (rc == -ENOTSUP && err && err_size)
            snprintf(err, err_size, "%s", ana_index_stackless);
        if (rc) {
            ana_model_destroy(*out);
            *out = NULL;
        }
    }
    ana_model_destroy(rg.m);
    ana_heap_replay_release(&rg.replay);
    return rc;
}
