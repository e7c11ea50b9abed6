// SPDX-License-Identifier: MIT
// The demo program on Windows: WPA's MemoryTestApp (seed 004) with the
// timeline of examples/memtest_demo.cc. The 10 MB buffers come straight
// from VirtualAlloc (committed and reserved in one call, released with
// VirtualFree), as in the WPA exercise: about 10 MB steady at the start and
// another 10 MB halfway; ten transient 10 MB buffers of about 100 ms each,
// evenly spaced, the last four made by ManipulateTemporaryBuffer under
// Operation1. InnerLoopOperation leaks one 40-byte object (C++ new, which
// ends in HeapAlloc) per iteration, 320 in all. Built with mingw-w64 by
// src/windows/cross; traced under Wine by tests/windows/run_demo.sh.
#include <windows.h>

#include <cstdio>
#include <cstring>

namespace
{

const size_t MB = 1000 * 1000;
const int kSpikes = 10;
const int kLeaksPerStep = 32;
const DWORD kSpikeLifeMs = 100;
const DWORD kGapMs = 100;

struct LeakyNode {
    char payload[40];
};
static_assert(sizeof(LeakyNode) == 40, "the leak is 40 bytes");

char *g_steady[2];
int g_nr_steady;

// The optimizer may drop a new/delete pair whose memory never escapes:
// this empty asm makes the buffer visible to the outside.
inline void Escape(void *p)
{
    asm volatile("" : : "g"(p) : "memory");
}

char *Buffer(size_t bytes)
{
    void *p = VirtualAlloc(nullptr, bytes, MEM_COMMIT | MEM_RESERVE, PAGE_READWRITE);
    if (!p) {
        std::fprintf(stderr, "memtest_demo_win: VirtualAlloc failed: %lu\n", GetLastError());
        ExitProcess(1);
    }
    return static_cast<char *>(p);
}

__attribute__((noinline)) char *AllocateSteadyState(size_t bytes)
{
    char *p = Buffer(bytes);
    memset(p, 1, bytes); // touch it, so the working set follows
    g_steady[g_nr_steady++] = p;
    return p;
}

__attribute__((noinline)) void ManipulateTemporaryBuffer()
{
    char *buffer = Buffer(10 * MB);
    memset(buffer, 2, 10 * MB);
    Escape(buffer);
    Sleep(kSpikeLifeMs);
    VirtualFree(buffer, 0, MEM_RELEASE);
}

__attribute__((noinline)) void Operation1()
{
    ManipulateTemporaryBuffer();
}

__attribute__((noinline)) void TransientSpike()
{
    char *buffer = Buffer(10 * MB);
    memset(buffer, 3, 10 * MB);
    Escape(buffer);
    Sleep(kSpikeLifeMs);
    VirtualFree(buffer, 0, MEM_RELEASE);
}

__attribute__((noinline)) void InnerLoopOperation(int n)
{
    for (int i = 0; i < n; i++) {
        LeakyNode *node = new LeakyNode;
        memset(node->payload, i, sizeof(node->payload));
        Escape(node);
        // Never deleted: the leak the reports must find.
    }
}

} // namespace

int main()
{
    AllocateSteadyState(10 * MB);
    for (int spike = 0; spike < kSpikes; spike++) {
        if (spike == kSpikes / 2)
            AllocateSteadyState(10 * MB);
        Sleep(kGapMs);
        if (spike >= kSpikes - 4)
            Operation1();
        else
            TransientSpike();
        InnerLoopOperation(kLeaksPerStep);
    }
    Sleep(kGapMs);
    std::printf("memtest_demo_win: %d spikes of 10 MB, 20 MB steady, %d leaked 40-byte nodes\n",
                kSpikes, kSpikes * kLeaksPerStep);
    for (int i = 0; i < g_nr_steady; i++)
        VirtualFree(g_steady[i], 0, MEM_RELEASE);
    return 0;
}
