/* SPDX-License-Identifier: MIT */
/* Inside the replay worker: per-thread queues, the slot table, and the
 * threads that run the heap calls. All of it lives in mmap'd memory so the
 * worker's own bookkeeping never goes through the allocator being
 * measured; the worker makes no heap call but the replayed ones (and what
 * pthread_create does inside libc). */
#ifndef RPL_INTERNAL_H
#define RPL_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "replay/rpl_op.h"

#define RPL_RING_CAP 4096u /* operations per thread queue, a power of two */

/* A single-producer single-consumer queue: the dispatcher pushes, one
 * replay thread pops. tail moves after an operation has run, so head ==
 * tail means the thread has done everything it was given. */
struct rpl_ring {
    _Alignas(64) uint32_t head;
    uint32_t consumer_sleeping;
    _Alignas(64) uint32_t tail;
    uint32_t producer_sleeping;
    uint32_t producer_low; /* wake the producer when head - tail <= this */
    _Alignas(64) struct rpl_op ops[RPL_RING_CAP];
};

/* One block: its pointer (NULL when empty) and requested size. seq counts
 * the operations done on the slot; waiters says a thread sleeps on seq. */
struct rpl_slot {
    void *ptr;
    uint64_t size;
    uint32_t seq;
    uint32_t waiters;
    uint32_t paged; /* every page written: its size counts against the bound */
    uint32_t pad;
};

/* Per-kind counts and CPU time of one replay thread. */
struct rpl_stats {
    uint64_t calls;
    uint64_t failed; /* allocations that returned NULL (or posix_memalign errors) */
    uint64_t cpu_ns; /* thread CPU time while running operations */
    uint64_t waits;  /* operations that waited for another thread */
    uint64_t partly; /* RPL_TOUCH_PAGES: blocks past the bound, only their first byte written */
};

struct rpl_thread {
    uint32_t index;
    pthread_t pt;
    struct rpl_ring *ring;
    struct rpl_stats st;
};

/* Memory from mmap (zeroed), or NULL. */
void *rpl_map(size_t size);
void rpl_unmap(void *p, size_t size);

/* Queues. rpl_ring_push() blocks while the ring is full (waking the
 * consumer first); rpl_ring_flush() wakes a sleeping consumer that has
 * work; rpl_ring_drain() waits until the consumer has run everything. */
void rpl_ring_push(struct rpl_ring *r, const struct rpl_op *op);
void rpl_ring_flush(struct rpl_ring *r);
void rpl_ring_drain(struct rpl_ring *r);
/* Consumer side: the next operation, sleeping while there is none; the
 * clock callbacks bracket the sleep. rpl_ring_done() retires it. */
const struct rpl_op *rpl_ring_peek(struct rpl_ring *r, void (*pause)(void *), void *arg);
void rpl_ring_done(struct rpl_ring *r);

/* Slots. */
int rpl_slots_init(uint64_t nr_slots, uint32_t touch, uint64_t touch_bound);
/* Choose, per call of the family, the allocator's own function or an
 * emulation on its posix_memalign/realloc when its module lacks it;
 * report(name) is told of each emulated one. */
void rpl_exec_init(void (*report)(const char *name));
/* Run one heap operation (waiting for its slot's turn). */
void rpl_exec(const struct rpl_op *op, struct rpl_stats *st, void (*pause)(void *),
              void (*resume)(void *), void *arg);
/* Live blocks and their requested bytes, once every thread has stopped. */
void rpl_slots_live(uint64_t *blocks, uint64_t *bytes);
uint64_t rpl_slots_size(void);
int rpl_slot_valid(uint32_t slot);

/* Futex wait on *word while it holds val; wake everyone waiting on it. */
void rpl_futex_wait(uint32_t *word, uint32_t val);
void rpl_futex_wake(uint32_t *word);

#endif
