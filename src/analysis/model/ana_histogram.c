/* SPDX-License-Identifier: MIT */
/* Power-of-two size histograms (see ana_histogram.h). */
#include "analysis/model/ana_histogram.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/model/ana_heap_replay.h"

void ana_size_class_bounds(unsigned cls, uint64_t *lo, uint64_t *hi)
{
    if (cls == 0) {
        *lo = *hi = 0;
        return;
    }
    *lo = 1ull << (cls - 1);
    *hi = cls == 64 ? UINT64_MAX : (1ull << cls) - 1;
}

void ana_histogram_init(struct ana_histogram *h, bool by_stack)
{
    memset(h, 0, sizeof(*h));
    h->by_stack = by_stack;
    ana_map_init(&h->stack_bins, sizeof(struct ana_hist_bin));
    ana_map_init(&h->stack_image, sizeof(uint32_t));
}

void ana_histogram_release(struct ana_histogram *h)
{
    free(h->images);
    ana_map_release(&h->stack_bins);
    ana_map_release(&h->stack_image);
    memset(h, 0, sizeof(*h));
}

static int on_step(void *arg, const struct fmt_event *ev, const struct ana_step *st)
{
    return ana_histogram_step(arg, ev, st);
}

int ana_histogram_subscribe(struct ana_histogram *h, struct ana_heap_replay *p)
{
    static const struct ana_heap_replay_ops ops = {.step = on_step};

    return ana_heap_replay_subscribe(p, &ops, h, 0);
}

/* Count n blocks of bytes in all, of class cls, at stack of image. */
static int add(struct ana_histogram *h, uint32_t image, uint32_t stack, unsigned cls, uint64_t n,
               uint64_t bytes)
{
    if (image >= h->nr_images) {
        uint32_t k = h->nr_images ? h->nr_images : 4;
        while (k <= image)
            k *= 2;
        struct ana_hist_bin *b = realloc(h->images, (size_t)k * ANA_NR_SIZE_CLASSES * sizeof(*b));
        if (!b)
            return -ENOMEM;
        memset(b + (size_t)h->nr_images * ANA_NR_SIZE_CLASSES, 0,
               (size_t)(k - h->nr_images) * ANA_NR_SIZE_CLASSES * sizeof(*b));
        h->images = b;
        h->nr_images = k;
    }
    struct ana_hist_bin *b = &h->images[(size_t)image * ANA_NR_SIZE_CLASSES + cls];
    b->nr += n;
    b->bytes += bytes;
    if (!h->by_stack)
        return 0;
    b = ana_map_put(&h->stack_bins, ((uint64_t)stack << 7 | cls) + 1, NULL);
    uint32_t *im = ana_map_put(&h->stack_image, (uint64_t)stack + 1, NULL);
    if (!b || !im)
        return -ENOMEM;
    b->nr += n;
    b->bytes += bytes;
    *im = image;
    return 0;
}

int ana_histogram_step(struct ana_histogram *h, const struct fmt_event *ev,
                       const struct ana_step *st)
{
    if (!st->starts) {
        /* An aggregated trace's batch row: its blocks by the class it
         * gives (ana_step.h). A class past the table is a corrupt row. */
        if (!st->batch || !ev->arg[0])
            return 0;
        return ev->arg[3] < ANA_NR_SIZE_CLASSES
                   ? add(h, ev->image, ev->stack, (unsigned)ev->arg[3], ev->arg[0], ev->size)
                   : -EPROTO;
    }
    /* Of a sampled trace: the class of the size recorded, the count and
     * bytes an estimate. */
    return add(h, ev->image, ev->stack, ana_size_class(ev->raw_size), fmt_event_count(ev),
               ev->size);
}

const struct ana_hist_bin *ana_histogram_image(const struct ana_histogram *h, uint32_t image)
{
    return image < h->nr_images ? &h->images[(size_t)image * ANA_NR_SIZE_CLASSES] : NULL;
}

const struct ana_hist_bin *ana_histogram_stack(const struct ana_histogram *h, uint32_t stack,
                                               unsigned cls)
{
    return ana_map_get(&h->stack_bins, ((uint64_t)stack << 7 | cls) + 1);
}

static int by_count(const void *x, const void *y)
{
    const struct ana_hist_site *a = x, *b = y;

    if (a->nr != b->nr)
        return a->nr < b->nr ? 1 : -1;
    return (a->stack > b->stack) - (a->stack < b->stack);
}

long ana_histogram_sites(const struct ana_histogram *h, struct ana_hist_site **out)
{
    struct ana_hist_site *v = malloc((h->stack_image.nr + 1) * sizeof(*v));
    size_t n = 0;

    if (!v)
        return -ENOMEM;
    for (size_t i = 0; i < h->stack_image.cap; i++) {
        uint64_t key = ana_map_slot_key(&h->stack_image, i);
        if (!key)
            continue;
        v[n] = (struct ana_hist_site){.stack = (uint32_t)(key - 1),
                                      .image =
                                          *(const uint32_t *)ana_map_slot_val(&h->stack_image, i)};
        for (unsigned cls = 0; cls < ANA_NR_SIZE_CLASSES; cls++) {
            const struct ana_hist_bin *b = ana_histogram_stack(h, v[n].stack, cls);
            v[n].nr += b ? b->nr : 0;
        }
        n++;
    }
    qsort(v, n, sizeof(*v), by_count);
    *out = v;
    return (long)n;
}
