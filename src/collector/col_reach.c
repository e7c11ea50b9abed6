/* SPDX-License-Identifier: MIT */
/* The image's side of the reachability classes at exit (docs/leaks.md,
 * docs/protocol-order.md "Leak classes at exit"): ask the recorder to scan, and
 * wait, bounded, until it has. Raw system calls only: this runs from the
 * collector's destructor and its _exit hook, after the program's own exit
 * handlers. */
#include <errno.h>
#include <linux/futex.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "collector/col_internal.h"

int col_reach_on;

/* How long the recorder may take to notice the request (it looks once a
 * round, every millisecond or so; a loaded machine may hold it longer),
 * and to scan once it has (a program with millions of blocks: seconds). A
 * recorder that dies is noticed within a wait. */
#define COL_REACH_NOTICE_MS 5000
#define COL_REACH_SCAN_MS 120000
#define COL_REACH_WAIT_MS 20

/* Before the recorder has mapped the segment (a short program: it takes
 * hellos once its clock is calibrated) its pid is not known yet: it has
 * the time to notice the request to get there. */
static int col_reach_recorder_alive(const struct fmt_shm_header *h)
{
    uint32_t pid = atomic_load_explicit(&h->recorder_pid, memory_order_relaxed);

    return !pid || !(syscall(SYS_kill, (pid_t)pid, 0) != 0 && errno == ESRCH);
}

void col_reach_publish(struct fmt_shm_header *h)
{
    uint32_t nr, cap;
    const void *own;

    if (!col_reach_on)
        return;
    /* The whole table: entries added later are read too, unused ones are
     * zero (an empty range). */
    own = col_maps_own_table(&nr, &cap);
    atomic_store_explicit(&h->own_addr, (uint64_t)(uintptr_t)own, memory_order_relaxed);
    atomic_store_explicit(&h->own_nr, cap, memory_order_relaxed);
}

void col_reach_at_exit(void)
{
    struct fmt_shm_header *h;
    uint32_t expect = 0, nr_own, cap, state;
    unsigned waited_ms = 0;
    const void *own;

    /* A 32-bit image asks too: the recorder reads its words as 4 bytes. */
    if (!col_reach_on || !(h = col_ring_header0()))
        return;
    own = col_maps_own_table(&nr_own, &cap);
    atomic_store_explicit(&h->own_addr, (uint64_t)(uintptr_t)own, memory_order_relaxed);
    atomic_store_explicit(&h->own_nr, nr_own, memory_order_relaxed);
    /* The first thread to end the image asks; any other that ends it at
     * the same time waits for the same scan. */
    atomic_compare_exchange_strong_explicit(&h->reach_req, &expect, (uint32_t)syscall(SYS_gettid),
                                            memory_order_release, memory_order_relaxed);
    while ((state = atomic_load_explicit(&h->reach_done, memory_order_acquire)) !=
           FMT_SHM_REACH_DONE) {
        struct timespec ts = {0, COL_REACH_WAIT_MS * 1000 * 1000};

        if (waited_ms >=
                (state == FMT_SHM_REACH_WAITING ? COL_REACH_NOTICE_MS : COL_REACH_SCAN_MS) ||
            !col_reach_recorder_alive(h))
            return;
        /* Not FUTEX_PRIVATE: the recorder wakes it from its own process. A
         * signal, or the recorder's ptrace stop, ends the wait early. */
        syscall(SYS_futex, &h->reach_done, FUTEX_WAIT, state, &ts, NULL, 0);
        waited_ms += COL_REACH_WAIT_MS;
    }
}
