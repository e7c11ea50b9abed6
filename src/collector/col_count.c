/* SPDX-License-Identifier: MIT */
/* The exact counters of a sampled recording (fmt_shm_counters.h,
 * docs/record-sampling.md, "Exact totals"): every heap call counted in its
 * thread's slot of segment 0's area, which the recorder adds up. The
 * counting itself is inline (col_internal.h, col_count_*): this file hands
 * out slots and follows the process's life (its stream's start, threads,
 * fork). */
#include <malloc.h>

#include "collector/col_internal.h"

struct fmt_shm_counters *col_counters;

/* The stream of this process image starts (segment 0 made): count into
 * its area, from zero. Under sampling only: an exact trace's events hold
 * every number already. */
void col_count_start(struct fmt_shm_header *h0)
{
    struct fmt_shm_counters *c;

#ifdef COL_ATTACH
    /* record -p: the process ran before, so no total from here on would
     * be its whole; and a detach unmaps the segment, which a thread
     * counting outside any hook could still be writing. */
    (void)h0;
    (void)c;
    return;
#else
    if (!col_sample_bytes || !h0->counters_offset)
        return;
    c = (struct fmt_shm_counters *)((char *)h0 + h0->counters_offset);
    atomic_store(&c->threaded, 0u); /* a new image, a forked child: one thread */
    __atomic_store_n(&col_counters, c, __ATOMIC_RELEASE);
#endif
}

/* A thread's first counted call: its own slot, or the shared slot 0 when
 * every slot is taken. A second thread to take one makes the heap's
 * updates atomic (col_count_threads is the sure way: before the thread
 * runs). */
struct fmt_shm_counter_slot *col_count_claim(struct col_thread *t)
{
    struct fmt_shm_counters *c = col_counters;
    uint32_t n;

    if (!c)
        return NULL;
    n = atomic_fetch_add_explicit(&c->next_slot, 1, memory_order_relaxed) + 1;
    if (n > 1)
        atomic_store(&c->threaded, 1u);
    if (n < FMT_SHM_COUNTER_SLOTS) {
        t->ctr = &c->slot[n];
        t->ctr_shared = 0;
        t->ctr_lean = col_glibc_malloc ? t->ctr : NULL;
    } else {
        t->ctr = &c->slot[0];
        t->ctr_shared = 1;
        t->ctr_lean = NULL;
    }
    return t->ctr;
}

/* pthread_create, before the new thread exists: from now on the heap is
 * updated atomically. */
void col_count_threads(void)
{
    struct fmt_shm_counters *c = col_counters;

    if (c)
        atomic_store(&c->threaded, 1u);
}

/* In a forked child (pthread_atfork): the area is the parent's (shared
 * memory) until the child's stream starts. Its next allocation goes the
 * hook's whole way (the countdown at 0), which starts the stream; a free
 * before that is not counted, as it is not in the child's stream. */
void col_count_fork_child(void)
{
    struct col_thread *t = &col_thread;

    __atomic_store_n(&col_counters, NULL, __ATOMIC_RELAXED); /* one thread after fork */
    t->ctr = NULL;
    t->ctr_lean = NULL;
    t->ctr_shared = 0;
    t->last_block = 0;
    if (col_sample_bytes)
        t->sample_left = 0;
}

void col_count_alloc_first(struct col_thread *t, unsigned kind, void *p, uint64_t size)
{
    if (col_count_claim(t))
        col_count_alloc(t, kind, p, size);
}

void col_count_end_first(struct col_thread *t, void *p, uint64_t usable, int is_free)
{
    if (col_count_claim(t))
        col_count_end_usable(t, p, usable, is_free);
}

size_t col_count_usable_slow(void *p)
{
    return col_real.malloc_usable_size ? col_real.malloc_usable_size(p) : 0;
}
