/* SPDX-License-Identifier: MIT */
/* Fork and the loader's lock. dl_iterate_phdr holds ld.so's
 * _dl_load_write_lock while it runs, and glibc (2.36) does not reset that
 * lock in a forked child: a fork while one of our threads is inside
 * dl_iterate_phdr (a module scan, libgcc's or, under
 * MEMSCRIBE_UNWIND=verify, libunwind's unwinder) leaves the child's copy
 * held for good, and the child's first dl_iterate_phdr (ours or its own)
 * waits forever. So every such call of ours is a user of a gate, and a
 * fork() closes the gate and waits until the users are out before the
 * process is copied (pthread_atfork). */
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>

#include "collector/col_internal.h"

/* Threads inside, plus COL_FORKING while a fork closes the gate. */
#define COL_FORKING 0x80000000u
static _Atomic uint32_t col_loader_users;
/* Nesting depth of this thread (a signal handler may call in again). */
static COL_TLS uint32_t col_loader_depth;

void col_loader_enter(void)
{
    if (col_loader_depth++)
        return;
    for (;;) {
        uint32_t v = atomic_load_explicit(&col_loader_users, memory_order_relaxed);

        if (v & COL_FORKING)
            sched_yield();
        else if (atomic_compare_exchange_weak_explicit(&col_loader_users, &v, v + 1,
                                                       memory_order_acquire, memory_order_relaxed))
            return;
    }
}

void col_loader_leave(void)
{
    if (--col_loader_depth == 0)
        atomic_fetch_sub_explicit(&col_loader_users, 1, memory_order_release);
}

int col_dl_iterate_phdr(int (*fn)(struct dl_phdr_info *, size_t, void *), void *arg)
{
    int rc;

    col_loader_enter();
    rc = dl_iterate_phdr(fn, arg);
    col_loader_leave();
    return rc;
}

/* The users inside finish on their own: none waits for the forking thread
 * (glibc runs prepare handlers before it takes its own locks). A fork from
 * a signal handler that interrupted this thread inside the gate waits for
 * the others only. */
static void col_fork_prepare(void)
{
    uint32_t self = col_loader_depth ? 1 : 0;

    atomic_fetch_or(&col_loader_users, COL_FORKING);
    while ((atomic_load(&col_loader_users) & ~COL_FORKING) > self)
        sched_yield();
}

static void col_fork_parent(void)
{
    atomic_fetch_and(&col_loader_users, ~COL_FORKING);
}

static void col_fork_child(void)
{
    /* What MADV_WIPEONFORK did to the process page on a kernel, done again
     * for a fork through glibc: qemu-user accepts the advice and ignores
     * it, and a child that saw the parent's page would write into the
     * parent's rings. Our handler is among the first registered, so it
     * runs before the program's own child handlers allocate. */
    if (col_proc)
        memset(col_proc, 0, sizeof(*col_proc));
    /* Only this thread goes on in the child. */
    atomic_store(&col_loader_users, col_loader_depth ? 1u : 0u);
    col_count_fork_child();
}

void col_fork_init(void)
{
    pthread_atfork(col_fork_prepare, col_fork_parent, col_fork_child);
}
