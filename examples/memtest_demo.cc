// SPDX-License-Identifier: MIT
// The demo program: what Windows Performance Analyzer's MemoryTestApp does
// (seed 004), on Linux. About 10 MB of steady buffers at the start and
// another 10 MB halfway; ten transient 10 MB buffers of about 100 ms each,
// evenly spaced, four of them (the last four) made by
// ManipulateTemporaryBuffer under Operation1; and InnerLoopOperation, which
// leaks one 40-byte object per iteration.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

namespace {

const size_t MB = 1000 * 1000;
const int kSpikes = 10;
const int kLeaksPerStep = 32;
const auto kSpikeLife = std::chrono::milliseconds(100);
const auto kGap = std::chrono::milliseconds(100);

struct LeakyNode {
    char payload[40];
};
static_assert(sizeof(LeakyNode) == 40, "the leak is 40 bytes");

std::vector<char *> g_steady;

// The optimizer may drop a new/delete pair whose memory never escapes
// (GCC does at -O1): this empty asm makes the buffer visible to the outside.
inline void Escape(void *p)
{
    asm volatile("" : : "g"(p) : "memory");
}

__attribute__((noinline)) char *AllocateSteadyState(size_t bytes)
{
    char *p = new char[bytes];
    memset(p, 1, bytes);  // touch it, so RSS follows
    g_steady.push_back(p);
    return p;
}

__attribute__((noinline)) void ManipulateTemporaryBuffer()
{
    char *buffer = new char[10 * MB];
    memset(buffer, 2, 10 * MB);
    Escape(buffer);
    std::this_thread::sleep_for(kSpikeLife);
    delete[] buffer;
}

__attribute__((noinline)) void Operation1()
{
    ManipulateTemporaryBuffer();
}

__attribute__((noinline)) void TransientSpike()
{
    char *buffer = new char[10 * MB];
    memset(buffer, 3, 10 * MB);
    Escape(buffer);
    std::this_thread::sleep_for(kSpikeLife);
    delete[] buffer;
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

}  // namespace

int main()
{
    AllocateSteadyState(10 * MB);
    for (int spike = 0; spike < kSpikes; spike++) {
        if (spike == kSpikes / 2)
            AllocateSteadyState(10 * MB);
        std::this_thread::sleep_for(kGap);
        if (spike >= kSpikes - 4)
            Operation1();
        else
            TransientSpike();
        InnerLoopOperation(kLeaksPerStep);
    }
    std::this_thread::sleep_for(kGap);
    std::printf("memtest_demo: %d spikes of 10 MB, 20 MB steady, %d leaked 40-byte nodes\n",
                kSpikes, kSpikes * kLeaksPerStep);
    for (char *p : g_steady)
        delete[] p;
    return 0;
}
