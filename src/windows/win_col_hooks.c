/* SPDX-License-Identifier: MIT */
/* The detours on ntdll's heap and virtual-memory calls. Each calls the
 * original first (so what the heap manager does inside is seen too), then
 * records the call with its result. */
#include "win_col_internal.h"

#include "win_hook.h"

#include <errno.h>
#include <stdio.h>

typedef LONG NTSTATUS_T;

typedef PVOID(NTAPI *alloc_fn)(PVOID, ULONG, SIZE_T);
typedef PVOID(NTAPI *realloc_fn)(PVOID, ULONG, PVOID, SIZE_T);
typedef BOOLEAN(NTAPI *free_fn)(PVOID, ULONG, PVOID);
typedef PVOID(NTAPI *create_fn)(ULONG, PVOID, SIZE_T, SIZE_T, PVOID, PVOID);
typedef PVOID(NTAPI *destroy_fn)(PVOID);
typedef NTSTATUS_T(NTAPI *vm_alloc_fn)(HANDLE, PVOID *, ULONG_PTR, PSIZE_T, ULONG, ULONG);
typedef NTSTATUS_T(NTAPI *vm_alloc_ex_fn)(HANDLE, PVOID *, PSIZE_T, ULONG, ULONG, PVOID, ULONG);
typedef NTSTATUS_T(NTAPI *vm_free_fn)(HANDLE, PVOID *, PSIZE_T, ULONG);
typedef NTSTATUS_T(NTAPI *vm_protect_fn)(HANDLE, PVOID *, PSIZE_T, ULONG, PULONG);
typedef NTSTATUS_T(NTAPI *map_fn)(HANDLE, HANDLE, PVOID *, ULONG_PTR, SIZE_T, PLARGE_INTEGER,
                                  PSIZE_T, ULONG, ULONG, ULONG);
typedef NTSTATUS_T(NTAPI *unmap_fn)(HANDLE, PVOID);

static struct {
    alloc_fn alloc;
    realloc_fn realloc;
    free_fn free;
    create_fn create;
    destroy_fn destroy;
    vm_alloc_fn vm_alloc;
    vm_alloc_ex_fn vm_alloc_ex;
    vm_free_fn vm_free;
    vm_protect_fn vm_protect;
    map_fn map;
    unmap_fn unmap;
} real;

#define U(x) ((uint64_t)(uintptr_t)(x))

/* Heap calls made inside another heap call of the same thread (Wine's
 * RtlReAllocateHeap calls RtlAllocateHeap and RtlFreeHeap) are recorded
 * with their depth in a7, so that the analysis counts the outer call only. */
static struct win_thread *heap_begin(void)
{
    struct win_thread *t = win_col_thread();

    if (t)
        t->heap_depth++;
    return t;
}

static uint64_t heap_end(struct win_thread *t)
{
    return t ? --t->heap_depth : 0;
}

static PVOID NTAPI hook_alloc(PVOID heap, ULONG flags, SIZE_T size)
{
    struct win_thread *d = heap_begin();
    PVOID p = real.alloc(heap, flags, size);
    uint64_t depth = heap_end(d);
    struct win_thread *t = win_col_enter();

    if (t) {
        uint64_t a[] = {U(heap), flags, size, U(p), 0, 0, 0, depth};
        win_col_emit(t, WIN_REC_HEAP_ALLOC, 0, a, 8, 1, NULL, 0);
        win_col_leave(t);
    }
    return p;
}

static PVOID NTAPI hook_realloc(PVOID heap, ULONG flags, PVOID old, SIZE_T size)
{
    struct win_thread *d = heap_begin();
    uint64_t seq = win_col_seq();
    PVOID p = real.realloc(heap, flags, old, size);
    uint64_t depth = heap_end(d);
    struct win_thread *t = win_col_enter();

    if (t) {
        uint64_t a[] = {U(heap), flags, U(old), size, U(p), 0, 0, depth};
        win_col_emit(t, WIN_REC_HEAP_REALLOC, seq, a, 8, 1, NULL, 0);
        win_col_leave(t);
    }
    return p;
}

