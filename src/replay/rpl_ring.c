/* SPDX-License-Identifier: MIT */
/* The per-thread queues of the replay worker and the futex waits they and
 * the slots use. Wake-ups are deferred: the dispatcher wakes a sleeping
 * thread when a quarter of its queue is full or on a flush, which it does
 * before it blocks on anything, so the thread runs operations in batches
 * and no thread sleeps while another waits for its work. */
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "replay/rpl_internal.h"

#define LOAD(p) __atomic_load_n((p), __ATOMIC_SEQ_CST)
#define STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_SEQ_CST)

void *rpl_map(size_t size)
{
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);

    return p == MAP_FAILED ? NULL : p;
}

void rpl_unmap(void *p, size_t size)
{
    if (p)
        munmap(p, size);
}

void rpl_futex_wait(uint32_t *word, uint32_t val)
{
    syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

void rpl_futex_wake(uint32_t *word)
{
    syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 0x7fffffff, NULL, NULL, 0);
}

/* The producer sleeps until the consumer has left at most low operations
 * queued. */
static void wait_low(struct rpl_ring *r, uint32_t low)
{
    for (;;) {
        uint32_t tail = LOAD(&r->tail);

        if (r->head - tail <= low)
            return;
        rpl_ring_flush(r);
        STORE(&r->producer_low, low);
        STORE(&r->producer_sleeping, 1);
        if (r->head - LOAD(&r->tail) > low)
            rpl_futex_wait(&r->tail, tail);
        STORE(&r->producer_sleeping, 0);
    }
}

void rpl_ring_push(struct rpl_ring *r, const struct rpl_op *op)
{
    uint32_t head = r->head;

    if (head - LOAD(&r->tail) == RPL_RING_CAP)
        wait_low(r, RPL_RING_CAP / 2);
    r->ops[head & (RPL_RING_CAP - 1)] = *op;
    STORE(&r->head, head + 1);
    if (LOAD(&r->consumer_sleeping) && head + 1 - LOAD(&r->tail) >= RPL_RING_CAP / 4)
        rpl_futex_wake(&r->head);
}

void rpl_ring_flush(struct rpl_ring *r)
{
    if (LOAD(&r->consumer_sleeping) && LOAD(&r->head) != LOAD(&r->tail))
        rpl_futex_wake(&r->head);
}

void rpl_ring_drain(struct rpl_ring *r)
{
    wait_low(r, 0);
}

const struct rpl_op *rpl_ring_peek(struct rpl_ring *r, void (*pause)(void *), void *arg)
{
    uint32_t tail = r->tail;
    uint32_t head = LOAD(&r->head);

    if (head == tail) {
        pause(arg);
        while ((head = LOAD(&r->head)) == tail) {
            STORE(&r->consumer_sleeping, 1);
            if (LOAD(&r->head) == tail)
                rpl_futex_wait(&r->head, tail);
            STORE(&r->consumer_sleeping, 0);
        }
    }
    return &r->ops[tail & (RPL_RING_CAP - 1)];
}

void rpl_ring_done(struct rpl_ring *r)
{
    uint32_t tail = r->tail + 1;

    STORE(&r->tail, tail);
    if (LOAD(&r->producer_sleeping) && LOAD(&r->head) - tail <= LOAD(&r->producer_low))
        rpl_futex_wake(&r->tail);
}
