/* SPDX-License-Identifier: MIT */
/* The virtual-memory hooks (mmap, munmap, mremap, mprotect, brk, sbrk) and
 * the ones that keep the module and thread maps right (dlopen, dlclose,
 * pthread_setname_np). */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "collector/col_internal.h"

#define COL_EXPORT __attribute__((visibility("default")))

static void col_vm_event(struct col_thread *t, uint8_t kind, uint64_t ts, uint32_t stack,
                         int failed, uint8_t flags, uint64_t addr, uint64_t size,
                         const uint64_t *extra, unsigned nargs)
{
    col_emit_event(t, FMT_SHM_REC_EVENT, kind, (uint8_t)(flags | (failed ? FMT_EVF_FAILED : 0)),
                   FMT_ORIGIN_CALL, stack, ts, addr, size, extra, nargs);
}

/* The real mmap or mmap64: they differ on 32-bit targets, where off_t is
 * 32 bits and mmap64 takes a 64-bit offset. Before dlsym has run: the raw
 * syscall (mmap2 counts pages on i386). */
static void *col_real_mmap(int use64, void *addr, size_t len, int prot, int flags, int fd,
                           int64_t off)
{
    if (use64 && col_real.mmap64)
        return col_real.mmap64(addr, len, prot, flags, fd, (off64_t)off);
    if (col_real.mmap)
        return col_real.mmap(addr, len, prot, flags, fd, (off_t)off);
#ifdef SYS_mmap2
    return (void *)syscall(SYS_mmap2, addr, len, prot, flags, fd, (long)(off >> 12));
#else
    return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, (long)off);
#endif
}

static void *col_mmap_common(const void *ra, int use64, void *addr, size_t len, int prot, int flags,
                             int fd, int64_t off)
{
    struct col_thread *t;
    uint64_t extra[4] = {(uint64_t)prot, (uint64_t)flags, (uint64_t)(int64_t)fd, (uint64_t)off};
    uint32_t stack;
    uint64_t ts;
    void *p;

    if (COL_UNLIKELY(col_maps_tool_caller(ra))) {
        /* Nor by dispatch; libunwind calls from inside a hook, where the
         * selector must stay as it was (ALLOW), not be re-armed. */
        uint8_t sel = col_thread.sud_sel;

        col_thread.sud_sel = COL_SUD_ALLOW;
        p = col_real_mmap(use64, addr, len, prot, flags, fd, off);
        col_thread.sud_sel = sel;
        return p;
    }
    t = col_enter();

    if (!t)
        return col_real_mmap(use64, addr, len, prot, flags, fd, off);
    stack = col_stack_get(t);
    p = col_real_mmap(use64, addr, len, prot, flags, fd, off);
    ts = col_stamp(t);
    col_vm_event(t, FMT_EV_MMAP, ts, stack, p == MAP_FAILED, 0,
                 p == MAP_FAILED ? 0 : (uint64_t)(uintptr_t)p, len, extra, 4);
    col_stamp_done(t);
    col_leave(t);
    return p;
}

COL_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    return col_mmap_common(__builtin_return_address(0), 0, addr, len, prot, flags, fd, off);
}

COL_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off64_t off)
{
    return col_mmap_common(__builtin_return_address(0), 1, addr, len, prot, flags, fd, off);
}

COL_EXPORT int munmap(void *addr, size_t len)
{
    struct col_thread *t;
    uint32_t stack;
    uint64_t ts;
    int rc;

    /* libunwind's own caches are not the program's (col_maps.c). */
    if (COL_UNLIKELY(col_maps_tool_caller(__builtin_return_address(0)))) {
        uint8_t sel = col_thread.sud_sel; /* restored, as in mmap */

        col_thread.sud_sel = COL_SUD_ALLOW;
        rc = col_real.munmap ? col_real.munmap(addr, len) : (int)syscall(SYS_munmap, addr, len);
        col_thread.sud_sel = sel;
        return rc;
    }
    t = col_enter();

    if (!t)
        return col_real.munmap ? col_real.munmap(addr, len) : (int)syscall(SYS_munmap, addr, len);
    stack = col_stack_get(t);
    ts = col_stamp(t); /* before: the range may be mapped again at once */
    rc = col_real.munmap(addr, len);
    col_vm_event(t, FMT_EV_MUNMAP, ts, stack, rc != 0, 0, (uint64_t)(uintptr_t)addr, len, NULL, 0);
    col_stamp_done(t);
    col_leave(t);
    return rc;
}

