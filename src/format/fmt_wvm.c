/* SPDX-License-Identifier: MIT */
/* Per-image sorted arrays of mapping pieces. Programs hold hundreds to a
 * few thousand mappings, so binary search plus memmove is plenty. */
#include "format/fmt_wvm_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void fmt_wvm_destroy(struct fmt_wvm *vm)
{
    for (uint32_t i = 0; i < vm->nr_images; i++)
        free(vm->images[i].v);
    free(vm->images);
    vm->images = NULL;
    vm->nr_images = 0;
}

static struct fmt_wvm_image *wvm_image(struct fmt_wvm *vm, uint32_t image)
{
    if (image >= vm->nr_images) {
        uint32_t n = image + 1 > vm->nr_images * 2 ? image + 1 : vm->nr_images * 2;
        struct fmt_wvm_image *p = realloc(vm->images, (size_t)n * sizeof(*p));
        if (!p)
            return NULL;
        memset(p + vm->nr_images, 0, (size_t)(n - vm->nr_images) * sizeof(*p));
        vm->images = p;
        vm->nr_images = n;
    }
    return &vm->images[image];
}

static int wvm_make_room(struct fmt_wvm_image *im)
{
    if (im->nr < im->cap)
        return 0;
    uint32_t cap = im->cap ? im->cap * 2 : 16;
    struct fmt_wpiece *v = realloc(im->v, (size_t)cap * sizeof(*v));
    if (!v)
        return -ENOMEM;
    im->v = v;
    im->cap = cap;
    return 0;
}

/* Index of the first piece whose end is above addr. */
static uint32_t wvm_first_above(const struct fmt_wvm_image *im, uint64_t addr)
{
    uint32_t lo = 0, hi = im->nr;

    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (im->v[mid].end <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int fmt_wvm_remove(struct fmt_wvm *vm, uint32_t image, uint64_t start, uint64_t len,
                   struct fmt_wvm_hit *hit)
{
    memset(hit, 0, sizeof(*hit));
    if (!len || image >= vm->nr_images)
        return 0;
    struct fmt_wvm_image *im = &vm->images[image];
    uint64_t end = start + len < start ? UINT64_MAX : start + len;
    uint32_t i = wvm_first_above(im, start);

    while (i < im->nr && im->v[i].start < end) {
        struct fmt_wpiece *p = &im->v[i];
        if (hit->nr++ == 0)
            hit->first = p->blk;
        if (p->start >= start && p->end <= end) {
            memmove(p, p + 1, (size_t)(im->nr - i - 1) * sizeof(*p));
            im->nr--;
            continue;
        }
        hit->partial = 1;
        if (p->start < start && p->end > end) {
            /* A hole punched in the middle: split into two pieces. */
            if (wvm_make_room(im))
                return -ENOMEM;
            p = &im->v[i];
            memmove(p + 2, p + 1, (size_t)(im->nr - i - 1) * sizeof(*p));
            p[1] = p[0];
            p[1].start = end;
            p[0].end = start;
            im->nr++;
            return 0;
        }
        if (p->start < start)
            p->end = start;
        else
            p->start = end;
        i++;
    }
    return 0;
}

int fmt_wvm_insert(struct fmt_wvm *vm, uint32_t image, const struct fmt_wblock *blk)
{
    struct fmt_wvm_hit hit;
    struct fmt_wvm_image *im = wvm_image(vm, image);

    /* Whatever the new mapping covers is gone (mremap onto a mapped range:
     * the kernel unmaps it first), so pieces never overlap. */
    if (!im || fmt_wvm_remove(vm, image, blk->addr, blk->size, &hit) || wvm_make_room(im))
        return -ENOMEM;
    uint64_t end = blk->addr + blk->size < blk->addr ? UINT64_MAX : blk->addr + blk->size;
    uint32_t i = wvm_first_above(im, blk->addr);
    memmove(&im->v[i + 1], &im->v[i], (size_t)(im->nr - i) * sizeof(im->v[0]));
    im->v[i].start = blk->addr;
    im->v[i].end = end;
    im->v[i].blk = *blk;
    im->nr++;
    return 0;
}
