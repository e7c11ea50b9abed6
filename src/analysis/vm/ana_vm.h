/* SPDX-License-Identifier: MIT */
/* The address space of each process image, replayed from the mapping
 * events (mmap, munmap, mremap, mprotect, brk, sbrk): which ranges are
 * mapped, reserved (no access) or committed (accessible; private writable
 * ones count as commit charge), and every commit lifetime, from the moment
 * a range becomes committed to the moment it is unmapped or made
 * inaccessible (docs/architecture.md, Meanings). docs/vmem.md. */
#ifndef ANA_VM_H
#define ANA_VM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "memscribe/event.h"

#define ANA_VM_PAGE 4096u

/* A piece of a mapping: mappings are cut where calls cut them. */
struct ana_vm_piece {
    uint64_t lo, hi;
    uint32_t prot, flags; /* PROT_*, MAP_* of the call that made it */
    uint64_t map_lo;      /* address the call that made it mapped */
    uint64_t map_ns;      /* when that call ran */
    uint32_t map_stack;   /* and its stack */
    uint8_t origin;       /* enum fmt_origin of that call */
    uint8_t collector;    /* memscribe's own (FMT_EVF_COLLECTOR): space, not memory */
    uint64_t commit_ns;   /* committed since (valid if prot != PROT_NONE) */
    uint32_t commit_stack;
};

/* One commit lifetime (or a part of one a later call cut off). */
struct ana_vm_lifetime {
    uint32_t image;
    uint64_t lo, hi;
    uint64_t commit_ns, decommit_ns; /* decommit_ns valid unless open */
    int open;                        /* still committed at the end of the trace */
    uint32_t commit_stack, decommit_stack;
    uint8_t origin; /* of the call that committed it */
    uint8_t charge; /* private and writable when it ended */
};

typedef int ana_vm_lifetime_fn(void *arg, const struct ana_vm_lifetime *l);

struct ana_vm_image {
    struct ana_vm_piece *v; /* sorted by address, disjoint */
    uint32_t nr, cap;
    uint64_t brk; /* current break, valid if brk_known */
    int brk_known;
    int ended;
    uint64_t mapped, reserved, committed, charge; /* the program's bytes now */
    uint64_t collector;                           /* memscribe's own bytes now */
    uint64_t max_addr;                            /* highest end ever mapped */
    int windows; /* mapped by Windows calls (VirtualAlloc, sections): its space differs */
};

struct ana_vm {
    struct ana_vm_image *images;
    uint32_t nr_images;
    ana_vm_lifetime_fn *on_lifetime; /* may be NULL */
    void *arg;
};

void ana_vm_init(struct ana_vm *vm, ana_vm_lifetime_fn *fn, void *arg);
void ana_vm_release(struct ana_vm *vm);

/* Apply one event (kinds other than the mapping ones and PROCESS_EXIT are
 * ignored). Returns 0, -ENOMEM, or the callback's non-zero result. */
int ana_vm_event(struct ana_vm *vm, const struct fmt_event *ev);
/* Does ana_vm_event do anything with events of this kind? (Most events are
 * the heap's: they are not handed over.) */
static inline bool ana_vm_kind_applies(unsigned kind)
{
    return (kind >= FMT_EV_MMAP && kind <= FMT_EV_SECTION_UNMAP) || kind == FMT_EV_PROCESS_EXIT;
}

/* Report every range still committed as an open lifetime. */
int ana_vm_finish(struct ana_vm *vm);

/* The image's state, NULL if it never mapped anything. */
static inline const struct ana_vm_image *ana_vm_get(const struct ana_vm *vm, uint32_t image)
{
    return image < vm->nr_images ? &vm->images[image] : NULL;
}

/* True for a private writable protection: commit charge. */
int ana_vm_is_charge(uint32_t prot, uint32_t flags);

#endif
