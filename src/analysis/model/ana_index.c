/* SPDX-License-Identifier: MIT */
/* The trace's index of live heap per stack (see ana_index.h). */
#include "analysis/model/ana_index.h"

#include <errno.h>
#include <stdlib.h>

#include "analysis/core/ana_map.h"
#include "analysis/model/ana_heaps.h"

const char ana_index_stackless[] = "blocks without a stack in a trace of several processes";

const char *ana_index_refusal(struct fmt_reader *r, const struct ana_filter *f)
{
    if (fmt_reader_sample_bytes(r))
        return "a sampled trace's summaries hold recorded sizes, not estimates";
    if (fmt_reader_info(r)->aggregate_ns)
        return "an aggregated trace's summaries do not hold its batches";
    if (ana_heaps_present(r))
        return "a pool's or Windows heap's destruction ends blocks the summaries do not";
    if (f && f->nr_tids)
        return "the summaries are per stack, not per thread (--tid)";
    return NULL;
}

const char *ana_index_no_totals(struct fmt_reader *r)
{
    return fmt_reader_has_totals(r)
               ? NULL
               : "the trace has no chunk totals (format 1.10: memscribe record --totals)";
}

struct live {
    int64_t bytes, blocks;
};

struct walk {
    struct fmt_reader *r;
    ana_index_live_fn *fn;
    ana_index_image_fn *done;
    void *arg;
    uint32_t nr_images;
    uint32_t chunk;       /* the summary being read */
    uint32_t *last;       /* by image: its last chunk with a change + 1 (0: none) */
    bool *selected;       /* by image */
    struct ana_map *sums; /* by image: stack + 1 -> struct live, summed so far */
    struct live none;     /* stack 0's, in a trace of several processes */
    int rc;
};

/* The image of stack, or UINT32_MAX for none the walk knows: a stack the
 * trace does not define is left out, as an image past the table; a
 * corrupt stack record ends the walk (w->rc). Stack 0 is the only
 * process's. */
static uint32_t image_of(struct walk *w, uint32_t stack)
{
    uint32_t image = 0;
    int rc = stack ? fmt_reader_stack_image(w->r, stack, &image) : 0;

    if (rc && rc != -EINVAL && !w->rc)
        w->rc = rc;
    return !rc && image < w->nr_images ? image : UINT32_MAX;
}

/* The first reading: each image's last chunk with a change. */
static void note_last(void *arg, uint32_t stack, int64_t bytes, int64_t blocks)
{
    struct walk *w = arg;

    if (!stack && w->nr_images > 1) {
        w->none.bytes += bytes;
        w->none.blocks += blocks;
        return;
    }
    uint32_t image = image_of(w, stack);
    if (image != UINT32_MAX)
        w->last[image] = w->chunk + 1;
}

/* The second: a selected image's changes summed per stack (a stack back
 * at nothing leaves the map). */
static void sum(void *arg, uint32_t stack, int64_t bytes, int64_t blocks)
{
    struct walk *w = arg;
    uint32_t image = w->rc || (!stack && w->nr_images > 1) ? UINT32_MAX : image_of(w, stack);

    if (image == UINT32_MAX || !w->selected[image])
        return;
    struct live *l = ana_map_put(&w->sums[image], (uint64_t)stack + 1, NULL);
    if (!l) {
        w->rc = -ENOMEM;
        return;
    }
    l->bytes += bytes;
    l->blocks += blocks;
    if (!l->bytes && !l->blocks)
        ana_map_del(&w->sums[image], (uint64_t)stack + 1);
}

struct stack_live {
    uint32_t stack;
    struct live l;
};

static int by_stack(const void *x, const void *y)
{
    const struct stack_live *a = x, *b = y;

    return (a->stack > b->stack) - (a->stack < b->stack);
}

