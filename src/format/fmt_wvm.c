/* SPDX-License-Identifier: MIT */
/* Per-image sorted arrays of mapping pieces. Programs hold hundreds to a
 * few thousand mappings, so binary search plus memmove is plenty. */
#include "format/fmt_wvm_internal.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "util/util_array.h"
#include "util/util_search.h"

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
    if (UTIL_ARRAY_RESERVE_ZERO(vm->images, vm->nr_images, (size_t)image + 1, 1))
        return NULL;
    return &vm->images[image];
}

static int wvm_make_room(struct fmt_wvm_image *im)
{
    return UTIL_ARRAY_RESERVE(im->v, im->cap, (size_t)im->nr + 1, 16);
}

/* Index of the first piece whose end is above addr. */
static uint32_t wvm_first_above(const struct fmt_wvm_image *im, uint64_t addr)
{
    return (uint32_t)util_search_above(im->v, im->nr, sizeof(*im->v),
                                       offsetof(struct fmt_wpiece, end), addr);
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
        if (hit->nr++ == 0) {
            hit->first = p->blk;
            hit->first_how = p->how;
        }
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

int fmt_wvm_insert(struct fmt_wvm *vm, uint32_t image, const struct fmt_wblock *blk, uint64_t how)
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
    im->v[i].how = how;
    im->nr++;
    return 0;
}
