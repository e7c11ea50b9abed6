/* SPDX-License-Identifier: MIT */
/* Replay of mapping events into per-image sorted arrays of pieces, with
 * reserved/committed/charge totals kept as pieces change and a callback
 * for every commit lifetime that ends. Programs hold hundreds to a few
 * thousand mappings: binary search plus memmove is plenty. */
#include "analysis/vm/ana_vm.h"
#include "analysis/vm/ana_vm_win.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "util/util_array.h"
#include "util/util_search.h"

#define PAGE_UP(x) (((x) + ANA_VM_PAGE - 1) & ~(uint64_t)(ANA_VM_PAGE - 1))

void ana_vm_init(struct ana_vm *vm, ana_vm_lifetime_fn *fn, void *arg)
{
    memset(vm, 0, sizeof(*vm));
    vm->on_lifetime = fn;
    vm->arg = arg;
}

void ana_vm_release(struct ana_vm *vm)
{
    for (uint32_t i = 0; i < vm->nr_images; i++)
        free(vm->images[i].v);
    free(vm->images);
    vm->images = NULL;
    vm->nr_images = 0;
}

int ana_vm_is_charge(uint32_t prot, uint32_t flags)
{
    return (prot & PROT_WRITE) && !(flags & MAP_SHARED);
}

static struct ana_vm_image *vm_image(struct ana_vm *vm, uint32_t image)
{
    if (UTIL_ARRAY_RESERVE_ZERO(vm->images, vm->nr_images, (size_t)image + 1, 1))
        return NULL;
    return &vm->images[image];
}

/* Totals: add (sign 1) or remove (sign -1) a piece. */
static void vm_count(struct ana_vm_image *im, const struct ana_vm_piece *p, int sign)
{
    uint64_t n = p->hi - p->lo;

    if (sign < 0)
        n = (uint64_t)0 - n;
    if (p->collector) {
        im->collector += n;
        return;
    }
    im->mapped += n;
    if (p->prot == PROT_NONE)
        im->reserved += n;
    else
        im->committed += n;
    if (ana_vm_is_charge(p->prot, p->flags))
        im->charge += n;
}

static int vm_end_commit(struct ana_vm *vm, uint32_t image, const struct ana_vm_piece *p,
                         uint64_t lo, uint64_t hi, uint64_t ts, uint32_t stack, int open)
{
    struct ana_vm_lifetime l = {
        .image = image,
        .lo = lo,
        .hi = hi,
        .commit_ns = p->commit_ns,
        .decommit_ns = ts,
        .open = open,
        .commit_stack = p->commit_stack,
        .decommit_stack = stack,
        .origin = p->origin,
        .charge = (uint8_t)ana_vm_is_charge(p->prot, p->flags),
    };

    if (p->prot == PROT_NONE || p->collector || !vm->on_lifetime || hi <= lo)
        return 0;
    return vm->on_lifetime(vm->arg, &l);
}

/* Index of the first piece whose end is above addr. */
static uint32_t vm_first_above(const struct ana_vm_image *im, uint64_t addr)
{
    return (uint32_t)util_search_above(im->v, im->nr, sizeof(*im->v),
                                       offsetof(struct ana_vm_piece, hi), addr);
}

static int vm_reserve(struct ana_vm_image *im, uint32_t extra)
{
    return UTIL_ARRAY_RESERVE(im->v, im->cap, (size_t)im->nr + extra, 64);
}

/* Cut the piece containing addr (strictly inside) in two. */
static int vm_split_at(struct ana_vm_image *im, uint64_t addr)
{
    uint32_t i = vm_first_above(im, addr);

    if (i >= im->nr || im->v[i].lo >= addr)
        return 0;
    if (vm_reserve(im, 1))
        return -ENOMEM;
    memmove(&im->v[i + 1], &im->v[i], (size_t)(im->nr - i) * sizeof(im->v[0]));
    im->nr++;
    im->v[i].hi = addr;
    im->v[i + 1].lo = addr;
    return 0;
}

