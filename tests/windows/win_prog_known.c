/* SPDX-License-Identifier: MIT */
/* A Windows program with exactly known heap and virtual-memory calls. It
 * prints what the trace must hold, one line per call, for
 * tests/windows/check_events.py:
 *   EXPECT <lo> <hi> <KIND> key=value...   an event with these fields (pid=
 *                                         in decimal: of this process), whose
 *                                         stack has a frame in [lo, hi)
 *                                         (0 0: not checked)
 *   COUNT heap=<h> <n>                     exactly n heap events on heap h
 *   PROCESSES <n>                          n processes traced (a child)
 * Modes: (none) everything below; "crash": one allocation, then a fault;
 * "child": what the child started by child() does; "argv": print the
 * arguments as the program got them, one "ARG <text>" line each. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <windows.h>

#define NR_THREAD_ALLOCS 50

void cxx_new_delete(void);

/* [lo, hi) of the function holding fn, from its unwind entry (x86-64);
 * on x86 there is none and the frame check is skipped. */
static void fn_range(void *fn, uintptr_t *lo, uintptr_t *hi)
{
    *lo = *hi = 0;
#ifdef _WIN64
    DWORD64 base;
    PRUNTIME_FUNCTION rf = RtlLookupFunctionEntry((DWORD64)(uintptr_t)fn, &base, NULL);
    if (rf) {
        *lo = (uintptr_t)(base + rf->BeginAddress);
        *hi = (uintptr_t)(base + rf->EndAddress);
    }
#endif
}

/* Print an EXPECT line for a call made in fn. */
void expect(void *fn, const char *fmt, ...);
void expect(void *fn, const char *fmt, ...)
{
    uintptr_t lo, hi;
    va_list ap;

    fn_range(fn, &lo, &hi);
    printf("EXPECT 0x%llx 0x%llx ", (unsigned long long)lo, (unsigned long long)hi);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    /* a parent and its child may see the same heap handle and address */
    printf(" pid=%lu\n", (unsigned long)GetCurrentProcessId());
}

#define P(x) ((unsigned long long)(uintptr_t)(x))

static HANDLE heaps(void)
{
    HANDLE h1 = HeapCreate(0, 0, 0);
    HANDLE h2 = HeapCreate(0, 0x10000, 0x100000);
    void *a, *b, *c, *b2, *d, *e;

    expect(heaps, "HEAP_CREATE result=0x%llx", P(h1));
    expect(heaps, "HEAP_CREATE result=0x%llx", P(h2));
    a = HeapAlloc(h1, 0, 100);
    expect(heaps, "HEAP_ALLOC heap=0x%llx flags=0x0 size=0x64 result=0x%llx", P(h1), P(a));
    b = HeapAlloc(h1, HEAP_ZERO_MEMORY, 2000);
    expect(heaps, "HEAP_ALLOC heap=0x%llx flags=0x8 size=0x7d0 result=0x%llx", P(h1), P(b));
    c = HeapAlloc(h1, 0, 1);
    expect(heaps, "HEAP_ALLOC heap=0x%llx flags=0x0 size=0x1 result=0x%llx", P(h1), P(c));
    b2 = HeapReAlloc(h1, 0, b, 5000);
    expect(heaps, "HEAP_REALLOC heap=0x%llx flags=0x0 ptr=0x%llx size=0x1388 result=0x%llx", P(h1),
           P(b), P(b2));
    d = HeapAlloc(h2, 0, 300000); /* past the heap's block limit: its own region */
    expect(heaps, "HEAP_ALLOC heap=0x%llx flags=0x0 size=0x493e0 result=0x%llx", P(h2), P(d));
    HeapFree(h1, 0, a);
    expect(heaps, "HEAP_FREE heap=0x%llx flags=0x0 ptr=0x%llx result=0x1", P(h1), P(a));
    HeapFree(h1, 0, c);
    expect(heaps, "HEAP_FREE heap=0x%llx flags=0x0 ptr=0x%llx result=0x1", P(h1), P(c));
    HeapFree(h1, 0, b2);
    expect(heaps, "HEAP_FREE heap=0x%llx flags=0x0 ptr=0x%llx result=0x1", P(h1), P(b2));
    HeapFree(h2, 0, d);
    expect(heaps, "HEAP_FREE heap=0x%llx flags=0x0 ptr=0x%llx result=0x1", P(h2), P(d));
    /* still live when h2 is destroyed: the trace ends it with the heap */
    e = HeapAlloc(h2, 0, 64);
    expect(heaps, "HEAP_ALLOC heap=0x%llx flags=0x0 size=0x40 result=0x%llx", P(h2), P(e));
    printf("COUNT heap=0x%llx 7\n", P(h1));
    printf("COUNT heap=0x%llx 3\n", P(h2));
    /* h1 stays: a heap the program never destroys; h2 goes at the end, with e
     * (destroyed now, its handle would come back for the next heap) */
    return h2;
}

