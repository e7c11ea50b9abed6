/* SPDX-License-Identifier: MIT */
/* Every kind of mapping a program gets: a malloc above the mmap threshold
 * (libc's own mmap and munmap), thread stacks (pthread_create), a dlopen'd
 * library (ld.so), and direct mmap, mremap, mprotect and munmap calls.
 * Prints, one per line, the mapping events it expects: "KIND ORIGIN
 * addr=0x... size=N FUNCTION", FUNCTION being the function of this program
 * that must appear in the event's stack. vm_every.sh compares. */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define BIG (64u << 20)
#define PAGE 4096u

static char expect[8192];
static size_t expect_len;

static void note(const char *kind, const char *origin, const void *addr, unsigned long size,
                 const char *fn)
{
    expect_len += (size_t)snprintf(expect + expect_len, sizeof(expect) - expect_len,
                                   "%s %s addr=%p size=%lu %s\n", kind, origin, addr, size, fn);
}

__attribute__((noinline)) static void big_alloc(void)
{
    char *p = malloc(BIG);

    p[0] = 1;
    /* glibc maps the chunk header (16 bytes) and the block, rounded up to
     * whole pages (malloc.c: sysmalloc_mmap). */
    note("mmap", "libc", p - 16, (BIG + 16 + 8 + PAGE - 1) / PAGE * PAGE, "big_alloc");
    free(p);
    note("munmap", "libc", p - 16, (BIG + 16 + 8 + PAGE - 1) / PAGE * PAGE, "big_alloc");
}

static void *worker(void *arg)
{
    pthread_attr_t a;
    void *stack;
    size_t size, guard;

    pthread_getattr_np(pthread_self(), &a);
    pthread_attr_getstack(&a, &stack, &size);
    pthread_attr_getguardsize(&a, &guard);
    pthread_attr_destroy(&a);
    /* The whole stack with its guard page below it, mapped PROT_NONE. */
    *(char **)arg = (char *)stack - guard;
    ((size_t *)arg)[1] = size + guard;
    return NULL;
}

__attribute__((noinline)) static void start_threads(void)
{
    for (int i = 0; i < 2; i++) {
        pthread_attr_t a;
        pthread_t th;
        void *out[2];

        pthread_attr_init(&a);
        pthread_attr_setstacksize(&a, (size_t)(1 + i) << 20);
        pthread_create(&th, &a, worker, out);
        pthread_join(th, NULL);
        pthread_attr_destroy(&a);
        note("mmap", "thread", out[0], (unsigned long)(size_t)out[1], "start_threads");
    }
}

static int find_lib(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    if (strstr(info->dlpi_name, "libvm_plug"))
        *(uintptr_t *)arg = info->dlpi_addr;
    return 0;
}

__attribute__((noinline)) static void load_plugin(const char *path)
{
    uintptr_t base = 0;
    void *h = dlopen(path, RTLD_NOW);

    if (!h) {
        fprintf(stderr, "vm_every: %s\n", dlerror());
        exit(1);
    }
    dl_iterate_phdr(find_lib, &base);
    /* ld.so reserves the library's whole span at its base first. */
    note("mmap", "loader", (void *)base, 0, "load_plugin");
}

__attribute__((noinline)) static void direct_calls(void)
{
    char *p = mmap(NULL, 8 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *q;

    note("mmap", "call", p, 8 * PAGE, "direct_calls");
    q = mremap(p, 8 * PAGE, 64 * PAGE, MREMAP_MAYMOVE);
    note("mremap", "call", q, 64 * PAGE, "direct_calls");
    mprotect(q, PAGE, PROT_NONE);
    note("mprotect", "call", q, PAGE, "direct_calls");
    munmap(q, 64 * PAGE);
    note("munmap", "call", q, 64 * PAGE, "direct_calls");
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: vm_every PLUGIN.so\n");
        return 2;
    }
    big_alloc();
    start_threads();
    load_plugin(argv[1]);
    direct_calls();
    fwrite(expect, 1, expect_len, stdout);
    return 0;
}
