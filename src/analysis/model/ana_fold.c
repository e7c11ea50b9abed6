/* SPDX-License-Identifier: MIT */
/* Rows folded at each image's end (see ana_fold.h). */
#include "analysis/model/ana_fold.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/ana_stacks.h"
#include "analysis/model/ana_model_internal.h"
#include "util/util_array.h"
#include "util/util_sort.h"

void ana_fold_init(struct ana_fold *f, const struct ana_programs *programs,
                   const struct ana_fold_calls *calls)
{
    memset(f, 0, sizeof(*f));
    f->programs = programs;
    f->calls = *calls;
    for (unsigned b = 0; b < ANA_FOLD_NR; b++)
        ana_map_init(&f->by[b].index, sizeof(uint32_t));
    ana_map_init(&f->img.index, sizeof(uint32_t));
}

void ana_fold_release(struct ana_fold *f)
{
    for (unsigned b = 0; b < ANA_FOLD_NR; b++) {
        free(f->by[b].v);
        ana_map_release(&f->by[b].index);
    }
    free(f->img.v);
    ana_map_release(&f->img.index);
    memset(f, 0, sizeof(*f));
}

/* Add a share saved at generation gen: the latest generation's only. */
static void add_share(uint64_t *row_gen, uint64_t *row_bytes, uint64_t gen, uint64_t bytes)
{
    if (gen > *row_gen) {
        *row_gen = gen;
        *row_bytes = bytes;
    } else if (gen == *row_gen) {
        *row_bytes += bytes;
    }
}

/* The row of (group, key) in rows, made on first use (*made set); NULL
 * when out of memory. */
static struct ana_fold_row *row_of(struct ana_fold_rows *rows, uint32_t group, uint32_t key,
                                   uint32_t stack, uint32_t image, bool *made)
{
    int created;
    uint32_t *at = ana_map_put(&rows->index, ((uint64_t)group << 32 | key) + 1, &created);

    *made = false;
    if (!at)
        return NULL;
    if (!created)
        return &rows->v[*at - 1];
    if (UTIL_ARRAY_RESERVE(rows->v, rows->cap, (size_t)rows->nr + 1, 256)) {
        ana_map_del(&rows->index, ((uint64_t)group << 32 | key) + 1);
        return NULL;
    }
    struct ana_fold_row *r = &rows->v[rows->nr];
    *at = ++rows->nr;
    memset(r, 0, sizeof(*r));
    r->s.image = image;
    r->stack = r->made_stack = stack;
    r->live_stack = UINT32_MAX;
    r->key = key;
    *made = true;
    return r;
}

/* The row of (group, key) of rows, told to the caller when new (made,
 * and stays unless it is an image's row, kept or not later); NULL when
 * out of memory (*rc -ENOMEM) or a callback failed (*rc its). */
static struct ana_fold_row *get_row(struct ana_fold *f, struct ana_fold_rows *rows, uint32_t group,
                                    uint32_t key, uint32_t stack, uint32_t image, int *rc)
{
    const struct ana_fold_calls *c = &f->calls;
    bool made;
    struct ana_fold_row *r = row_of(rows, group, key, stack, image, &made);

    *rc = r ? 0 : -ENOMEM;
    if (r && made && c->made && (*rc = c->made(c->arg, stack, &r->tag)))
        return NULL;
    if (r && made && rows != &f->img && c->stays && (*rc = c->stays(c->arg, stack)))
        return NULL;
    return r;
}

/* The image's rows (f->img) the caller keeps into the rows by image. */
static int keep_image_rows(struct ana_fold *f, uint32_t image)
{
    const struct ana_fold_calls *c = &f->calls;
    struct ana_fold_rows *img = &f->img, *to = &f->by[ANA_FOLD_BY_IMAGE];
    bool *keep = calloc(img->nr ? img->nr : 1, sizeof(*keep));
    int rc = keep ? c->image_rows(c->image_arg, image, img->v, img->nr, keep) : -ENOMEM;

    for (uint32_t i = 0; i < img->nr && !rc; i++) {
        if (!keep[i])
            continue;
        if (UTIL_ARRAY_RESERVE(to->v, to->cap, (size_t)to->nr + 1, 256))
            rc = -ENOMEM;
        else if (!c->stays || !(rc = c->stays(c->arg, img->v[i].made_stack)))
            to->v[to->nr++] = img->v[i];
    }
    free(keep);
    img->nr = 0;
    ana_map_release(&img->index);
    ana_map_init(&img->index, sizeof(uint32_t));
    return rc;
}