COL_EXPORT void *mremap(void *old, size_t old_size, size_t new_size, int flags, ...)
{
    struct col_thread *t;
    void *new_addr = NULL, *p;
    uint64_t extra[3] = {(uint64_t)(uintptr_t)old, old_size, (uint64_t)flags};
    uint32_t stack;
    uint64_t ts0, ts1;
    uint8_t evf = 0;

    if (flags & MREMAP_FIXED) {
        va_list ap;

        va_start(ap, flags);
        new_addr = va_arg(ap, void *);
        va_end(ap);
    }
    t = col_enter();
    if (!t) {
        if (col_real.mremap)
            return col_real.mremap(old, old_size, new_size, flags, new_addr);
        return (void *)syscall(SYS_mremap, old, old_size, new_size, flags, new_addr);
    }
    stack = col_stack_get(t);
    ts0 = col_stamp(t);
    p = col_real.mremap(old, old_size, new_size, flags, new_addr);
    ts1 = col_now();
    if (p == old)
        evf = FMT_EVF_IN_PLACE;
    else if (p != MAP_FAILED)
        col_emit_event(t, FMT_SHM_REC_RELEASE, FMT_EV_MREMAP, 0, FMT_ORIGIN_CALL, stack, ts0,
                       (uint64_t)(uintptr_t)old, 0, NULL, 0);
    col_vm_event(t, FMT_EV_MREMAP, ts1, stack, p == MAP_FAILED, evf,
                 p == MAP_FAILED ? 0 : (uint64_t)(uintptr_t)p, new_size, extra, 3);
    col_stamp_done(t);
    col_leave(t);
    return p;
}

COL_EXPORT int mprotect(void *addr, size_t len, int prot)
{
    struct col_thread *t = col_enter();
    uint64_t extra[1] = {(uint64_t)prot};
    uint32_t stack;
    uint64_t ts;
    int rc;

    if (!t)
        return col_real.mprotect ? col_real.mprotect(addr, len, prot)
                                 : (int)syscall(SYS_mprotect, addr, len, prot);
    stack = col_stack_get(t);
    rc = col_real.mprotect(addr, len, prot);
    ts = col_stamp(t);
    col_vm_event(t, FMT_EV_MPROTECT, ts, stack, rc != 0, 0, (uint64_t)(uintptr_t)addr, len, extra,
                 1);
    col_stamp_done(t);
    col_leave(t);
    return rc;
}

COL_EXPORT int brk(void *addr)
{
    struct col_thread *t = col_enter();
    uint64_t extra[1] = {(uint64_t)(uintptr_t)addr};
    uint32_t stack;
    uint64_t ts;
    int rc;

    if (!t)
        return col_real.brk ? col_real.brk(addr) : -1;
    stack = col_stack_get(t);
    rc = col_real.brk(addr);
    ts = col_stamp(t);
    col_vm_event(t, FMT_EV_BRK, ts, stack, rc != 0, 0, (uint64_t)(uintptr_t)col_real.sbrk(0), 0,
                 extra, 1);
    col_stamp_done(t);
    col_leave(t);
    return rc;
}

COL_EXPORT void *sbrk(intptr_t incr)
{
    struct col_thread *t = col_enter();
    uint64_t extra[1] = {(uint64_t)incr};
    uint32_t stack;
    uint64_t ts;
    void *p;

    if (!t)
        return col_real.sbrk ? col_real.sbrk(incr) : (void *)-1;
    stack = col_stack_get(t);
    p = col_real.sbrk(incr);
    ts = col_stamp(t);
    col_vm_event(t, FMT_EV_SBRK, ts, stack, p == (void *)-1, 0,
                 p == (void *)-1 ? 0 : (uint64_t)(uintptr_t)p, 0, extra, 1);
    col_stamp_done(t);
    col_leave(t);
    return p;
}

/* dlopen looks at its return address to choose the caller's namespace and
 * RUNPATH, so it must be a tail call (it is, at -O2): ask the next events
 * (a constructor's malloc, say) to watch the module set instead. */
COL_EXPORT void *dlopen(const char *file, int mode)
{
    if (COL_UNLIKELY(!col_real.dlopen)) {
        struct col_thread *t = col_enter(); /* resolves the real functions */

        if (t)
            col_leave(t);
        if (!col_real.dlopen)
            col_real.dlopen = dlsym(COL_RTLD_NEXT, "dlopen");
    }
    atomic_store_explicit(&col_modules_dirty, COL_MODULE_WATCH, memory_order_relaxed);
    return col_real.dlopen(file, mode);
}

COL_EXPORT int dlclose(void *handle)
{
    int rc = col_real.dlclose(handle);
    struct col_thread *t = col_enter();

    if (t) {
        col_modules_rescan(t);
        col_leave(t);
    }
    return rc;
}

COL_EXPORT int pthread_setname_np(pthread_t th, const char *name)
{
    int rc = col_real.pthread_setname_np ? col_real.pthread_setname_np(th, name) : ENOSYS;
    struct col_thread *t;

    /* Another thread's tid is not at hand here; only a thread naming
     * itself is recorded (the recorder reads names at thread start). */
    if (rc != 0 || !pthread_equal(th, pthread_self()) || !(t = col_enter()))
        return rc;
    col_emit_thread(t, FMT_SHM_REC_THREAD_NAME, name, (uint32_t)strnlen(name, 64));
    col_leave(t);
    return rc;
}

/* exit(): glibc calls the libraries' destructors from the last exit
 * handler (_dl_fini), the preloaded collector's after the program's, just
 * before the process ends: the exit's time. */
__attribute__((destructor)) static void col_fini(void)
{
    col_ring_stamp_exit();
    col_reach_at_exit();
}

/* _exit() runs no destructor (a forked child, a shell between commands). */
COL_EXPORT void _exit(int status)
{
    col_ring_stamp_exit();
    col_reach_at_exit();
    if (col_real._exit)
        col_real._exit(status);
    for (;;)
        syscall(SYS_exit_group, status);
}