/* Image's last change was read: its stacks to fn, in id order, then done. */
static int emit(struct walk *w, uint32_t image)
{
    struct ana_map *m = &w->sums[image];
    struct stack_live *v = malloc((m->nr + 1) * sizeof(*v));
    size_t n = 0;
    int rc = 0;

    if (!v)
        return -ENOMEM;
    for (size_t i = 0; i < m->cap; i++)
        if (ana_map_slot_key(m, i))
            v[n++] = (struct stack_live){(uint32_t)(ana_map_slot_key(m, i) - 1),
                                         *(const struct live *)ana_map_slot_val(m, i)};
    ana_map_release(m);
    qsort(v, n, sizeof(*v), by_stack);
    for (size_t i = 0; i < n && !rc; i++)
        rc = w->fn(w->arg, v[i].stack, image, v[i].l.bytes, v[i].l.blocks);
    free(v);
    return rc || !w->done ? rc : w->done(w->arg, image, w->selected[image]);
}

/* The order images are emitted in: by last change, then by index. */
static int by_last(const void *x, const void *y, void *arg)
{
    const uint32_t *last = arg, a = *(const uint32_t *)x, b = *(const uint32_t *)y;

    if (last[a] != last[b])
        return last[a] < last[b] ? -1 : 1;
    return (a > b) - (a < b);
}

/* The images with a change before chunk k, in the order of their last;
 * *n how many. NULL when out of memory. */
static uint32_t *emit_order(const struct walk *w, uint32_t *n)
{
    uint32_t *order = malloc(((size_t)w->nr_images + 1) * sizeof(*order));

    *n = 0;
    for (uint32_t i = 0; order && i < w->nr_images; i++)
        if (w->last[i])
            order[(*n)++] = i;
    if (order)
        qsort_r(order, *n, sizeof(*order), by_last, w->last);
    return order;
}

/* The second reading: each image emitted once its last change is summed,
 * between two summaries (emitting may decode stacks with the reader). */
static int sum_and_emit(struct walk *w, uint32_t k)
{
    uint32_t n, next = 0;
    uint32_t *order = emit_order(w, &n);
    int rc = order ? 0 : -ENOMEM;

    for (w->chunk = 0; w->chunk < k && !rc; w->chunk++) {
        rc = fmt_reader_chunk_delta(w->r, w->chunk, sum, w) ?: w->rc;
        for (; !rc && next < n && w->last[order[next]] == w->chunk + 1; next++)
            rc = emit(w, order[next]);
    }
    free(order);
    return rc;
}

/* The selected images, and for each a map (empty until its first change). */
static int walk_init(struct walk *w, const struct ana_filter *f)
{
    w->nr_images = fmt_reader_nr_images(w->r);
    w->last = calloc((size_t)w->nr_images + 1, sizeof(*w->last));
    w->selected = calloc((size_t)w->nr_images + 1, sizeof(*w->selected));
    w->sums = calloc((size_t)w->nr_images + 1, sizeof(*w->sums));
    if (!w->last || !w->selected || !w->sums)
        return -ENOMEM;
    for (uint32_t i = 0; i < w->nr_images; i++) {
        const struct fmt_image_info *ii = fmt_reader_image(w->r, i);
        w->selected[i] = ii && ana_filter_image(f, i, ii->pid);
        ana_map_init(&w->sums[i], sizeof(struct live));
    }
    return 0;
}

static void walk_release(struct walk *w)
{
    for (uint32_t i = 0; w->sums && i < w->nr_images; i++)
        ana_map_release(&w->sums[i]);
    free(w->sums);
    free(w->selected);
    free(w->last);
}

int ana_index_live_at(struct fmt_reader *r, uint32_t k, const struct ana_filter *f,
                      ana_index_live_fn *fn, ana_index_image_fn *done, void *arg)
{
    struct walk w = {.r = r, .fn = fn, .done = done, .arg = arg};
    int rc = k > fmt_reader_nr_chunks(r) ? -EINVAL : walk_init(&w, f);

    for (w.chunk = 0; w.chunk < k && !rc; w.chunk++)
        rc = fmt_reader_chunk_delta(r, w.chunk, note_last, &w) ?: w.rc;
    /* A block without a stack: of the only process, or of one unknown. */
    if (!rc && (w.none.bytes || w.none.blocks))
        rc = -ENOTSUP;
    if (!rc)
        rc = sum_and_emit(&w, k);
    walk_release(&w);
    return rc;
}
