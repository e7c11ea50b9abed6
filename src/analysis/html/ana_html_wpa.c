/* SPDX-License-Identifier: MIT */
/* The HTML report's window pre-aggregation: per stack, a sparse histogram
 * of (allocation bucket, free bucket) -> blocks and bytes.
 *
 * A block is counted when it starts, under "never freed"; when it ends it
 * moves to its free bucket. What stays under "never freed" is outstanding
 * at the end. For a window of whole buckets [i, j] the page then sums
 * AIFI (i <= a <= j, f <= j), AIFO (i <= a <= j, f > j), AOFI (a < i,
 * i <= f <= j) and AOFO (a < i, f > j), which are exactly ana_window's
 * classes for [i*w, (j+1)*w - 1 ns]. */
#include <errno.h>

#include "analysis/html/ana_html_wpa.h"
#include "analysis/model/ana_heap_replay.h"

static uint64_t wpa_key(uint32_t stack, uint32_t a, uint32_t f)
{
    return ana_html_mix(((uint64_t)stack << 32 | (uint64_t)a << 16 | f) + 1);
}

void ana_html_wpa_key(uint64_t key, uint32_t *stack, uint32_t *alloc_bucket, uint32_t *free_bucket)
{
    key = ana_html_unmix(key) - 1;
    *stack = (uint32_t)(key >> 32);
    *alloc_bucket = (uint32_t)(key >> 16) & 0xffff;
    *free_bucket = (uint32_t)key & 0xffff;
}

uint64_t ana_html_bucket_width(uint64_t end_ns, uint32_t target)
{
    static const uint64_t steps[] = {1, 2, 5};
    uint64_t mag = 1;

    if (target > ANA_HTML_MAX_BUCKETS)
        target = ANA_HTML_MAX_BUCKETS;
    if (!target)
        target = 1;
    for (;;) {
        for (unsigned i = 0; i < 3; i++) {
            uint64_t w = steps[i] * mag;

            /* end_ns itself falls in bucket end_ns / w: count it. */
            if (end_ns / w + 1 <= target)
                return w;
        }
        if (mag > UINT64_MAX / 100)
            return UINT64_MAX;
        mag *= 10;
    }
}

int ana_html_wpa_init(struct ana_html_wpa *w, uint64_t bucket_ns, uint64_t end_ns)
{
    *w = (struct ana_html_wpa){
        .bucket_ns = bucket_ns ? bucket_ns : 1,
        .end_ns = end_ns,
        .max_cells = ANA_HTML_MAX_CELLS,
    }; /* no key_of: cells by stack id until the caller sets it */
    ana_map_init(&w->cells, sizeof(struct ana_html_cell));
    if (end_ns / w->bucket_ns >= ANA_HTML_MAX_BUCKETS)
        return -E2BIG;
    w->nr_buckets = (uint32_t)(end_ns / w->bucket_ns + 1);
    return 0;
}

void ana_html_wpa_release(struct ana_html_wpa *w)
{
    ana_map_release(&w->cells);
}

static uint32_t bucket_of(const struct ana_html_wpa *w, uint64_t ts_ns)
{
    uint64_t b = ts_ns / w->bucket_ns;

    /* Events after the end the index promised cannot happen in a whole
     * trace; keep them in the last bucket rather than overflow. */
    return b < w->nr_buckets ? (uint32_t)b : w->nr_buckets - 1;
}

/* How remap_cells moves a cell: the new key of (stack, a, f). */
typedef uint64_t remap_fn(const void *arg, uint32_t stack, uint32_t a, uint32_t f);

/* Move every cell to its new key (cells meeting there add up). Returns 0
 * or -ENOMEM (the cells are then lost: the page fails). */
static int remap_cells(struct ana_html_wpa *w, remap_fn *key, const void *arg)
{
    struct ana_map old = w->cells;

    ana_map_init(&w->cells, sizeof(struct ana_html_cell));
    for (size_t i = 0; i < old.cap; i++) {
        const struct ana_html_cell *c = ana_map_slot_val(&old, i);
        struct ana_html_cell *n;
        uint32_t stack, a, f;

        if (!ana_map_slot_key(&old, i))
            continue;
        ana_html_wpa_key(ana_map_slot_key(&old, i), &stack, &a, &f);
        if (!(n = ana_map_put(&w->cells, key(arg, stack, a, f), NULL))) {
            ana_map_release(&old);
            return -ENOMEM;
        }
        n->nr += c->nr;
        n->bytes += c->bytes;
    }
    ana_map_release(&old);
    return 0;
}

static uint64_t halved(const void *arg, uint32_t stack, uint32_t a, uint32_t f)
{
    (void)arg;
    return wpa_key(stack, a / 2, f == ANA_HTML_NEVER ? f : f / 2);
}

/* Double the bucket width: cell (a, f) joins (a/2, f/2). Windows of the
 * new, whole buckets stay exact. */
static int coarsen(struct ana_html_wpa *w)
{
    w->bucket_ns *= 2;
    w->nr_buckets = (uint32_t)(w->end_ns / w->bucket_ns + 1);
    w->nr_coarsened++;
    return remap_cells(w, halved, NULL);
}

