/* SPDX-License-Identifier: MIT */
/* The heaps of a trace, each apart: malloc's heap of each process image,
 * and the program's own pools (format 1.4, memscribe/annotate.h) or the
 * heaps of a Windows program (format 1.2). A heap is (image, handle),
 * handle 0 being malloc's; ids are dense from 0 in order of first sight.
 *
 * ana_heaps_compute() gives each heap the report's numbers with the
 * meanings of docs/architecture.md ("Meanings") taken within the heap:
 * allocations, frees, peak in use (and when), leaked (live at the end, or
 * at until_ns), temporary. A pool's blocks usually lie in a block of
 * malloc's (its arena): the totals of a process add both, the heaps show
 * them apart. Memory grows with heaps and threads, not with events. */
#ifndef ANA_HEAPS_H
#define ANA_HEAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/core/ana_filter.h"
#include "analysis/core/ana_map.h"
#include "analysis/core/ana_scan.h"
#include "memscribe/trace.h"

struct ana_heap {
    uint32_t image;
    uint64_t handle; /* 0: malloc's heap */
    uint32_t next_;  /* private: the next heap with this handle, id + 1 */
    uint64_t nr_allocs, alloc_bytes;
    uint64_t nr_frees, freed_bytes;
    uint64_t nr_destroyed; /* blocks ended by their pool's destroy */
    uint64_t nr_temporary, temporary_bytes;
    uint64_t live, live_blocks; /* at the end: leaked */
    uint64_t peak, peak_blocks, peak_ns;
};

struct ana_heaps {
    int pe;             /* a Windows trace: every heap event's arg[1] is its heap */
    struct ana_map ids; /* handle + 1 -> first heap id with it + 1 (uint32_t) */
    struct ana_heap *v; /* by id */
    uint32_t nr, cap;
};

void ana_heaps_init(struct ana_heaps *h, const struct fmt_reader *r);
void ana_heaps_release(struct ana_heaps *h);

/* The heap of image with handle, added (zeroed) if new; *id its id. NULL
 * on allocation failure. Pointers stay valid until the next add. */
struct ana_heap *ana_heaps_get(struct ana_heaps *h, uint32_t image, uint64_t handle, uint32_t *id);

/* The heap of an event's block (ana_heaps_get of its image and
 * fmt_event_heap). */
struct ana_heap *ana_heaps_of(struct ana_heaps *h, const struct fmt_event *ev, uint32_t *id);

/* Replay r (from its first chunk, until until_ns; UINT64_MAX: the end)
 * into h, which ana_heaps_init() made for r. f may be NULL. Returns 0 or
 * -errno (reader errors: see fmt_reader_error()). */
int ana_heaps_compute(struct ana_heaps *h, struct fmt_reader *r, struct ana_filter *f,
                      uint64_t until_ns, ana_progress_fn *progress, void *progress_arg);
/* The same from a pass shared with other outputs: the heap replay p (its
 * filter: the processes counted) reads r. Returns 0, -ENOMEM or -E2BIG
 * (too many consumers); h is ready after the pass. */
struct ana_heap_replay;
int ana_heaps_subscribe(struct ana_heaps *h, struct ana_heap_replay *p, struct fmt_reader *r);

/* The heap each stack allocated in, for a trace with pools: of[] has
 * nr_stacks + 1 entries, heap id + 1, 0 for a stack that started no
 * block, ANA_HEAPS_MIXED for one that allocated in several heaps (every
 * process's allocations count, whatever p's filter). Filled by the pass of
 * the heap replay p; free b->of with free(). Returns 0, -ENOMEM or -E2BIG. */
#define ANA_HEAPS_MIXED UINT32_MAX
struct ana_heaps_by_stack {
    struct ana_heaps *h; /* made for p's trace: heaps get their ids here */
    uint32_t nr_stacks;
    uint32_t *of;
};
int ana_heaps_by_stack_subscribe(struct ana_heaps_by_stack *b, struct ana_heap_replay *p,
                                 struct ana_heaps *h, uint32_t nr_stacks);

/* True if the trace has pools of the program's own to show (their
 * definitions, format 1.4). A Windows program's heaps are shown by
 * `window --by heap` only, as WPA does. */
bool ana_heaps_present(const struct fmt_reader *r);

/* A heap's name for people: "malloc", a pool's name ("pool 0x..." if it
 * has none), or a Windows heap's handle "0x...". Returns buf. */
const char *ana_heap_name(const struct fmt_reader *r, uint32_t image, uint64_t handle, char *buf,
                          size_t size);

#endif