/* Remove [lo, hi): committed parts end their lifetimes at ts. */
static int vm_carve(struct ana_vm *vm, uint32_t image, struct ana_vm_image *im, uint64_t lo,
                    uint64_t hi, uint64_t ts, uint32_t stack)
{
    uint32_t i, j;
    int rc;

    if (hi <= lo || !im->nr)
        return 0;
    if ((rc = vm_split_at(im, lo)) || (rc = vm_split_at(im, hi)))
        return rc;
    i = vm_first_above(im, lo);
    for (j = i; j < im->nr && im->v[j].hi <= hi; j++) {
        vm_count(im, &im->v[j], -1);
        if ((rc = vm_end_commit(vm, image, &im->v[j], im->v[j].lo, im->v[j].hi, ts, stack, 0)))
            return rc;
    }
    memmove(&im->v[i], &im->v[j], (size_t)(im->nr - j) * sizeof(im->v[0]));
    im->nr -= j - i;
    return 0;
}

/* Map [p->lo, p->hi), replacing whatever was there. */
static int vm_map(struct ana_vm *vm, uint32_t image, struct ana_vm_image *im,
                  const struct ana_vm_piece *p, uint32_t stack)
{
    uint32_t i;
    int rc;

    if (p->hi <= p->lo)
        return 0;
    if ((rc = vm_carve(vm, image, im, p->lo, p->hi, p->map_ns, stack)) || (rc = vm_reserve(im, 1)))
        return rc;
    i = vm_first_above(im, p->lo);
    memmove(&im->v[i + 1], &im->v[i], (size_t)(im->nr - i) * sizeof(im->v[0]));
    im->v[i] = *p;
    im->nr++;
    vm_count(im, p, 1);
    if (p->hi > im->max_addr)
        im->max_addr = p->hi;
    return 0;
}

static int vm_protect(struct ana_vm *vm, uint32_t image, struct ana_vm_image *im, uint64_t lo,
                      uint64_t hi, uint32_t prot, uint64_t ts, uint32_t stack)
{
    int rc;

    if (hi <= lo)
        return 0;
    if ((rc = vm_split_at(im, lo)) || (rc = vm_split_at(im, hi)))
        return rc;
    for (uint32_t i = vm_first_above(im, lo); i < im->nr && im->v[i].hi <= hi; i++) {
        struct ana_vm_piece *p = &im->v[i];

        if (p->prot != PROT_NONE && prot == PROT_NONE) {
            if ((rc = vm_end_commit(vm, image, p, p->lo, p->hi, ts, stack, 0)))
                return rc;
        } else if (p->prot == PROT_NONE && prot != PROT_NONE) {
            p->commit_ns = ts;
            p->commit_stack = stack;
        }
        vm_count(im, p, -1);
        p->prot = prot;
        vm_count(im, p, 1);
    }
    return 0;
}

static struct ana_vm_piece vm_piece(const struct fmt_event *ev, uint64_t lo, uint64_t hi,
                                    uint32_t prot, uint32_t flags)
{
    struct ana_vm_piece p = {
        .lo = lo,
        .hi = hi,
        .prot = prot,
        .flags = flags,
        .map_lo = lo,
        .map_ns = ev->ts_ns,
        .map_stack = ev->stack,
        .origin = ev->origin,
        .collector = (ev->flags & FMT_EVF_COLLECTOR) != 0,
        .commit_ns = ev->ts_ns,
        .commit_stack = ev->stack,
    };
    return p;
}

/* The break moved from old to new: the heap grew or shrank by whole pages. */
static int vm_brk(struct ana_vm *vm, uint32_t image, struct ana_vm_image *im,
                  const struct fmt_event *ev, uint64_t old, uint64_t new_brk)
{
    if (new_brk > old) {
        struct ana_vm_piece p = vm_piece(ev, PAGE_UP(old), PAGE_UP(new_brk), PROT_READ | PROT_WRITE,
                                         MAP_PRIVATE | MAP_ANONYMOUS);
        return vm_map(vm, image, im, &p, ev->stack);
    }
    return vm_carve(vm, image, im, PAGE_UP(new_brk), PAGE_UP(old), ev->ts_ns, ev->stack);
}