/* The cells' key of a block of stack in image. */
static int cell_key(struct ana_html_wpa *w, uint32_t stack, uint32_t image, uint32_t *key)
{
    if (!w->key_of) {
        *key = stack;
        return 0;
    }
    return w->key_of(w->key_arg, stack, image, key);
}

int ana_html_wpa_step(struct ana_html_wpa *w, const struct fmt_event *ev, const struct ana_step *st)
{
    struct ana_html_cell *c;
    uint32_t key;
    int rc;

    if (w->cells.nr > w->max_cells && w->nr_buckets > 1 && (rc = coarsen(w)))
        return rc;
    if (st->ends) {
        uint32_t a = bucket_of(w, ev->ref_ts_ns);

        if ((rc = cell_key(w, ev->ref_stack, ev->image, &key)))
            return rc;
        c = ana_map_get(&w->cells, wpa_key(key, a, ANA_HTML_NEVER));
        if (c && c->nr) {
            c->nr = c->nr >= fmt_event_ref_count(ev) ? c->nr - fmt_event_ref_count(ev) : 0;
            c->bytes -= ev->ref_size;
            if (!c->nr)
                ana_map_del(&w->cells, wpa_key(key, a, ANA_HTML_NEVER));
        }
        if (!(c = ana_map_put(&w->cells, wpa_key(key, a, bucket_of(w, ev->ts_ns)), NULL)))
            return -ENOMEM;
        c->nr += fmt_event_ref_count(ev); /* an estimate in a sampled trace */
        c->bytes += ev->ref_size;
    }
    if ((st->starts || (st->batch && ev->arg[0])) && (rc = cell_key(w, ev->stack, ev->image, &key)))
        return rc;
    if (st->starts) {
        if (!(c = ana_map_put(&w->cells, wpa_key(key, bucket_of(w, ev->ts_ns), ANA_HTML_NEVER),
                              NULL)))
            return -ENOMEM;
        c->nr += fmt_event_count(ev);
        c->bytes += ev->size;
    }
    if (st->batch && ev->arg[0]) {
        /* An aggregated trace's blocks born and freed in the interval the
         * row's cut ends, all in the bucket that holds it (buckets hold
         * whole intervals: ana_html.c). */
        uint32_t b = bucket_of(w, ev->ts_ns ? ev->ts_ns - 1 : 0);
        if (!(c = ana_map_put(&w->cells, wpa_key(key, b, b), NULL)))
            return -ENOMEM;
        c->nr += ev->arg[0];
        c->bytes += ev->size;
    }
    return 0;
}

int ana_html_wpa_add(struct ana_html_wpa *w, uint32_t key, uint64_t start_ns, uint64_t end_ns,
                     bool open, uint64_t nr, uint64_t bytes)
{
    struct ana_html_cell *c;
    int rc;

    if (w->cells.nr > w->max_cells && w->nr_buckets > 1 && (rc = coarsen(w)))
        return rc;
    if (!(c = ana_map_put(
              &w->cells,
              wpa_key(key, bucket_of(w, start_ns), open ? ANA_HTML_NEVER : bucket_of(w, end_ns)),
              NULL)))
        return -ENOMEM;
    c->nr += nr;
    c->bytes += bytes;
    return 0;
}

int ana_html_wpa_align(struct ana_html_wpa *a, struct ana_html_wpa *b)
{
    int rc;

    while (a->bucket_ns < b->bucket_ns)
        if ((rc = coarsen(a)))
            return rc;
    while (b->bucket_ns < a->bucket_ns)
        if ((rc = coarsen(b)))
            return rc;
    return 0;
}

static int on_step(void *arg, const struct fmt_event *ev, const struct ana_step *st)
{
    return ana_html_wpa_step(arg, ev, st);
}

int ana_html_wpa_subscribe(struct ana_html_wpa *w, struct ana_heap_replay *p)
{
    static const struct ana_heap_replay_ops ops = {.step = on_step};

    return ana_heap_replay_subscribe(p, &ops, w, 0);
}

static bool kept(const uint8_t *keep, uint32_t nr_keep, uint32_t stack)
{
    return stack < nr_keep && keep[stack];
}

struct keep {
    const uint8_t *keep;
    uint32_t nr_keep;
};

static uint64_t lumped(const void *arg, uint32_t stack, uint32_t a, uint32_t f)
{
    const struct keep *k = arg;

    return wpa_key(kept(k->keep, k->nr_keep, stack) ? stack : ANA_HTML_OTHER_STACK, a, f);
}

int ana_html_wpa_lump(struct ana_html_wpa *w, const uint8_t *keep, uint32_t nr_keep)
{
    const struct keep k = {keep, nr_keep};
    size_t i;

    for (i = 0; i < w->cells.cap; i++) {
        uint32_t stack, a, f;

        if (!ana_map_slot_key(&w->cells, i))
            continue;
        ana_html_wpa_key(ana_map_slot_key(&w->cells, i), &stack, &a, &f);
        if (!kept(keep, nr_keep, stack))
            break;
    }
    if (i == w->cells.cap)
        return 0; /* every site is listed: the cells stay as they are */
    return remap_cells(w, lumped, &k);
}
