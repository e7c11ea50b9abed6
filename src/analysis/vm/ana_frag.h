/* SPDX-License-Identifier: MIT */
/* Address-space fragmentation of one image's mappings (ana_vm): holes
 * between mappings, the largest free gap, mappings whose address or size
 * is not a multiple of a granularity and the free space they strand
 * (the map of them as SVG: pictures/ana_frag_svg.h). docs/frag.md. */
#ifndef ANA_FRAG_H
#define ANA_FRAG_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/vm/ana_vm.h"

/* A 32-bit program (every mapping below 4 GiB) owns [64 KiB, 4 GiB): the
 * space below its first and above its last mapping are holes too. A 64-bit
 * one has room far beyond: only holes between mappings count. */
#define ANA_FRAG_LOW_32 0x10000ull
#define ANA_FRAG_TOP_32 0x100000000ull
/* A 32-bit Windows program's user space ends at 2 GiB, unless it is large
 * address aware (it then maps above: 4 GiB under a 64-bit Windows). */
#define ANA_FRAG_TOP_32_WINDOWS 0x80000000ull

struct ana_frag_stats {
    uint64_t space_lo, space_hi; /* where holes are counted */
    int is_32;
    uint64_t mapped;    /* bytes the program mapped */
    uint64_t collector; /* bytes memscribe's collector mapped (rings, tables) */
    uint64_t free;      /* bytes in holes */
    uint64_t nr_holes, nr_mappings;
    uint64_t largest_lo, largest_hi; /* the largest hole (0, 0: none) */
};

void ana_frag_stats(const struct ana_vm_image *im, struct ana_frag_stats *s);

/* Call fn for every hole of at least min_size bytes, in address order. */
typedef int ana_frag_hole_fn(void *arg, uint64_t lo, uint64_t hi);
int ana_frag_holes(const struct ana_vm_image *im, uint64_t min_size, ana_frag_hole_fn *fn,
                   void *arg);

/* Mappings (pieces of one call, joined again) not aligned to gran. */
struct ana_frag_site {
    uint32_t stack; /* stack of the call that made them */
    uint8_t origin;
    uint8_t collector; /* memscribe's own mappings */
    uint64_t count;
    uint64_t size;     /* bytes mapped */
    uint64_t stranded; /* free bytes beside them, up to the next gran boundary */
};

/* Sites sorted by stranded bytes, then size; *out is malloc'd. Returns
 * the number of sites or -ENOMEM. */
long ana_frag_misaligned(const struct ana_vm_image *im, uint64_t gran, struct ana_frag_site **out);

/* Bytes of [lo, hi) each stack's mappings occupy now, sorted by bytes. */
long ana_frag_occupants(const struct ana_vm_image *im, uint64_t lo, uint64_t hi,
                        struct ana_frag_site **out);

#endif