static void vmem(void)
{
    SIZE_T reserve = 0x100000;
    char *r = VirtualAlloc(NULL, reserve, MEM_RESERVE, PAGE_NOACCESS);
    char *c, *p1, *p2;
    DWORD old;

    expect(vmem,
           "VM_ALLOC base=0x0 size=0x100000 type=0x2000 protect=0x1 status=0x0 got=0x%llx "
           "got_size=0x100000",
           P(r));
    c = VirtualAlloc(r + 0x10000, 0x2000, MEM_COMMIT, PAGE_READWRITE);
    expect(vmem,
           "VM_ALLOC base=0x%llx size=0x2000 type=0x1000 protect=0x4 status=0x0 got=0x%llx "
           "got_size=0x2000",
           P(r + 0x10000), P(c));
    memset(c, 1, 0x2000);
    VirtualProtect(c, 0x1000, PAGE_READONLY, &old);
    expect(vmem,
           "VM_PROTECT base=0x%llx size=0x1000 old_protect=0x4 protect=0x2 status=0x0 "
           "got=0x%llx got_size=0x1000",
           P(c), P(c));
    VirtualFree(c, 0x2000, MEM_DECOMMIT);
    expect(vmem,
           "VM_FREE base=0x%llx size=0x2000 type=0x4000 status=0x0 got=0x%llx got_size=0x2000",
           P(c), P(c));
    VirtualFree(r, 0, MEM_RELEASE);
    expect(vmem, "VM_FREE base=0x%llx size=0x0 type=0x8000 status=0x0 got=0x%llx got_size=0x100000",
           P(r), P(r));
    /* Two 4 KiB regions: each takes a 64 KiB granule, 60 KiB of it unusable
     * (the fragmentation seed 000 hunts). */
    p1 = VirtualAlloc(NULL, 0x1000, MEM_RESERVE | MEM_COMMIT, PAGE_READWRITE);
    p2 = VirtualAlloc(NULL, 0x1000, MEM_RESERVE | MEM_COMMIT, PAGE_READWRITE);
    expect(vmem,
           "VM_ALLOC base=0x0 size=0x1000 type=0x3000 protect=0x4 status=0x0 got=0x%llx "
           "got_size=0x1000",
           P(p1));
    expect(vmem,
           "VM_ALLOC base=0x0 size=0x1000 type=0x3000 protect=0x4 status=0x0 got=0x%llx "
           "got_size=0x1000",
           P(p2));
    printf("GRANULE %s\n", ((uintptr_t)p1 | (uintptr_t)p2) & 0xffff ? "unaligned" : "aligned");
    VirtualFree(p1, 0, MEM_RELEASE);
    VirtualFree(p2, 0, MEM_RELEASE);
    expect(vmem, "VM_FREE base=0x%llx size=0x0 type=0x8000 status=0x0 got=0x%llx got_size=0x1000",
           P(p1), P(p1));
    expect(vmem, "VM_FREE base=0x%llx size=0x0 type=0x8000 status=0x0 got=0x%llx got_size=0x1000",
           P(p2), P(p2));
}

static HANDLE thread_heap;