static BOOLEAN NTAPI hook_free(PVOID heap, ULONG flags, PVOID ptr)
{
    struct win_thread *d = heap_begin();
    uint64_t seq = win_col_seq();
    BOOLEAN ok = real.free(heap, flags, ptr);
    uint64_t depth = heap_end(d);
    struct win_thread *t = win_col_enter();

    if (t) {
        uint64_t a[] = {U(heap), flags, U(ptr), ok, 0, 0, 0, depth};
        win_col_emit(t, WIN_REC_HEAP_FREE, seq, a, 8, 1, NULL, 0);
        win_col_leave(t);
    }
    return ok;
}

/* RtlCreateHeap and RtlDestroyHeap count as heap calls for the depth:
 * the blocks Wine's RtlCreateHeap allocates in the new heap for itself are
 * not the program's. */
static PVOID NTAPI hook_create(ULONG flags, PVOID base, SIZE_T reserve, SIZE_T commit, PVOID lock,
                               PVOID params)
{
    struct win_thread *d = heap_begin();
    PVOID h = real.create(flags, base, reserve, commit, lock, params);
    heap_end(d);
    struct win_thread *t = win_col_enter();

    if (t) {
        uint64_t a[] = {flags, U(base), reserve, commit, U(h)};
        win_col_emit(t, WIN_REC_HEAP_CREATE, 0, a, 5, 1, NULL, 0);
        win_col_leave(t);
    }
    return h;
}

static PVOID NTAPI hook_destroy(PVOID heap)
{
    struct win_thread *d = heap_begin();
    uint64_t seq = win_col_seq();
    PVOID r = real.destroy(heap);
    heap_end(d);
    struct win_thread *t = win_col_enter();

    if (t) {
        uint64_t a[] = {U(heap), U(r)};
        win_col_emit(t, WIN_REC_HEAP_DESTROY, seq, a, 2, 1, NULL, 0);
        win_col_leave(t);
    }
    return r;
}

/* *p, or 0 when p is NULL or unreadable: the kernel probes these pointers
 * and fails the call; the collector must not fault where it would not.
 * (A syscall, but only on virtual-memory calls, which are syscalls.) */
static uint64_t peek(const void *p, size_t size)
{
    uint64_t v = 0;

    if (p && !ReadProcessMemory(GetCurrentProcess(), p, &v, size, NULL))
        v = 0;
    return v;
}

static void vm_emit(unsigned kind, uint64_t seq, HANDLE proc, uint64_t base_in, uint64_t size_in,
                    ULONG type, ULONG prot, NTSTATUS_T st, PVOID *base, PSIZE_T size)
{
    struct win_thread *t = win_col_enter();

    if (t) {
        uint64_t a[] = {U(proc),
                        base_in,
                        size_in,
                        type,
                        prot,
                        (uint64_t)(uint32_t)st,
                        st >= 0 ? U(*base) : 0,
                        st >= 0 ? (uint64_t)*size : 0};
        win_col_emit(t, kind, seq, a, 8, 1, NULL, 0);
        if (kind == WIN_REC_MAP_VIEW && st >= 0) {
            MEMORY_BASIC_INFORMATION mbi;
            if (VirtualQuery(*base, &mbi, sizeof(mbi)) && mbi.Type == MEM_IMAGE)
                win_col_module_emit(t, *base, NULL);
        }
        win_col_leave(t);
    }
}

static NTSTATUS_T NTAPI hook_vm_alloc(HANDLE proc, PVOID *base, ULONG_PTR zero_bits, PSIZE_T size,
                                      ULONG type, ULONG prot)
{
    uint64_t b = peek(base, sizeof(*base)), s = peek(size, sizeof(*size));
    NTSTATUS_T st = real.vm_alloc(proc, base, zero_bits, size, type, prot);

    vm_emit(WIN_REC_VM_ALLOC, 0, proc, b, s, type, prot, st, base, size);
    return st;
}

static NTSTATUS_T NTAPI hook_vm_alloc_ex(HANDLE proc, PVOID *base, PSIZE_T size, ULONG type,
                                         ULONG prot, PVOID params, ULONG nr_params)
{
    uint64_t b = peek(base, sizeof(*base)), s = peek(size, sizeof(*size));
    NTSTATUS_T st = real.vm_alloc_ex(proc, base, size, type, prot, params, nr_params);

    vm_emit(WIN_REC_VM_ALLOC, 0, proc, b, s, type, prot, st, base, size);
    return st;
}

