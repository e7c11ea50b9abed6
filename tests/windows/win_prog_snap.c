/* SPDX-License-Identifier: MIT */
/* The address space at start (docs/windows.md): a region this program
 * reserves in a TLS callback, which the loader runs before the collector
 * is loaded, and the main thread's stack must be in the trace as snapshot
 * events (tests/windows/check_snap.py). It prints what it made:
 *   TLS_RESERVE <base> <size>          reserved in the TLS callback
 *   TLS_COMMIT <base> <size>           committed there, PAGE_READWRITE
 *   TLS_SMALL <base> <size>            one page reserved and committed there, kept
 *   STACK <allocation base> <address>  the main thread's stack, a local in it
 *   CALL_RESERVE <base> <size>         reserved by main: a traced call
 *   CALL_NOACCESS <base> <size>        committed there with PAGE_NOACCESS
 *   COMMIT_BIG <base> <size>           reserved and committed by commit_big()
 * and then releases the TLS region (a traced release of a snapshot region).
 * commit_big()'s region, released at the end, is the one whose commit
 * lifetime `vmem` must name by the program's own function, not by Wine's
 * VirtualAllocEx (tests/windows/run_rows.sh). */
#include <stdio.h>
#include <windows.h>

#define TLS_SIZE (0x300000 + 0x10000)
#define TLS_COMMIT_OFF 0x10000
#define TLS_COMMIT_SIZE 0x3000

static char *tls_region, *tls_small;

static void NTAPI tls_callback(PVOID module, DWORD reason, PVOID reserved)
{
    (void)module;
    (void)reserved;
    if (reason != DLL_PROCESS_ATTACH || tls_region)
        return;
    tls_region = VirtualAlloc(NULL, TLS_SIZE, MEM_RESERVE, PAGE_NOACCESS);
    if (tls_region)
        VirtualAlloc(tls_region + TLS_COMMIT_OFF, TLS_COMMIT_SIZE, MEM_COMMIT, PAGE_READWRITE);
    /* one page: the rest of its 64 KiB granule is stranded (frag) */
    tls_small = VirtualAlloc(NULL, 0x1000, MEM_RESERVE | MEM_COMMIT, PAGE_READWRITE);
}

#define BIG_SIZE (16 << 20)

/* A big region, reserved, committed and written: its commit lifetime's
 * frame of interest. */
__attribute__((noinline)) static char *commit_big(void)
{
    char *p = VirtualAlloc(NULL, BIG_SIZE, MEM_RESERVE, PAGE_NOACCESS);

    if (p && VirtualAlloc(p, BIG_SIZE, MEM_COMMIT, PAGE_READWRITE))
        for (size_t i = 0; i < BIG_SIZE; i += 4096)
            p[i] = 1;
    return p;
}

/* mingw's CRT runs the callbacks listed between __xl_a and __xl_z */
__attribute__((section(".CRT$XLB"), used)) PIMAGE_TLS_CALLBACK win_prog_snap_tls = tls_callback;

int main(void)
{
    volatile char local = 1;
    MEMORY_BASIC_INFORMATION mbi;

    if (!tls_region || !tls_small || !VirtualQuery((const void *)&local, &mbi, sizeof(mbi))) {
        printf("no TLS region or no stack\n");
        return 1;
    }
    printf("TLS_RESERVE %p %#x\n", (void *)tls_region, TLS_SIZE);
    printf("TLS_COMMIT %p %#x\n", (void *)(tls_region + TLS_COMMIT_OFF), TLS_COMMIT_SIZE);
    printf("TLS_SMALL %p %#x\n", (void *)tls_small, 0x1000);
    printf("STACK %p %p\n", mbi.AllocationBase, (void *)&local);
    void *p = VirtualAlloc(NULL, 0x20000, MEM_RESERVE, PAGE_NOACCESS);
    printf("CALL_RESERVE %p %#x\n", p, 0x20000);
    /* committed without access: committed, not reserved */
    void *c = VirtualAlloc(p, 0x2000, MEM_COMMIT, PAGE_NOACCESS);
    printf("CALL_NOACCESS %p %#x\n", c, 0x2000);
    fflush(stdout);
    /* while p is still reserved: a region of its own, not p's again */
    char *big = commit_big();
    printf("COMMIT_BIG %p %#x\n", (void *)big, BIG_SIZE);
    fflush(stdout);
    if (big)
        VirtualFree(big, 0, MEM_RELEASE);
    VirtualFree(p, 0, MEM_RELEASE);
    VirtualFree(tls_region, 0, MEM_RELEASE);
    return local - 1;
}