static DWORD WINAPI thread_main(void *arg)
{
    void *p[NR_THREAD_ALLOCS];
    char line[NR_THREAD_ALLOCS * 2][160];
    uintptr_t lo, hi;

    /* Lines are printed after the calls: stdio may allocate, on another heap */
    fn_range(thread_main, &lo, &hi);
    for (int i = 0; i < NR_THREAD_ALLOCS; i++) {
        p[i] = HeapAlloc(thread_heap, 0, 24 + i);
        snprintf(line[i], sizeof(line[i]),
                 "EXPECT 0x%llx 0x%llx HEAP_ALLOC heap=0x%llx flags=0x0 size=0x%x result=0x%llx "
                 "pid=%lu",
                 P(lo), P(hi), P(thread_heap), 24 + i, P(p[i]),
                 (unsigned long)GetCurrentProcessId());
    }
    for (int i = 0; i < NR_THREAD_ALLOCS; i++) {
        HeapFree(thread_heap, 0, p[i]);
        snprintf(
            line[NR_THREAD_ALLOCS + i], sizeof(line[0]),
            "EXPECT 0x%llx 0x%llx HEAP_FREE heap=0x%llx flags=0x0 ptr=0x%llx result=0x1 pid=%lu",
            P(lo), P(hi), P(thread_heap), P(p[i]), (unsigned long)GetCurrentProcessId());
    }
    for (int i = 0; i < 2 * NR_THREAD_ALLOCS; i++)
        puts(line[i]);
    return 0;
}

static void threads(void)
{
    HANDLE th[2];

    thread_heap = HeapCreate(0, 0, 0);
    for (int i = 0; i < 2; i++)
        th[i] = CreateThread(NULL, 0, thread_main, NULL, 0, NULL);
    WaitForMultipleObjects(2, th, TRUE, INFINITE);
    printf("COUNT heap=0x%llx %d\n", P(thread_heap), 2 * 2 * NR_THREAD_ALLOCS);
}

/* The child: one allocation of a size nothing else asks for. */
static void child_work(void)
{
    void *p = HeapAlloc(GetProcessHeap(), 0, 0x1234);

    expect(child_work, "HEAP_ALLOC heap=0x%llx flags=0x0 size=0x1234 result=0x%llx",
           P(GetProcessHeap()), P(p));
    HeapFree(GetProcessHeap(), 0, p);
    expect(child_work, "HEAP_FREE heap=0x%llx flags=0x0 ptr=0x%llx result=0x1", P(GetProcessHeap()),
           P(p));
}

/* Start this program again as "child" and wait for it. */
static void child(void)
{
    WCHAR self[MAX_PATH], cmd[MAX_PATH + 16];
    STARTUPINFOW si = {.cb = sizeof(si)};
    PROCESS_INFORMATION pi;

    GetModuleFileNameW(NULL, self, MAX_PATH);
    _snwprintf(cmd, MAX_PATH + 16, L"\"%ls\" child", self);
    cmd[MAX_PATH + 15] = 0;
    fflush(stdout);
    if (!CreateProcessW(NULL, cmd, NULL, NULL, TRUE, 0, NULL, NULL, &si, &pi)) {
        printf("CreateProcessW failed: %lu\n", GetLastError());
        return;
    }
    WaitForSingleObject(pi.hProcess, INFINITE);
    printf("PROCESSES 2\n");
}

static LONG WINAPI die_quietly(EXCEPTION_POINTERS *ep)
{
    return EXCEPTION_EXECUTE_HANDLER;
}

static void crash(void)
{
    void *p = HeapAlloc(GetProcessHeap(), 0, 777);

    expect(crash, "HEAP_ALLOC heap=0x%llx flags=0x0 size=0x309 result=0x%llx", P(GetProcessHeap()),
           P(p));
    fflush(stdout);
    /* No crash debugger: Wine would start winedbg as a child (traced too);
     * the process ends with the fault's status all the same. */
    SetUnhandledExceptionFilter(die_quietly);
    *(volatile int *)(uintptr_t)8 = 1;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOFBF, 1 << 16);
    if (argc > 1 && strcmp(argv[1], "crash") == 0) {
        crash();
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "argv") == 0) {
        for (int i = 2; i < argc; i++)
            printf("ARG %s\n", argv[i]);
        fflush(stdout);
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "child") == 0) {
        child_work();
        fflush(stdout);
        return 0;
    }
    HANDLE h2 = heaps();
    vmem();
    cxx_new_delete();
    threads();
    child();
    HeapDestroy(h2);
    expect(main, "HEAP_DESTROY heap=0x%llx result=0x0", P(h2));
    fflush(stdout);
    return 7;
}
