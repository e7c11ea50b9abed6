// SPDX-License-Identifier: MIT
// Known call chains for the symbolizer's tests. Each case makes exactly one
// allocation of its own size (sym_cases.h); the "@sym:" comments mark the
// lines the tests expect for each frame, found in this file at test time.
// Built -O2 -g without sibling calls, so inlining is real and no frame
// vanishes into a jump.
#include <dlfcn.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sym_cases.h"

// Results go here so the compiler cannot drop an allocation.
void *volatile sym_sink[8];

// ---- static functions
static __attribute__((noinline)) void static_leaf(size_t n)
{
    sym_sink[0] = malloc(n); // @sym:static-malloc
}

static __attribute__((noinline)) void run_static(void)
{
    static_leaf(SYM_CASE_STATIC); // @sym:static-call
    sym_sink[7] = nullptr;
}

// ---- functions inlined into their caller
static inline __attribute__((always_inline)) void inl_inner(size_t n)
{
    sym_sink[1] = malloc(n); // @sym:inline-malloc
}

static inline __attribute__((always_inline)) void inl_outer(size_t n)
{
    inl_inner(n + 1); // @sym:inline-inner-call
    sym_sink[7] = nullptr;
}

static __attribute__((noinline)) void run_inline(void)
{
    inl_outer(SYM_CASE_INLINE - 1); // @sym:inline-outer-call
    sym_sink[7] = nullptr;
}

// ---- namespace, class, template, operator new[]
namespace ns {
struct Widget {
    int id;
    static char *build(int n);
};

template <typename T> __attribute__((noinline)) char *make_block(size_t n)
{
    char *p = new char[n]; // @sym:cpp-new
    sym_sink[7] = nullptr;
    return p;
}

__attribute__((noinline)) char *Widget::build(int n)
{
    char *p = make_block<Widget>((size_t)n); // @sym:cpp-make
    sym_sink[7] = nullptr;
    return p;
}
} // namespace ns

static __attribute__((noinline)) void run_cpp(void)
{
    sym_sink[2] = ns::Widget::build(SYM_CASE_CPP); // @sym:cpp-build
}

// ---- a qsort comparator: the stack passes through libc
static int compared;

static int by_value(const void *a, const void *b)
{
    if (!compared++)
        sym_sink[3] = malloc(SYM_CASE_QSORT); // @sym:qsort-malloc
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static __attribute__((noinline)) void run_qsort(void)
{
    int v[8] = {5, 3, 8, 1, 9, 2, 7, 4};

    qsort(v, 8, sizeof(v[0]), by_value); // @sym:qsort-call
    sym_sink[7] = nullptr;
}

// ---- a signal handler
static void on_signal(int)
{
    sym_sink[4] = malloc(SYM_CASE_SIGNAL); // @sym:signal-malloc
}

static __attribute__((noinline)) void run_signal(void)
{
    signal(SIGUSR1, on_signal);
    raise(SIGUSR1); // @sym:signal-raise
    sym_sink[7] = nullptr;
}

// ---- a dlopen'd library, dlclose'd before the program ends
static __attribute__((noinline)) int run_plugin(void)
{
    char path[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 32);

    if (n <= 0)
        return -1;
    path[n] = '\0';
    strcpy(strrchr(path, '/') + 1, "libsym_plugin.so");
    void *h = dlopen(path, RTLD_NOW);
    if (!h) {
        fprintf(stderr, "sym_chain: %s\n", dlerror());
        return -1;
    }
    auto alloc = (void *(*)(void))dlsym(h, "sym_plugin_alloc");
    if (!alloc)
        return -1;
    sym_sink[5] = alloc(); // @sym:plugin-main-call
    dlclose(h);
    return 0;
}

// ---- symbol table shapes: aliases, and a function with no size
extern "C" {
int __sym_alias_impl(int x)
{
    return x * 3 + 1;
}
int sym_alias(int) __attribute__((alias("__sym_alias_impl")));
int sym_alias_weak(int) __attribute__((weak, alias("__sym_alias_impl")));
void sym_asm_nosize(void);
}
asm(".text\n.globl sym_asm_nosize\n.type sym_asm_nosize,@function\n"
    "sym_asm_nosize:\n\tnop\n\tnop\n\tnop\n\tret\n");

int main(void)
{
    printf("symbol sym_alias %lx\n", (unsigned long)(void *)&sym_alias);
    printf("symbol sym_asm_nosize %lx\n", (unsigned long)(void *)&sym_asm_nosize);
    fflush(stdout);

    run_static(); // @sym:main-static
    run_inline(); // @sym:main-inline
    run_cpp(); // @sym:main-cpp
    run_qsort(); // @sym:main-qsort
    run_signal(); // @sym:main-signal
    if (run_plugin() != 0) // @sym:main-plugin
        return 1;
    delete[](char *) sym_sink[2];
    static const int malloced[] = {0, 1, 3, 4, 5};
    for (int i : malloced)
        free(sym_sink[i]);
    return 0;
}
