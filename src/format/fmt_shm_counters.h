/* SPDX-License-Identifier: MIT */
/* The exact counters of a sampled recording (docs/protocol.md, "Counters";
 * docs/record-sampling.md, "Exact totals"): under record --sample every
 * heap call is counted, without a stack or an event, in the thread's slot
 * of an area at the end of the stream's segment 0; the recorder adds the
 * slots up and writes the totals into the trace as FMT_EV_COUNTER events.
 * Header-only: the collector includes it without linking format/.
 *
 * A slot belongs to one thread, which alone writes it (single-instruction
 * adds, so that a signal handler's call between cannot lose one); slot 0
 * is shared by the threads that found none free, with atomic adds. The
 * heap in use and its peak are the stream's, in the area's head: plain
 * while the process has one thread, atomic once it has more. */
#ifndef FMT_SHM_COUNTERS_H
#define FMT_SHM_COUNTERS_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdint.h>

#include "memscribe/event.h"

/* A slot holds the per-thread counters of enum fmt_counter
 * (memscribe/event.h), FMT_CTR_NR of them; the area's head the heap's. */
struct fmt_shm_counter_slot {
    alignas(64) uint64_t v[FMT_CTR_NR];
};

#define FMT_SHM_COUNTER_SLOTS 1024

/* The area: its head, then the slots. */
struct fmt_shm_counters {
    alignas(64) _Atomic uint64_t heap_usable;
    _Atomic uint64_t peak_usable;
    _Atomic uint32_t next_slot; /* slots handed out: 1 .. FMT_SHM_COUNTER_SLOTS - 1 */
    _Atomic uint32_t threaded;  /* the process has threads: heap and peak atomic */
    /* The program called an allocator's own entry points (mallocx,
     * mi_malloc, tc_malloc, ...; docs/record-sampling.md), which are
     * sampled but not counted: the totals leave them out. */
    _Atomic uint32_t uncounted;
    struct fmt_shm_counter_slot slot[FMT_SHM_COUNTER_SLOTS];
};

/* The log2 class of a requested size. */
static inline unsigned fmt_counter_class(uint64_t size)
{
    unsigned c = size > 1 ? 63u - (unsigned)__builtin_clzll(size) : 0u;

    return c < FMT_CTR_NR_CLASSES ? c : FMT_CTR_NR_CLASSES - 1;
}

#endif
