/* SPDX-License-Identifier: MIT */
/* Whole stacks: resolve each recorded address, read the frame after a
 * signal trampoline as precise, and cut memscribe's own frames and the
 * allocator's wrapper frames from the top so a stack starts at the code
 * that asked for memory. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/sym/ana_sym_internal.h"
#include "util/util_array.h"

/* Functions that only pass an allocation on: the libc allocator's entry
 * points and insides, and the raw virtual-memory wrappers. A stack whose
 * top is in them says nothing the event's kind does not say already. */
static const char *const allocator_functions[] = {
    "malloc",
    "calloc",
    "realloc",
    "reallocarray",
    "free",
    "cfree",
    "memalign",
    "posix_memalign",
    "aligned_alloc",
    "valloc",
    "pvalloc",
    "__libc_malloc",
    "__libc_calloc",
    "__libc_realloc",
    "__libc_free",
    "__libc_memalign",
    "__libc_valloc",
    "__libc_pvalloc",
    "__libc_reallocarray",
    "__libc_alloc_buffer_allocate",
    "_int_malloc",
    "_int_realloc",
    "_int_free",
    "_int_memalign",
    "_mid_memalign",
    "sysmalloc",
    "sysmalloc_mmap",
    "sysmalloc_mmap_fallback",
    "tcache_init",
    "malloc_hook_ini",
    "ptmalloc_init",
    "malloc_consolidate",
    "systrim",
    "heap_trim",
    "shrink_heap",
    "new_heap",
    "alloc_new_heap",
    "grow_heap",
    "_int_new_arena",
    "arena_get2",
    "arena_get_retry",
    "munmap_chunk",
    "mremap_chunk",
    "__default_morecore",
    "__glibc_morecore",
    "_dl_early_allocate",
    "mmap",
    "mmap64",
    "__mmap",
    "__mmap64",
    "munmap",
    "__munmap",
    "mremap",
    "__mremap",
    "mprotect",
    "__mprotect",
    "brk",
    "__brk",
    "sbrk",
    "__sbrk",
};

static bool starts_with(const char *s, const char *prefix)
{
    return !strncmp(s, prefix, strlen(prefix));
}

bool ana_sym_frame_is_internal(const struct ana_sym_frame *f)
{
    if (f->module) {
        const char *base = strrchr(f->module, '/');

        base = base ? base + 1 : f->module;
        if (starts_with(base, "libmemscribe"))
            return true;
    }
    if (!f->function)
        return false;
    /* Every overload: sized, aligned, nothrow, array. */
    if (starts_with(f->function, "operator new") || starts_with(f->function, "operator delete"))
        return true;
    for (size_t i = 0; i < sizeof(allocator_functions) / sizeof(allocator_functions[0]); i++)
        if (!strcmp(f->function, allocator_functions[i]))
            return true;
    return false;
}

static int push_line(struct ana_sym_stack *st, const struct ana_sym_frame *f, uint32_t index)
{
    if (UTIL_ARRAY_RESERVE(st->lines, st->cap_lines, (size_t)st->nr_lines + 1, 64))
        return -ENOMEM;
    st->lines[st->nr_lines++] = (struct ana_sym_line){.frame = f, .index = index};
    return 0;
}

/* ana_sym_stack, its addresses read by ana_sym_resolve or, shared, by
 * ana_sym_resolve_shared. */
static int stack(struct ana_sym *s, uint32_t image, const uint64_t *addrs, uint32_t nr,
                 struct ana_sym_stack *out, bool shared)
{
    struct ana_sym_clean c = ana_sym_clean_start(s);
    uint32_t index = 0;

    out->nr_lines = 0;
    out->nr_cut = 0;
    for (uint32_t i = 0; i < nr; i++) {
        const struct ana_sym_frame *frames;
        int n = (shared ? ana_sym_resolve_shared
                        : ana_sym_resolve)(s, image, addrs[i], ana_sym_clean_kind(&c), &frames);

        if (n < 0)
            return n;
        const struct ana_sym_frame *phys = &frames[n - 1];
        if (ana_sym_clean_next(&c, i, nr, c.cutting && ana_sym_frame_is_internal(phys),
                               phys->signal_frame)) {
            out->nr_cut++;
            continue;
        }
        for (int k = 0; k < n; k++) {
            int rc = push_line(out, &frames[k], index);
            if (rc)
                return rc;
        }
        index++;
    }
    return 0;
}

int ana_sym_stack(struct ana_sym *s, uint32_t image, const uint64_t *addrs, uint32_t nr,
                  struct ana_sym_stack *out)
{
    return stack(s, image, addrs, nr, out, false);
}

int ana_sym_stack_shared(struct ana_sym *s, uint32_t image, const uint64_t *addrs, uint32_t nr,
                         struct ana_sym_stack *out)
{
    return stack(s, image, addrs, nr, out, true);
}

void ana_sym_stack_release(struct ana_sym_stack *st)
{
    free(st->lines);
    memset(st, 0, sizeof(*st));
}
