/* SPDX-License-Identifier: MIT */
/* Fragmentation over a trace, sampled (see ana_frag_scan.h). */
#include "analysis/vm/ana_frag_scan.h"
#include "util/util_array.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The fragmentation of an image that has mappings, at ts. */
static int add_sample(void *arg, uint64_t ts, uint32_t image, const struct ana_vm_image *im)
{
    struct ana_frag_scan *f = arg;

    if (!im->nr)
        return 0;
    if (UTIL_ARRAY_RESERVE(f->v, f->cap, (size_t)f->nr + 1, 64))
        return -ENOMEM;
    f->v[f->nr].ts = ts;
    f->v[f->nr].image = image;
    ana_frag_stats(im, &f->v[f->nr].st);
    f->nr++;
    return 0;
}

/* The state when tracing began: before the image's first mapping call
 * after the snapshot of /proc/self/maps. */
static int sample_start(void *arg, const struct fmt_event *ev)
{
    struct ana_frag_scan *f = arg;
    const struct ana_vm_image *im;

    if (!((ev->kind >= FMT_EV_MMAP && ev->kind <= FMT_EV_SBRK) || fmt_kind_is_win_vm(ev->kind)) ||
        ev->origin == FMT_ORIGIN_SNAPSHOT)
        return 0;
    if (ev->image >= f->nr_started) {
        uint32_t n = ev->image + 1;
        uint8_t *p = realloc(f->started, n);

        if (!p)
            return -ENOMEM;
        memset(p + f->nr_started, 0, n - f->nr_started);
        f->started = p;
        f->nr_started = n;
    }
    if (f->started[ev->image])
        return 0;
    f->started[ev->image] = 1;
    im = ana_vm_get(&f->replay.vm, ev->image);
    if (!im || !ana_vm_replay_selects(&f->replay, ev->image))
        return 0;
    return add_sample(f, ev->ts_ns, ev->image, im);
}

static const struct ana_vm_replay_ops frag_ops = {
    .moment = add_sample,
    .before = sample_start,
};

void ana_frag_scan_init(struct ana_frag_scan *f)
{
    f->replay.t0 = 0;
    f->replay.t1 = f->replay.until;
    ana_vm_replay_init(&f->replay, &frag_ops, f);
}

void ana_frag_scan_release(struct ana_frag_scan *f)
{
    ana_vm_replay_release(&f->replay);
    free(f->v);
    free(f->started);
}
