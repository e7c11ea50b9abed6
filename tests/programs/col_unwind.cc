// SPDX-License-Identifier: MIT
// Stacks the collector's unwinder must get exactly right (run under
// MEMSCRIBE_UNWIND=verify, which compares every walk with libunwind's):
// C++ exceptions thrown through frames that allocate, setjmp/longjmp and
// sigsetjmp/siglongjmp out of allocating frames (so the next walk starts
// where the last one's outer part is gone), allocations in a signal
// handler running on an alternate stack, recursion deeper than the walks'
// maximum, one frame at the same place from two callers, and 8 threads
// doing all of it, each thread ROUNDS times (argument 1, default 200;
// fewer where every step is emulated).
// Prints the number of allocations it made.
#include <atomic>
#include <csetjmp>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <pthread.h>
#include <stdexcept>
#include <string>
#include <sys/time.h>
#include <unistd.h>
#include <vector>

static std::atomic<long> nr_allocs{0};

static __attribute__((noinline)) void *alloc(size_t n)
{
    void *p = malloc(n);
    nr_allocs++;
    __asm__ volatile("" ::"r"(p) : "memory");
    return p;
}

// Exceptions: each level allocates (a std::string and a raw block), the
// innermost throws, a level in the middle catches and rethrows.
static __attribute__((noinline)) int thrower(int depth, int seed)
{
    std::string s(40 + depth, 'x');
    void *p = alloc(16 + (size_t)depth);
    nr_allocs++; // the string's buffer
    if (depth == 0) {
        free(p);
        throw std::runtime_error("depth 0 of " + std::to_string(seed));
    }
    int r;
    try {
        r = thrower(depth - 1, seed) + 1;
    } catch (const std::runtime_error &) {
        free(p);
        if (depth % 3 == 0)
            throw;
        return depth;
    }
    free(p);
    return r + (int)s.size();
}

static thread_local jmp_buf jb;
static thread_local sigjmp_buf sjb;

static __attribute__((noinline)) void jumper(int depth, bool sig)
{
    void *p = alloc(24 + (size_t)depth);
    free(p);
    if (depth == 0) {
        if (sig)
            siglongjmp(sjb, 1);
        longjmp(jb, 1);
    }
    jumper(depth - 1, sig);
    free(alloc(8));
}

// Deep stacks, past the collector's maximum (--depth 64 keeps 68 frames a
// walk): each level allocates on the way down and on the way up, from one
// of two call sites, so that consecutive walks are cut at the maximum at
// different frames, take the last walk's frames past it or fall short of
// it.
static __attribute__((noinline)) void diver(int depth, unsigned seed);

static __attribute__((noinline)) void diver_b(int depth, unsigned seed)
{
    void *p = alloc(40);
    diver(depth - 1, seed * 1103515245u + 12345u);
    free(p);
}

static __attribute__((noinline)) void diver(int depth, unsigned seed)
{
    free(alloc(8 + (size_t)(seed & 63)));
    if (depth <= 0)
        return;
    if (seed & 0x100)
        diver_b(depth, seed);
    else
        diver(depth - 1, seed * 1103515245u + 12345u);
    free(alloc(16));
}

// The same frame at the same place from two callers: leaf() is called by
// via_a() and via_b(), whose frames are the same size, from the same depth,
// and allocates through one of two paths. After a walk through via_a() and
// one path, one through via_a() and the other takes leaf() and what is
// outside it; the next, through via_b(), meets that leaf() at the same ip
// and sp, and only the slot holding leaf()'s return address tells that the
// frame outside it is another.
static volatile int sink;

static __attribute__((noinline)) void *detour(void)
{
    void *p = alloc(32);
    sink = sink + 3;
    return p;
}

static __attribute__((noinline)) void *pick(int k)
{
    if (k & 1)
        return detour();
    return alloc(24);
}

static __attribute__((noinline)) void leaf(int k)
{
    free(pick(k));
    sink = k;
}

static __attribute__((noinline)) void via_a(int k)
{
    leaf(k);
    sink = sink + 1;
}

static __attribute__((noinline)) void via_b(int k)
{
    leaf(k);
    sink = sink + 2;
}

static volatile sig_atomic_t handled;
static int rounds = 200;
static const int nr_signals = 60; // 20 raised, the rest from a timer

static void on_alarm(int)
{
    // Once all are counted, a timer's late one (before main disarms it)
    // allocates nothing: the number of allocations is not the machine's.
    if (handled >= nr_signals)
        return;
    // On the alternate stack: malloc is not async-signal-safe in general,
    // but the interrupted code here is a loop that does not allocate.
    free(alloc(100));
    handled = handled + 1;
}

static __attribute__((noinline)) void spin_until(int n)
{
    while (handled < n)
        __asm__ volatile("" ::: "memory");
}

static void *worker(void *arg)
{
    int id = (int)(long)arg;

    for (int i = 0; i < rounds; i++) {
        try {
            thrower(i % 7, id);
        } catch (const std::exception &) {
            free(alloc(32));
        }
        if (setjmp(jb) == 0)
            jumper(i % 5, false);
        else
            free(alloc(48));
        if (sigsetjmp(sjb, 1) == 0)
            jumper(i % 6, true);
        diver(20 + i % 130, (unsigned)(i * 7 + id));
        for (int k = 0; k < 8; k++)
            ((k >> 1) & 1 ? via_b : via_a)(k);
        std::vector<int> v((size_t)(i + 1));
        nr_allocs++;
        free(alloc(v.size()));
    }
    return nullptr;
}

int main(int argc, char **argv)
{
    static char altstack[1 << 16];
    stack_t ss = {};
    struct sigaction sa = {};
    pthread_t th[8];

    if (argc > 1 && (rounds = atoi(argv[1])) < 1)
        return fprintf(stderr, "usage: col_unwind [ROUNDS >= 1]\n"), 2;

    ss.ss_sp = altstack;
    ss.ss_size = sizeof(altstack);
    if (sigaltstack(&ss, nullptr) != 0)
        return perror("sigaltstack"), 1;
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_ONSTACK;
    sigaction(SIGALRM, &sa, nullptr);
    for (int i = 1; i <= 20; i++) {
        raise(SIGALRM);
        spin_until(i);
    }
    // A timer interrupting a loop: the walk from the handler crosses the
    // signal frame into an instruction that is not a call's return.
    struct itimerval it = {{0, 2000}, {0, 2000}};
    setitimer(ITIMER_REAL, &it, nullptr);
    spin_until(nr_signals);
    it = {};
    setitimer(ITIMER_REAL, &it, nullptr);
    worker(nullptr);
    for (long i = 0; i < 8; i++)
        pthread_create(&th[i], nullptr, worker, (void *)i);
    for (int i = 0; i < 8; i++)
        pthread_join(th[i], nullptr);
    printf("allocations: %ld, signals handled: %d\n", nr_allocs.load(), (int)handled);
    return 0;
}
