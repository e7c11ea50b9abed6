/* SPDX-License-Identifier: MIT */
/* The heap model's per-program view (ana_model_options.programs): the
 * processes of one executable as one scope. Its peak is the largest sum
 * of the heaps of its processes running at one moment, found as the
 * all-images scope finds the tree's: an image's heap leaves the running
 * sum at its exit (or exec) and stays the program's as its leaks. Each
 * site's live bytes at its program's peak are kept by the model's lazy
 * generations (ana_model.c's touch): saved just before a site changes
 * when its program reached a new peak since. The hooks run only when the
 * view was asked for: the model without it pays one test per event. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/model/ana_model_internal.h"
#include "util/util_array.h"

static struct ana_scope *prog_of(struct ana_model *m, uint32_t image)
{
    const struct ana_programs *p = m->opt.programs;

    return image < p->nr_images ? &m->progs[p->of_image[image]] : NULL;
}

int ana_model_prog_init(struct ana_model *m)
{
    const struct ana_programs *p = m->opt.programs;

    if (!p)
        return 0;
    m->nr_progs = p->nr;
    m->progs = calloc((size_t)p->nr + 1, sizeof(*m->progs));
    m->end_pgen = calloc((size_t)p->nr_images + 1, sizeof(*m->end_pgen));
    if (!m->progs || !m->end_pgen)
        return -ENOMEM;
    for (uint32_t k = 0; k < p->nr; k++)
        m->progs[k].image = UINT32_MAX;
    return 0;
}

void ana_model_prog_release(struct ana_model *m)
{
    free(m->progs);
    free(m->shares);
    free(m->end_pgen);
}

/* Save site stack's bytes at its program's latest peak if it has not
 * changed since (the site's own live bytes: the model's, not changed
 * yet). An image that ended before that peak had nothing then. */
static void save_share(struct ana_model *m, struct ana_prog_share *sh, const struct ana_site *s,
                       const struct ana_scope *prog)
{
    const struct ana_scope *img = &m->images[s->image];

    if (sh->gen >= prog->gen_)
        return;
    sh->bytes = img->ended && m->end_pgen[s->image] < prog->gen_ ? 0
                : s->live_bytes > 0                              ? (uint64_t)s->live_bytes
                                                                 : 0;
    sh->gen = prog->gen_;
}

int ana_model_prog_touch(struct ana_model *m, uint32_t stack, uint32_t image)
{
    struct ana_scope *prog = prog_of(m, image);
    uint32_t k = ana_model_site_index(m, stack);

    if (!prog || k == UINT32_MAX)
        return 0;
    if (k >= m->nr_shares && UTIL_ARRAY_RESERVE_ZERO(m->shares, m->nr_shares, (size_t)k + 1, 1024))
        return -ENOMEM;
    save_share(m, &m->shares[k], &m->sites[k], prog);
    return 0;
}

void ana_model_prog_heap(struct ana_model *m, uint32_t image, uint64_t d_heap, uint64_t d_blocks,
                         uint64_t ts)
{
    struct ana_scope *prog = prog_of(m, image);

    if (!prog)
        return;
    /* Differences in two's complement: a free moves them down. */
    prog->running_heap += d_heap;
    prog->running_blocks += d_blocks;
    if (prog->running_heap > prog->peak) {
        prog->peak = prog->running_heap;
        prog->peak_ns = ts;
        prog->peak_blocks = prog->running_blocks;
        prog->gen_++;
    }
}

void ana_model_prog_peak_blocks(struct ana_model *m, uint32_t image, uint64_t ts)
{
    struct ana_scope *prog = prog_of(m, image);

    if (prog && prog->running_heap == prog->peak && prog->peak_ns == ts)
        prog->peak_blocks = prog->running_blocks;
}

void ana_model_prog_exit(struct ana_model *m, const struct ana_scope *img)
{
    struct ana_scope *prog = prog_of(m, img->image);

    if (!prog)
        return;
    m->end_pgen[img->image] = prog->gen_;
    prog->running_heap -= img->heap;
    prog->running_blocks -= img->live_blocks;
    prog->rss -= img->rss;
}

void ana_model_prog_rss(struct ana_model *m, const struct ana_scope *img, uint64_t sample,
                        uint64_t ts)
{
    struct ana_scope *prog = prog_of(m, img->image);

    if (!prog)
        return;
    prog->has_rss = true;
    if (img->ended)
        return;
    prog->rss = prog->rss - img->rss + sample;
    if (prog->rss > prog->rss_peak) {
        prog->rss_peak = prog->rss;
        prog->rss_peak_ns = ts;
    }
}

/* A program's counters, heap and times: its images' summed, from scratch
 * (finish may run again after more events). */
static void sum_images(struct ana_model *m)
{
    for (uint32_t k = 0; k < m->nr_progs; k++) {
        struct ana_scope *pr = &m->progs[k];
#define ZERO(name, dim) memset(&pr->name, 0, sizeof(pr->name));
        ANA_SCOPE_COUNTERS(ZERO)
#undef ZERO
        pr->heap = pr->live_blocks = 0;
        pr->seen = false;
        pr->ended = true;
        pr->end_ns = 0;
    }
    for (uint32_t i = 0; i < m->nr_images; i++) {
        const struct ana_scope *img = &m->images[i];
        struct ana_scope *pr = prog_of(m, i);
        if (!pr || !img->seen)
            continue;
/* Every counter is uint64_t, one or an array (ana_model.h). */
#define ADD(name, dim)                                                                             \
    for (size_t q = 0; q < sizeof(pr->name) / sizeof(uint64_t); q++)                               \
        ((uint64_t *)&pr->name)[q] += ((const uint64_t *)&img->name)[q];
        ANA_SCOPE_COUNTERS(ADD)
#undef ADD
        pr->heap += img->heap;
        pr->live_blocks += img->live_blocks;
        if (!pr->seen || img->first_ns < pr->first_ns)
            pr->first_ns = img->first_ns;
        if (!pr->seen || img->last_ns > pr->last_ns)
            pr->last_ns = img->last_ns;
        if (!pr->seen)
            pr->pid = img->pid;
        pr->seen = true;
        pr->ended = pr->ended && img->ended;
        if (img->end_ns > pr->end_ns)
            pr->end_ns = img->end_ns;
    }
}

void ana_model_prog_finish(struct ana_model *m)
{
    if (!m->progs)
        return;
    for (uint32_t k = 0; k < m->nr_sites; k++) {
        const struct ana_site *s = &m->sites[k];
        if (!prog_of(m, s->image))
            continue;
        if (k >= m->nr_shares &&
            UTIL_ARRAY_RESERVE_ZERO(m->shares, m->nr_shares, (size_t)k + 1, 1024))
            continue; /* out of memory: the share stays 0 */
        save_share(m, &m->shares[k], s, prog_of(m, s->image));
    }
    sum_images(m);
}

uint32_t ana_model_nr_programs(const struct ana_model *m)
{
    return m->nr_progs;
}

const struct ana_scope *ana_model_program(const struct ana_model *m, uint32_t program)
{
    return program < m->nr_progs ? &m->progs[program] : NULL;
}

uint64_t ana_model_site_program_peak(const struct ana_model *m, uint32_t stack)
{
    uint32_t k = ana_model_site_index(m, stack);

    return k < m->nr_shares ? m->shares[k].bytes : 0;
}