static int vm_mremap(struct ana_vm *vm, uint32_t image, struct ana_vm_image *im,
                     const struct fmt_event *ev)
{
    uint64_t old = ev->old_addr, old_end = old + PAGE_UP(ev->old_size);
    uint64_t new_end = ev->addr + PAGE_UP(ev->size);
    uint32_t i = vm_first_above(im, old);
    uint32_t prot = PROT_READ | PROT_WRITE, flags = MAP_PRIVATE | MAP_ANONYMOUS;
    struct ana_vm_piece p;
    int rc;

    if (i < im->nr && im->v[i].lo <= old)
        prot = im->v[i].prot, flags = im->v[i].flags;
    if (ev->addr == old) {
        if (new_end < old_end)
            return vm_carve(vm, image, im, new_end, old_end, ev->ts_ns, ev->stack);
        p = vm_piece(ev, old_end, new_end, prot, flags);
        return vm_map(vm, image, im, &p, ev->stack);
    }
    /* MREMAP_DONTUNMAP (4) moves the pages but leaves the old range
     * mapped (and committed, now empty): only the new range starts. */
    if (!(ev->arg[1] & 4) && (rc = vm_carve(vm, image, im, old, old_end, ev->ts_ns, ev->stack)))
        return rc;
    p = vm_piece(ev, ev->addr, new_end, prot, flags);
    return vm_map(vm, image, im, &p, ev->stack);
}

int ana_vm_event(struct ana_vm *vm, const struct fmt_event *ev)
{
    struct ana_vm_image *im;
    struct ana_vm_piece p;
    struct fmt_event win;
    uint64_t old;
    int windows = fmt_kind_is_win_vm(ev->kind);

    if (windows) { /* Windows (format 1.2): as its Linux twin */
        if (!ana_vm_win_event(ev, &win))
            return 0;
        ev = &win;
    }
    switch (ev->kind) {
    case FMT_EV_MMAP:
    case FMT_EV_MUNMAP:
    case FMT_EV_MREMAP:
    case FMT_EV_MPROTECT:
    case FMT_EV_BRK:
    case FMT_EV_SBRK:
    case FMT_EV_PROCESS_EXIT:
        break;
    default:
        return 0;
    }
    if (!(im = vm_image(vm, ev->image)))
        return -ENOMEM;
    im->windows |= windows;
    if (ev->kind == FMT_EV_PROCESS_EXIT) {
        /* Its mappings stay as they were at the end, for reports "at end". */
        im->ended = 1;
        return 0;
    }
    if ((ev->flags & FMT_EVF_FAILED) && ev->kind != FMT_EV_BRK)
        return 0;
    switch (ev->kind) {
    case FMT_EV_MMAP:
        p = vm_piece(ev, ev->addr, ev->addr + PAGE_UP(ev->size), (uint32_t)ev->arg[0],
                     (uint32_t)ev->arg[1]);
        return vm_map(vm, ev->image, im, &p, ev->stack);
    case FMT_EV_MUNMAP:
        return vm_carve(vm, ev->image, im, ev->addr, ev->addr + PAGE_UP(ev->size), ev->ts_ns,
                        ev->stack);
    case FMT_EV_MREMAP:
        return vm_mremap(vm, ev->image, im, ev);
    case FMT_EV_MPROTECT:
        return vm_protect(vm, ev->image, im, ev->addr, ev->addr + PAGE_UP(ev->size),
                          (uint32_t)ev->arg[0], ev->ts_ns, ev->stack);
    case FMT_EV_BRK:
        /* addr is the break after the call, also when it failed or only
         * asked (brk(0)): the first one tells where the heap ends. */
        old = im->brk;
        im->brk = ev->addr;
        if (!im->brk_known || (ev->flags & FMT_EVF_FAILED)) {
            im->brk_known = 1;
            return 0;
        }
        return vm_brk(vm, ev->image, im, ev, old, ev->addr);
    default: /* SBRK: addr is the old break */
        im->brk = ev->addr + ev->arg[0];
        im->brk_known = 1;
        return vm_brk(vm, ev->image, im, ev, ev->addr, im->brk);
    }
}

int ana_vm_finish(struct ana_vm *vm)
{
    for (uint32_t k = 0; k < vm->nr_images; k++) {
        struct ana_vm_image *im = &vm->images[k];

        for (uint32_t i = 0; i < im->nr; i++) {
            int rc = vm_end_commit(vm, k, &im->v[i], im->v[i].lo, im->v[i].hi, 0, 0, 1);

            if (rc)
                return rc;
        }
    }
    return 0;
}
