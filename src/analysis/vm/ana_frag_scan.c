/* SPDX-License-Identifier: MIT */
/* Fragmentation over a trace, sampled (see ana_frag_scan.h). */
#include "analysis/vm/ana_frag_scan.h"
#include "util/util_array.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void ana_frag_scan_init(struct ana_frag_scan *f)
{
    ana_ticks_init(&f->ticks, 0, f->at, f->nr_intervals);
    ana_vm_init(&f->vm, NULL, NULL);
}

static int add_sample(struct ana_frag_scan *f, uint64_t ts, uint32_t image)
{
    const struct ana_vm_image *im = ana_vm_get(&f->vm, image);

    if (!im || !im->nr || !ana_filter_image(f->filter, image, fmt_reader_image(f->r, image)->pid))
        return 0;
    if (UTIL_ARRAY_RESERVE(f->v, f->cap, (size_t)f->nr + 1, 64))
        return -ENOMEM;
    f->v[f->nr].ts = ts;
    f->v[f->nr].image = image;
    ana_frag_stats(im, &f->v[f->nr].st);
    f->nr++;
    return 0;
}

/* The samples of every moment before upto (ana_ticks). */
static int take_samples(struct ana_frag_scan *f, uint64_t upto)
{
    uint64_t b;
    int rc;

    for (; ana_ticks_due(&f->ticks, upto, &b); ana_ticks_taken(&f->ticks))
        for (uint32_t i = 0; i < f->vm.nr_images; i++)
            if ((rc = add_sample(f, b, i)))
                return rc;
    return 0;
}

int ana_frag_scan_event(void *arg, const struct fmt_event *ev)
{
    struct ana_frag_scan *f = arg;
    int rc;

    if (ev->ts_ns > f->at)
        return 1;
    if (!ana_filter_image(f->filter, ev->image, ev->pid))
        return 0;
    if ((rc = take_samples(f, ev->ts_ns)))
        return rc;
    /* The state when tracing began: before the first call after the
     * snapshot of /proc/self/maps. */
    if (((ev->kind >= FMT_EV_MMAP && ev->kind <= FMT_EV_SBRK) || fmt_kind_is_win_vm(ev->kind)) &&
        ev->origin != FMT_ORIGIN_SNAPSHOT) {
        if (ev->image >= f->nr_started) {
            uint32_t n = ev->image + 1;
            uint8_t *p = realloc(f->started, n);

            if (!p)
                return -ENOMEM;
            memset(p + f->nr_started, 0, n - f->nr_started);
            f->started = p;
            f->nr_started = n;
        }
        if (!f->started[ev->image]) {
            f->started[ev->image] = 1;
            if ((rc = add_sample(f, ev->ts_ns, ev->image)))
                return rc;
        }
    }
    return ana_vm_event(&f->vm, ev);
}

int ana_frag_scan_finish(struct ana_frag_scan *f)
{
    return take_samples(f, UINT64_MAX);
}

void ana_frag_scan_release(struct ana_frag_scan *f)
{
    ana_vm_release(&f->vm);
    free(f->v);
    free(f->started);
}
