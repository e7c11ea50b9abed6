/* SPDX-License-Identifier: MIT */
/* Inline hooks: trampoline pages near the target, and the patch written so
 * that a thread entering the function sees old bytes or new, never a mix. */
#include "win_hook.h"

#include "win_hook_reloc.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <windows.h>

#define WIN_POOL_SIZE 0x10000 /* one allocation granule */
#define WIN_MAX_POOLS 8
#define WIN_REACH 0x7fff0000ull /* a rel32 reaches +-2 GiB; keep a granule spare */

struct win_pool {
    uint8_t *base;
    size_t used;
};

static struct win_pool pools[WIN_MAX_POOLS];
static unsigned nr_pools;

static int in_reach(uintptr_t a, uintptr_t b)
{
    uint64_t d = a > b ? a - b : b - a;
    return sizeof(void *) == 4 || d < WIN_REACH - WIN_POOL_SIZE;
}

/* A free granule within reach of target, reserved and committed RWX. */
static uint8_t *pool_alloc_near(uintptr_t target)
{
    SYSTEM_INFO si;
    uintptr_t lo, hi, gran;

    GetSystemInfo(&si);
    gran = si.dwAllocationGranularity;
    lo = (uintptr_t)si.lpMinimumApplicationAddress;
    hi = (uintptr_t)si.lpMaximumApplicationAddress;
    if (sizeof(void *) == 8) {
        if (target > lo + WIN_REACH)
            lo = target - WIN_REACH;
        if (target < hi - WIN_REACH)
            hi = target + WIN_REACH;
    }
    /* Below the target first (the usual free space under system DLLs), then above. */
    for (int dir = -1; dir <= 1; dir += 2) {
        uintptr_t a = (target & ~(gran - 1)) + (dir < 0 ? -gran : gran);
        while (a >= lo && a + WIN_POOL_SIZE <= hi) {
            MEMORY_BASIC_INFORMATION mbi;

            if (!VirtualQuery((void *)a, &mbi, sizeof(mbi)))
                break;
            if (mbi.State == MEM_FREE) {
                void *p = VirtualAlloc((void *)a, WIN_POOL_SIZE, MEM_RESERVE | MEM_COMMIT,
                                       PAGE_EXECUTE_READWRITE);
                if (p)
                    return p;
            }
            if (dir < 0 && mbi.State == MEM_FREE)
                a -= gran;
            else if (dir < 0)
                a = ((uintptr_t)mbi.AllocationBase & ~(gran - 1)) - gran;
            else
                a = ((uintptr_t)mbi.BaseAddress + mbi.RegionSize + gran - 1) & ~(gran - 1);
            if (a == 0)
                break;
        }
    }
    return NULL;
}

int win_hook_is_pool(const void *base)
{
    for (unsigned i = 0; i < nr_pools; i++)
        if (pools[i].base == base)
            return 1;
    return 0;
}

/* n bytes of executable memory within reach of target. */
static uint8_t *slot_alloc(uintptr_t target, size_t n)
{
    for (unsigned i = 0; i < nr_pools; i++)
        if (in_reach((uintptr_t)pools[i].base, target) && pools[i].used + n <= WIN_POOL_SIZE) {
            uint8_t *p = pools[i].base + pools[i].used;
            pools[i].used += (n + 15) & ~(size_t)15;
            return p;
        }
    if (nr_pools == WIN_MAX_POOLS)
        return NULL;
    uint8_t *base = pool_alloc_near(target);
    if (!base)
        return NULL;
    pools[nr_pools++] = (struct win_pool){.base = base, .used = 0};
    return slot_alloc(target, n);
}

/* Replace n bytes at p (all inside one aligned 8-byte word) with one locked
 * compare-exchange, so that no thread fetches a torn instruction. */
static void cas_in_word(uint8_t *p, const uint8_t *bytes, size_t n)
{
    volatile int64_t *word = (volatile int64_t *)((uintptr_t)p & ~(uintptr_t)7);
    size_t off = (uintptr_t)p & 7;
    int64_t old, neu;

    do {
        old = *word;
        neu = old;
        memcpy((uint8_t *)&neu + off, bytes, n);
    } while (InterlockedCompareExchange64(word, neu, old) != old);
}

/* Write the patch: in one word when it fits; otherwise park callers on a
 * 2-byte self-jump, write the tail, then replace the self-jump. */
static void patch_write(uint8_t *p, const uint8_t *bytes, size_t n)
{
    static const uint8_t spin[2] = {0xeb, 0xfe};
    size_t off = (uintptr_t)p & 7;

    if (off + n <= 8) {
        cas_in_word(p, bytes, n);
    } else if (off <= 6) {
        cas_in_word(p, spin, 2);
        memcpy(p + 2, bytes + 2, n - 2);
        MemoryBarrier();
        cas_in_word(p, bytes, 2);
    } else {
        /* The first two bytes straddle a word: no single locked write holds them. */
        memcpy(p, bytes, n);
    }
    FlushInstructionCache(GetCurrentProcess(), p, n);
}

int win_hook_install(void *target, void *detour, void **original)
{
    const int mode64 = sizeof(void *) == 8;
    const size_t relay_len = mode64 ? WIN_HOOK_JMPABS_LEN : 0;
    uint8_t patch[WIN_HOOK_JMP_LEN + 16];
    struct win_reloc r;
    DWORD old_prot;
    uint8_t *slot, *tramp, *jump_to;
    int rc;

    slot = slot_alloc((uintptr_t)target, relay_len + WIN_HOOK_TRAMP_MAX);
    if (!slot)
        return -ENOMEM;
    tramp = slot + relay_len;
    /* The decoder reads at most 15 bytes per instruction past min_len;
     * prologues are at the start of mapped code pages, so 32 bytes are there. */
    rc = win_hook_relocate(target, 32, (uintptr_t)target, mode64, WIN_HOOK_JMP_LEN, tramp,
                           WIN_HOOK_TRAMP_MAX, (uintptr_t)tramp, &r);
    if (rc)
        return rc;
    if (mode64) {
        win_hook_jmpabs(slot, (uintptr_t)detour);
        jump_to = slot;
    } else {
        jump_to = detour;
    }
    if (r.stolen_len > sizeof(patch))
        return -EINVAL;
    if (win_hook_jmp32(patch, (uintptr_t)target, (uintptr_t)jump_to) != 0 && mode64)
        return -ERANGE;
    memset(patch + WIN_HOOK_JMP_LEN, 0xcc, r.stolen_len - WIN_HOOK_JMP_LEN);
    FlushInstructionCache(GetCurrentProcess(), slot, relay_len + r.tramp_len);
    *original = tramp;
    MemoryBarrier();

    if (!VirtualProtect(target, r.stolen_len, PAGE_EXECUTE_READWRITE, &old_prot))
        return -EACCES;
    patch_write(target, patch, r.stolen_len);
    VirtualProtect(target, r.stolen_len, old_prot, &old_prot);
    return 0;
}
