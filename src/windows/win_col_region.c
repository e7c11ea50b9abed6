/* SPDX-License-Identifier: MIT */
/* The address space when the collector starts (docs/windows-internals.md, "The
 * address space at start"): VirtualQuery from the bottom to the top of the
 * user address space, one WIN_REC_REGION per region in use, so that the
 * reservations, commits, thread stacks, heap segments and views made before
 * the hooks are in the trace. Images are left out: their MODULE records
 * stand for them, and so are Wine's reserved areas (below). */
#include "win_col_internal.h"
#include "win_hook.h"

/* The size of the allocation that starts at base: its regions together. */
static uint64_t allocation_size(const BYTE *base, uintptr_t top)
{
    MEMORY_BASIC_INFORMATION mbi;
    uintptr_t a = (uintptr_t)base;

    while (a < top && VirtualQuery((void *)a, &mbi, sizeof(mbi)) &&
           mbi.AllocationBase == (void *)base && mbi.State != MEM_FREE)
        a = (uintptr_t)mbi.BaseAddress + mbi.RegionSize;
    return a - (uintptr_t)base;
}

/* Is the allocation at base, all of it reserved (size bytes), really one?
 * Wine keeps "reserved areas" of the address space (32-bit: a gigabyte at
 * 0x20000000) from the host's own mappings and hands them to the program's
 * VirtualAllocs, yet VirtualQuery calls them MEM_RESERVE: in the trace they
 * hid every hole the program's reservations left there (a fragmented space
 * read as whole). Windows refuses a reservation inside another one
 * (STATUS_CONFLICTING_ADDRESSES); where one at its first granularity
 * boundary is granted, the range was free: it is given back at once. Runs
 * with the thread busy: the probe is not recorded. */
static int reserved_for_real(const BYTE *base, uint64_t size, DWORD granularity)
{
    uintptr_t at = ((uintptr_t)base + granularity - 1) / granularity * granularity;
    void *p;

    if (at < (uintptr_t)base || at + granularity > (uintptr_t)base + size)
        return 1;
    p = VirtualAlloc((void *)at, granularity, MEM_RESERVE, PAGE_NOACCESS);
    if (!p)
        return 1;
    VirtualFree(p, 0, MEM_RELEASE);
    return 0;
}

void win_col_regions_emit_all(struct win_thread *t, const void *shm)
{
    SYSTEM_INFO si;
    MEMORY_BASIC_INFORMATION mbi;

    GetSystemInfo(&si);
    uintptr_t a = (uintptr_t)si.lpMinimumApplicationAddress;
    uintptr_t top = (uintptr_t)si.lpMaximumApplicationAddress;
    while (a < top && VirtualQuery((void *)a, &mbi, sizeof(mbi))) {
        uintptr_t next = (uintptr_t)mbi.BaseAddress + mbi.RegionSize;
        if (mbi.State == MEM_RESERVE && mbi.BaseAddress == mbi.AllocationBase &&
            allocation_size(mbi.AllocationBase, top) == mbi.RegionSize &&
            !reserved_for_real(mbi.AllocationBase, mbi.RegionSize, si.dwAllocationGranularity)) {
            if (next <= a) /* a Wine reserved area: free for the program */
                break;
            a = next;
            continue;
        }
        if (mbi.State != MEM_FREE && mbi.Type != MEM_IMAGE) {
            const BYTE *alloc = mbi.AllocationBase;
            int own = alloc == shm || win_hook_is_pool(alloc);
            uint64_t r[8] = {(uintptr_t)alloc,
                             (uintptr_t)mbi.BaseAddress,
                             mbi.RegionSize,
                             mbi.State,
                             mbi.Protect,
                             mbi.AllocationProtect,
                             mbi.Type | (own ? WIN_REGION_COLLECTOR : 0),
                             mbi.BaseAddress == mbi.AllocationBase ? allocation_size(alloc, top)
                                                                   : 0};
            win_col_emit(t, WIN_REC_REGION, 0, r, 8, 0, NULL, 0);
        }
        if (next <= a)
            break;
        a = next;
    }
}
