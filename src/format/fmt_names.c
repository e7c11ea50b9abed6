/* SPDX-License-Identifier: MIT */
/* Names of event kinds, as dump prints them and analyses label them. */
#include "memscribe/trace.h"
#include <stdio.h>

const char *fmt_kind_name(unsigned kind)
{
    switch (kind) {
    case FMT_EV_MALLOC:
        return "malloc";
    case FMT_EV_CALLOC:
        return "calloc";
    case FMT_EV_REALLOC:
        return "realloc";
    case FMT_EV_REALLOCARRAY:
        return "reallocarray";
    case FMT_EV_FREE:
        return "free";
    case FMT_EV_MEMALIGN:
        return "memalign";
    case FMT_EV_POSIX_MEMALIGN:
        return "posix_memalign";
    case FMT_EV_ALIGNED_ALLOC:
        return "aligned_alloc";
    case FMT_EV_VALLOC:
        return "valloc";
    case FMT_EV_PVALLOC:
        return "pvalloc";
    case FMT_EV_MMAP:
        return "mmap";
    case FMT_EV_MUNMAP:
        return "munmap";
    case FMT_EV_MREMAP:
        return "mremap";
    case FMT_EV_MPROTECT:
        return "mprotect";
    case FMT_EV_BRK:
        return "brk";
    case FMT_EV_SBRK:
        return "sbrk";
    case FMT_EV_PROCESS_START:
        return "process_start";
    case FMT_EV_PROCESS_EXIT:
        return "process_exit";
    case FMT_EV_THREAD_START:
        return "thread_start";
    case FMT_EV_THREAD_EXIT:
        return "thread_exit";
    case FMT_EV_THREAD_NAME:
        return "thread_name";
    case FMT_EV_MODULE_LOAD:
        return "module_load";
    case FMT_EV_MODULE_UNLOAD:
        return "module_unload";
    case FMT_EV_RSS:
        return "rss";
    case FMT_EV_DROPPED:
        return "dropped";
    case FMT_EV_COUNTER:
        return "counter";
    case FMT_EV_HEAP_CREATE:
        return "heap_create";
    case FMT_EV_HEAP_DESTROY:
        return "heap_destroy";
    case FMT_EV_VM_RESERVE:
        return "vm_reserve";
    case FMT_EV_VM_COMMIT:
        return "vm_commit";
    case FMT_EV_VM_DECOMMIT:
        return "vm_decommit";
    case FMT_EV_VM_RELEASE:
        return "vm_release";
    case FMT_EV_VM_PROTECT:
        return "vm_protect";
    case FMT_EV_SECTION_MAP:
        return "section_map";
    case FMT_EV_SECTION_UNMAP:
        return "section_unmap";
    case FMT_EV_HEAP_BATCH:
        return "heap_batch";
    case FMT_EV_HEAP_TRANSIENT:
        return "heap_transient";
    case FMT_EV_AGGREGATE:
        return "aggregate";
    }
    return "unknown";
}

const char *fmt_origin_name(unsigned origin)
{
    static const char *const names[FMT_NR_ORIGINS] = {"call", "libc", "loader", "thread",
                                                      "snapshot"};

    return origin < FMT_NR_ORIGINS ? names[origin] : NULL;
}

char *fmt_counter_name(unsigned id, char *buf, size_t size)
{
    static const char *const named[] = {
        [FMT_CTR_ALLOCS] = "allocations",
        [FMT_CTR_ALLOC_BYTES] = "allocated_bytes",
        [FMT_CTR_ALLOC_USABLE] = "allocated_usable",
        [FMT_CTR_FREES] = "frees",
        [FMT_CTR_FREE_USABLE] = "freed_usable",
        [FMT_CTR_TEMPORARY] = "temporary",
        [FMT_CTR_TEMPORARY_BYTES] = "temporary_bytes",
        [FMT_CTR_FAILED] = "failed",
        [FMT_CTR_HEAP_USABLE] = "heap_usable",
        [FMT_CTR_PEAK_USABLE] = "peak_usable",
        [FMT_CTR_UNCOUNTED] = "uncounted",
    };
    const char *kind;

    if (id < FMT_CTR_CALLS + 16 && (kind = fmt_kind_name(id - FMT_CTR_CALLS)))
        snprintf(buf, size, "calls.%s", kind);
    else if (id >= FMT_CTR_CLASS && id < FMT_CTR_CLASS + FMT_CTR_NR_CLASSES)
        snprintf(buf, size, "class.%u", id - FMT_CTR_CLASS);
    else if (id < sizeof(named) / sizeof(named[0]) && named[id])
        snprintf(buf, size, "%s", named[id]);
    else
        snprintf(buf, size, "counter.%u", id);
    return buf;
}