static NTSTATUS_T NTAPI hook_vm_free(HANDLE proc, PVOID *base, PSIZE_T size, ULONG type)
{
    uint64_t b = peek(base, sizeof(*base)), s = peek(size, sizeof(*size));
    uint64_t seq = win_col_seq();
    NTSTATUS_T st = real.vm_free(proc, base, size, type);

    vm_emit(WIN_REC_VM_FREE, seq, proc, b, s, type, 0, st, base, size);
    return st;
}

static NTSTATUS_T NTAPI hook_vm_protect(HANDLE proc, PVOID *base, PSIZE_T size, ULONG prot,
                                        PULONG old)
{
    uint64_t b = peek(base, sizeof(*base)), s = peek(size, sizeof(*size));
    NTSTATUS_T st = real.vm_protect(proc, base, size, prot, old);

    /* old PAGE_* goes where the other kinds have MEM_*: a3 */
    vm_emit(WIN_REC_VM_PROTECT, 0, proc, b, s, st >= 0 ? *old : 0, prot, st, base, size);
    return st;
}

static NTSTATUS_T NTAPI hook_map(HANDLE section, HANDLE proc, PVOID *base, ULONG_PTR zero_bits,
                                 SIZE_T commit, PLARGE_INTEGER offset, PSIZE_T size, ULONG inherit,
                                 ULONG type, ULONG prot)
{
    uint64_t s = peek(size, sizeof(*size));
    NTSTATUS_T st =
        real.map(section, proc, base, zero_bits, commit, offset, size, inherit, type, prot);

    /* a1 is the section handle here: the base asked for is rarely given */
    vm_emit(WIN_REC_MAP_VIEW, 0, proc, U(section), s, type, prot, st, base, size);
    return st;
}

static NTSTATUS_T NTAPI hook_unmap(HANDLE proc, PVOID base)
{
    uint64_t seq = win_col_seq();
    NTSTATUS_T st = real.unmap(proc, base);
    struct win_thread *t = win_col_enter();

    if (t) {
        uint64_t a[] = {U(proc), U(base), 0, 0, 0, (uint64_t)(uint32_t)st};
        win_col_emit(t, WIN_REC_UNMAP_VIEW, seq, a, 6, 1, NULL, 0);
        win_col_leave(t);
    }
    return st;
}

struct hook_spec {
    const char *name;
    void *detour;
    void **original;
    int optional; /* NtAllocateVirtualMemoryEx: Windows 10 1803 on */
};

int win_col_hooks_install(char *why, size_t why_size)
{
    const struct hook_spec specs[] = {
        {"RtlAllocateHeap", (void *)hook_alloc, (void **)&real.alloc, 0},
        {"RtlReAllocateHeap", (void *)hook_realloc, (void **)&real.realloc, 0},
        {"RtlFreeHeap", (void *)hook_free, (void **)&real.free, 0},
        {"RtlCreateHeap", (void *)hook_create, (void **)&real.create, 0},
        {"RtlDestroyHeap", (void *)hook_destroy, (void **)&real.destroy, 0},
        {"NtAllocateVirtualMemory", (void *)hook_vm_alloc, (void **)&real.vm_alloc, 0},
        {"NtAllocateVirtualMemoryEx", (void *)hook_vm_alloc_ex, (void **)&real.vm_alloc_ex, 1},
        {"NtFreeVirtualMemory", (void *)hook_vm_free, (void **)&real.vm_free, 0},
        {"NtProtectVirtualMemory", (void *)hook_vm_protect, (void **)&real.vm_protect, 0},
        {"NtMapViewOfSection", (void *)hook_map, (void **)&real.map, 0},
        {"NtUnmapViewOfSection", (void *)hook_unmap, (void **)&real.unmap, 0},
    };
    HMODULE ntdll = GetModuleHandleW(L"ntdll.dll");

    for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
        void *target = ntdll ? (void *)GetProcAddress(ntdll, specs[i].name) : NULL;
        int rc;

        if (!target) {
            if (specs[i].optional)
                continue;
            snprintf(why, why_size, "ntdll has no %s", specs[i].name);
            return -ENOENT;
        }
        rc = win_hook_install(target, specs[i].detour, specs[i].original);
        if (rc) {
            snprintf(why, why_size, "cannot hook %s: error %d", specs[i].name, -rc);
            return rc;
        }
    }
    return 0;
}
