/* SPDX-License-Identifier: MIT */
/* The writer's map of live mappings per process image: which mapping an
 * munmap, mremap or MAP_FIXED mmap ends. munmap and friends work on address
 * ranges, so a mapping can lose a part (it stays live with its serial, and
 * shrinks) or be split in two (both pieces keep the serial). */
#ifndef FMT_WVM_INTERNAL_H
#define FMT_WVM_INTERNAL_H

#include <stdint.h>

#include "format/fmt_wlive_internal.h"

struct fmt_wpiece {
    uint64_t start;
    uint64_t end;          /* exclusive */
    struct fmt_wblock blk; /* the mapping as made: addr, size, serial, ... */
    uint64_t how;          /* its mmap's prot | flags << 32 (a --keep-last segment
                              carries it: fmt_wcarry.c) */
};

struct fmt_wvm_image {
    struct fmt_wpiece *v; /* sorted by start, never overlapping */
    uint32_t nr;
    uint32_t cap;
};

struct fmt_wvm {
    struct fmt_wvm_image *images;
    uint32_t nr_images;
};

/* What a range removal touched. */
struct fmt_wvm_hit {
    struct fmt_wblock first; /* the lowest mapping touched (valid if nr > 0) */
    uint64_t first_how;      /* its prot | flags << 32 */
    uint32_t nr;             /* how many pieces were touched */
    int partial;             /* some touched piece survives in part */
};

void fmt_wvm_destroy(struct fmt_wvm *vm);

/* Remove [start, start+len) from image's map. Returns 0 or -ENOMEM. */
int fmt_wvm_remove(struct fmt_wvm *vm, uint32_t image, uint64_t start, uint64_t len,
                   struct fmt_wvm_hit *hit);

/* Add a mapping made with how (prot | flags << 32); what it overlaps is
 * removed first (without a report: an mmap names it through
 * fmt_wvm_remove() before). Returns 0 or -ENOMEM. */
int fmt_wvm_insert(struct fmt_wvm *vm, uint32_t image, const struct fmt_wblock *blk, uint64_t how);

#endif