/* Site s of stack into row r: counters, lowest stacks, shares. */
static void add_site(struct ana_fold_row *r, const struct ana_site *s, uint32_t stack,
                     const struct ana_prog_share *prog)
{
#define ADD(type, name) r->s.name += s->name;
    ANA_SITE_COUNTERS(ADD)
#undef ADD
    if (stack < r->stack) {
        r->stack = stack;
        r->s.image = s->image;
    }
    if (s->live_blocks > 0 && stack < r->live_stack)
        r->live_stack = stack;
    r->nr_sites++;
    r->leaked_bytes += s->live_bytes > 0 ? (uint64_t)s->live_bytes : 0;
    r->s.peak_bytes += s->peak_bytes; /* an image's row's; the others' set at finish */
    add_share(&r->gen_prog_, &r->bytes_prog_, prog->gen, prog->bytes);
    add_share(&r->gen_all_, &r->bytes_all_, s->gen_all_, s->peak_all_bytes);
}

/* Image folded: its process's stacks go (f->letgo), once it ended; the
 * labeler's nodes its rows read go now (still running: at the end). */
static int let_go(struct ana_fold *f, const struct ana_model *m, uint32_t image)
{
    const struct ana_scope *s = ana_model_image(m, image);

    if (!f->letgo)
        return 0;
    if (s->ended)
        return ana_letgo_image(f->letgo, image, s->end_ns);
    if (f->letgo->stacks)
        ana_stacks_drop_nodes(f->letgo->stacks);
    return 0;
}

int ana_fold_image(void *arg, const struct ana_model *m, uint32_t image)
{
    struct ana_fold *f = arg;
    const struct ana_programs *p = f->programs;
    uint32_t group = p && image < p->nr_images ? p->of_image[image] : UINT32_MAX;

    for (uint32_t k = ana_model_first_site(m, image); k != UINT32_MAX;
         k = ana_model_next_site(m, k)) {
        const struct ana_site *s = &m->sites[k];
        uint32_t stack = m->site_stack[k], key;
        struct ana_prog_share none = {0};
        const struct ana_prog_share *share = k < m->nr_shares ? &m->shares[k] : &none;
        int rc;

        if (!s->nr_allocs && !s->live_blocks &&
            (!f->all_sites || (!s->live_bytes && !share->bytes && !s->peak_all_bytes)))
            continue; /* no row shows it (cli_rows.c, ana_flame_tree.c) */
        if ((rc = f->calls.key(f->calls.arg, stack, &key)))
            return rc;
        struct ana_fold_row *r = get_row(f, &f->by[ANA_FOLD_BY_ALL], 0, key, stack, image, &rc);
        if (!r)
            return rc;
        add_site(r, s, stack, share);
        if (f->calls.image_rows) {
            if (!(r = get_row(f, &f->img, image, key, stack, image, &rc)))
                return rc;
            add_site(r, s, stack, share);
        }
        if (group == UINT32_MAX)
            continue;
        if (!(r = get_row(f, &f->by[ANA_FOLD_BY_PROGRAM], group, key, stack, image, &rc)))
            return rc;
        add_site(r, s, stack, share);
    }
    int rc = f->calls.image_rows ? keep_image_rows(f, image) : 0;
    return rc ? rc : let_go(f, m, image);
}

/* An image the filter leaves out ended: its stacks go too. */
static int left_out(void *arg, uint32_t image, uint64_t end_ns)
{
    struct ana_fold *f = arg;

    return ana_letgo_image(f->letgo, image, end_ns);
}

struct ana_model_retire ana_fold_retire(struct ana_fold *f)
{
    return (struct ana_model_retire){
        .fn = ana_fold_image, .arg = f, .left_out = f->letgo ? left_out : NULL};
}

static int by_stack(const void *x, const void *y, void *arg)
{
    const struct ana_fold_row *a = x, *b = y;

    (void)arg;
    return (a->stack > b->stack) - (a->stack < b->stack);
}

int ana_fold_finish(struct ana_fold *f, const struct ana_model *m)
{
    uint64_t all_gen = m->total.gen_;

    for (unsigned b = 0; b < ANA_FOLD_NR; b++) {
        struct ana_fold_rows *rows = &f->by[b];
        for (uint32_t i = 0; i < rows->nr; i++) {
            struct ana_fold_row *r = &rows->v[i];
            const struct ana_programs *p = f->programs;
            const struct ana_scope *prog = p && r->s.image < p->nr_images && m->progs
                                               ? &m->progs[p->of_image[r->s.image]]
                                               : NULL;
            r->s.peak_all_bytes = r->gen_all_ == all_gen ? r->bytes_all_ : 0;
            if (b == ANA_FOLD_BY_IMAGE)
                continue; /* its own image's peak: final when it ended */
            r->s.peak_bytes = b == ANA_FOLD_BY_ALL                 ? r->s.peak_all_bytes
                              : prog && r->gen_prog_ == prog->gen_ ? r->bytes_prog_
                                                                   : 0;
        }
        util_sort_first(rows->v, rows->nr, sizeof(*rows->v), 0, by_stack, NULL);
        ana_map_release(&rows->index); /* places moved: no row is added after */
        ana_map_init(&rows->index, sizeof(uint32_t));
    }
    return 0;
}

const struct ana_fold_row *ana_fold_rows(const struct ana_fold *f, enum ana_fold_by by, uint32_t *n)
{
    *n = f->by[by].nr;
    return f->by[by].v;
}
