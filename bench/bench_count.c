/* SPDX-License-Identifier: MIT */
/* libbench_count.so: count a program's heap calls, independently of any tracer.
 *
 * Preload it with BENCH_COUNT_FILE=<path>; at exit each process appends one
 * line "bench-count: pid=P events=E" to that file. E counts every call of the
 * functions memscribe and heaptrack hook for the heap (malloc, calloc, realloc,
 * reallocarray, free including free(NULL), memalign, posix_memalign,
 * aligned_alloc, valloc, pvalloc). The bench divides time and trace bytes by
 * this number for programs, like sqlite3, whose calls are not known by
 * construction.
 *
 * It forwards to glibc's exported __libc_* entry points, so it needs no
 * dlsym and no bootstrap buffer. Counting only, never timed: a shared atomic
 * counter is simple and exact across threads. */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h> /* memalign, pvalloc */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BC_EXPORT __attribute__((visibility("default")))

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t nmemb, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void __libc_free(void *p);
extern void *__libc_memalign(size_t align, size_t size);
extern void *__libc_valloc(size_t size);
extern void *__libc_pvalloc(size_t size);

static _Atomic uint64_t bc_nr_events;

static void bc_count(void)
{
    atomic_fetch_add_explicit(&bc_nr_events, 1, memory_order_relaxed);
}

BC_EXPORT void *malloc(size_t size)
{
    bc_count();
    return __libc_malloc(size);
}

BC_EXPORT void *calloc(size_t nmemb, size_t size)
{
    bc_count();
    return __libc_calloc(nmemb, size);
}

BC_EXPORT void *realloc(void *p, size_t size)
{
    bc_count();
    return __libc_realloc(p, size);
}

/* glibc's reallocarray calls its internal realloc, which a preloaded realloc
 * does not see: it needs its own definition. */
BC_EXPORT void *reallocarray(void *p, size_t nmemb, size_t size)
{
    size_t total;

    bc_count();
    if (__builtin_mul_overflow(nmemb, size, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    return __libc_realloc(p, total);
}

BC_EXPORT void free(void *p)
{
    bc_count();
    __libc_free(p);
}

BC_EXPORT void *memalign(size_t align, size_t size)
{
    bc_count();
    return __libc_memalign(align, size);
}

BC_EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
    void *p;

    bc_count();
    /* posix_memalign(3): a power of two multiple of sizeof(void *). */
    if (align < sizeof(void *) || (align & (align - 1)))
        return EINVAL;
    p = __libc_memalign(align, size);
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}

BC_EXPORT void *aligned_alloc(size_t align, size_t size)
{
    bc_count();
    return __libc_memalign(align, size);
}

BC_EXPORT void *valloc(size_t size)
{
    bc_count();
    return __libc_valloc(size);
}

BC_EXPORT void *pvalloc(size_t size)
{
    bc_count();
    return __libc_pvalloc(size);
}

/* Append the count with open/write only: the program may have closed its
 * standard streams, and stdio would allocate (and count) while reporting. */
__attribute__((destructor)) static void bc_report(void)
{
    const char *path = getenv("BENCH_COUNT_FILE");
    char line[96];
    int fd, len;

    if (!path)
        return;
    len = snprintf(line, sizeof(line), "bench-count: pid=%d events=%llu\n", (int)getpid(),
                   (unsigned long long)atomic_load(&bc_nr_events));
    fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    if (write(fd, line, (size_t)len) != len)
        (void)0; /* nothing to report to: the count is simply missing */
    close(fd);
}
