/* SPDX-License-Identifier: MIT */
/* Commit lifetimes in a window, their groups and totals over time (see
 * ana_vm_window.h). */
#include "analysis/vm/ana_vm_window.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/ana_stacks.h"
#include "util/util_array.h"

/* The classes of image's lifetimes, grown to hold it. */
static struct ana_wpa *image_classes(struct ana_vm_window *w, uint32_t image)
{
    if (image >= w->nr_images) {
        uint32_t n = w->nr_images ? w->nr_images : 4;
        struct ana_wpa *v;

        while (n <= image)
            n *= 2;
        if (!(v = realloc(w->images, n * sizeof(*v))))
            return NULL;
        memset(v + w->nr_images, 0, (n - w->nr_images) * sizeof(*v));
        w->images = v;
        w->nr_images = n;
    }
    return &w->images[image];
}

static int keep_lifetime(void *arg, const struct ana_vm_lifetime *l)
{
    struct ana_vm_window *w = arg;
    int cls = ana_wpa_class_of(l->commit_ns, l->decommit_ns, l->open, w->replay.t0, w->replay.t1);
    uint64_t size = l->hi - l->lo;
    struct ana_wpa *c;
    struct ana_vm_life *x;

    if (!(w->origins & (1u << l->origin)) || cls == ANA_WPA_OUTSIDE)
        return 0;
    if (UTIL_ARRAY_RESERVE(w->v, w->cap, (size_t)w->nr + 1, 256) ||
        !(c = image_classes(w, l->image)))
        return -ENOMEM;
    c->nr[cls]++;
    c->bytes[cls] += size;
    x = &w->v[w->nr++];
    x->l = *l;
    x->cls = (uint8_t)cls;
    x->key = 0;
    x->impacting = cls == ANA_AIFO ? (int64_t)size : cls == ANA_AOFI ? -(int64_t)size : 0;
    return 0;
}

/* The totals of an image that has mapped anything, at a moment. */
static int take_totals(void *arg, uint64_t ts, uint32_t image, const struct ana_vm_image *im)
{
    struct ana_vm_window *w = arg;

    if (!im->max_addr)
        return 0;
    if (UTIL_ARRAY_RESERVE(w->samples, w->cap_samples, (size_t)w->nr_samples + 1, 64))
        return -ENOMEM;
    w->samples[w->nr_samples++] =
        (struct ana_vm_sample){ts, image, im->mapped, im->reserved, im->committed, im->charge};
    return 0;
}

/* The committed peak inside the window. */
static int note_peak(void *arg, const struct fmt_event *ev)
{
    struct ana_vm_window *w = arg;
    const struct ana_vm_image *im;

    if (ev->ts_ns < w->replay.t0 || ev->ts_ns > w->replay.t1)
        return 0;
    im = ana_vm_get(&w->replay.vm, ev->image);
    if (im && im->committed > w->peak_committed) {
        w->peak_committed = im->committed;
        w->peak_ns = ev->ts_ns;
        w->peak_image = ev->image;
    }
    return 0;
}

static const struct ana_vm_replay_ops window_ops = {
    .moment = take_totals,
    .after = note_peak,
    .lifetime = keep_lifetime,
};

void ana_vm_window_init(struct ana_vm_window *w)
{
    w->replay.until = UINT64_MAX;
    ana_vm_replay_init(&w->replay, &window_ops, w);
}

int ana_vm_window_key(struct ana_vm_window *w, enum ana_vm_by by, struct ana_stacks *stacks)
{
    int rc;

    for (size_t i = 0; i < w->nr; i++) {
        struct ana_vm_life *x = &w->v[i];
        uint32_t fn = 0;

        if (by == ANA_VM_BY_STACK)
            x->key = x->l.commit_stack;
        else if (by == ANA_VM_BY_ORIGIN)
            x->key = x->l.origin;
        else if ((rc = ana_stacks_leaf(stacks, x->l.commit_stack, &fn)))
            return rc;
        else
            x->key = fn;
    }
    return 0;
}

static int by_group(const void *x, const void *y)
{
    const struct ana_vm_group *a = x, *b = y;
    uint64_t ia = a->impacting < 0 ? (uint64_t)0 - (uint64_t)a->impacting : (uint64_t)a->impacting;
    uint64_t ib = b->impacting < 0 ? (uint64_t)0 - (uint64_t)b->impacting : (uint64_t)b->impacting;

    if (ia != ib)
        return ia < ib ? 1 : -1;
    if (a->size != b->size)
        return a->size < b->size ? 1 : -1;
    if (a->image != b->image)
        return a->image < b->image ? -1 : 1;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return (int)b->transient - (int)a->transient;
}

/* Transient (AIFI) first, then Impacting (AIFO, AOFI), then AOFO. */
static int type_rank(uint8_t cls)
{
    return cls == ANA_AIFI ? 0 : cls == ANA_AOFO ? 2 : 1;
}

static int by_group_then_time(const void *x, const void *y)
{
    const struct ana_vm_life *a = x, *b = y;

    if (a->l.image != b->l.image)
        return a->l.image < b->l.image ? -1 : 1;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    if (type_rank(a->cls) != type_rank(b->cls))
        return type_rank(a->cls) - type_rank(b->cls);
    if (a->l.commit_ns != b->l.commit_ns)
        return a->l.commit_ns < b->l.commit_ns ? -1 : 1;
    return a->l.lo < b->l.lo ? -1 : a->l.lo > b->l.lo;
}

long ana_vm_window_groups(struct ana_vm_window *w, struct ana_vm_group **out)
{
    struct ana_vm_group *g;
    size_t n = 0;

    if (w->nr) /* qsort(NULL, 0) is undefined */
        qsort(w->v, w->nr, sizeof(*w->v), by_group_then_time);
    g = malloc((w->nr + 1) * sizeof(*g));
    if (!g)
        return -ENOMEM;
    for (size_t i = 0; i < w->nr; i++) {
        const struct ana_vm_life *x = &w->v[i];
        bool transient = x->cls == ANA_AIFI;

        if (x->cls == ANA_AOFO)
            continue; /* nothing changed inside the window: no group, as no row in window */
        if (!n || g[n - 1].image != x->l.image || g[n - 1].key != x->key ||
            g[n - 1].transient != transient)
            g[n++] = (struct ana_vm_group){x->l.image, x->key, transient, 0, 0, 0, i};
        g[n - 1].count++;
        if (x->cls != ANA_AOFI) /* Size: committed inside */
            g[n - 1].size += x->l.hi - x->l.lo;
        g[n - 1].impacting += x->impacting;
    }
    qsort(g, n, sizeof(*g), by_group);
    *out = g;
    return (long)n;
}

void ana_vm_window_release(struct ana_vm_window *w)
{
    ana_vm_replay_release(&w->replay);
    free(w->v);
    free(w->samples);
    free(w->images);
    w->v = NULL;
    w->samples = NULL;
    w->images = NULL;
    w->nr_images = 0;
}
