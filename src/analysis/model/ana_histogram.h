/* SPDX-License-Identifier: MIT */
/* Allocation sizes in power-of-two classes from 1 byte: class 0 holds
 * size 0, class k >= 1 holds sizes [2^(k-1), 2^k). Counts and bytes per
 * class, for the whole trace and optionally per stack (a log-log
 * frequency histogram). */
#ifndef ANA_HISTOGRAM_H
#define ANA_HISTOGRAM_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/core/ana_map.h"
#include "analysis/model/ana_step.h"
#include "memscribe/event.h"

#define ANA_NR_SIZE_CLASSES 65

static inline unsigned ana_size_class(uint64_t size)
{
    return size ? 64u - (unsigned)__builtin_clzll(size) : 0;
}

/* The smallest and largest size of class cls. */
void ana_size_class_bounds(unsigned cls, uint64_t *lo, uint64_t *hi);

struct ana_hist_bin {
    uint64_t nr;
    uint64_t bytes;
};

struct ana_histogram {
    bool by_stack;
    /* Per image: ANA_NR_SIZE_CLASSES bins each. */
    struct ana_hist_bin *images;
    uint32_t nr_images;
    /* by_stack: (stack << 7 | class) + 1 -> bin, and stack + 1 -> image. */
    struct ana_map stack_bins;
    struct ana_map stack_image;
};

void ana_histogram_init(struct ana_histogram *h, bool by_stack);
void ana_histogram_release(struct ana_histogram *h);

/* Count ev's block if its step st starts a selected one, or an aggregated
 * trace's batch row's blocks (st->batch). 0, -ENOMEM, or -EPROTO for a
 * row's size class past the table. */
int ana_histogram_step(struct ana_histogram *h, const struct fmt_event *ev,
                       const struct ana_step *st);
/* Count the blocks the heap replay p starts (its filter chooses them).
 * Returns as ana_heap_replay_subscribe(). */
struct ana_heap_replay;
int ana_histogram_subscribe(struct ana_histogram *h, struct ana_heap_replay *p);

/* The bins of one image (NULL if it has none). */
const struct ana_hist_bin *ana_histogram_image(const struct ana_histogram *h, uint32_t image);
/* The bin of (stack, class), or NULL. */
const struct ana_hist_bin *ana_histogram_stack(const struct ana_histogram *h, uint32_t stack,
                                               unsigned cls);

/* A call site of a by_stack histogram and its allocations. */
struct ana_hist_site {
    uint32_t stack;
    uint32_t image;
    uint64_t nr;
};

/* The call sites of a by_stack histogram, most allocations first (then by
 * stack id), in *out (malloc'd). Returns their number or -ENOMEM. */
long ana_histogram_sites(const struct ana_histogram *h, struct ana_hist_site **out);

#endif
