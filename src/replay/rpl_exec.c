/* SPDX-License-Identifier: MIT */
/* The slot table and the heap calls themselves. Each new block gets a byte
 * written at its start (RPL_TOUCH_FIRST) or every 4096 bytes
 * (RPL_TOUCH_PAGES), as the traced program would at least have done; the
 * worker only writes, so it never reads memory it did not initialise. */
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "replay/rpl_internal.h"
#include "util/util_arch.h"

#define LOAD(p) __atomic_load_n((p), __ATOMIC_SEQ_CST)
#define STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_SEQ_CST)
#define SPINS 200
#define PAGE 4096u

/* The calls of the family that the allocator's own module does not
 * provide (jemalloc has no pvalloc or reallocarray, tcmalloc no
 * reallocarray) would reach glibc's and mix two heaps: they are made from
 * the allocator's malloc, realloc and posix_memalign instead, as their
 * manual pages define them. */
static void *emu_reallocarray(void *p, size_t n, size_t m)
{
    size_t bytes;

    if (__builtin_mul_overflow(n, m, &bytes)) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(p, bytes);
}

static void *emu_memalign(size_t align, size_t size)
{
    void *p;

    return posix_memalign(&p, align, size) ? NULL : p;
}

static void *emu_aligned_alloc(size_t align, size_t size)
{
    return emu_memalign(align, size);
}

static void *emu_valloc(size_t size)
{
    return emu_memalign((size_t)sysconf(_SC_PAGESIZE), size);
}

static void *emu_pvalloc(size_t size)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);

    return emu_memalign(page, size ? (size + page - 1) & ~(page - 1) : page);
}

static struct {
    void *(*reallocarray)(void *, size_t, size_t);
    void *(*memalign)(size_t, size_t);
    void *(*aligned_alloc)(size_t, size_t);
    void *(*valloc)(size_t);
    void *(*pvalloc)(size_t);
} fn;

/* 1 if name is defined in the module malloc comes from. */
static int own(const char *name, void **out)
{
    Dl_info a, b;
    void *sym = dlsym(RTLD_DEFAULT, name);
    void *(*m)(size_t) = malloc;

    *out = sym;
    return sym && dladdr((void *)m, &a) && dladdr(sym, &b) && a.dli_fbase == b.dli_fbase;
}

#define PICK(name, report)                                                                         \
    do {                                                                                           \
        void *sym_;                                                                                \
        if (own(#name, &sym_)) {                                                                   \
            *(void **)&fn.name = sym_;                                                             \
        } else {                                                                                   \
            fn.name = emu_##name;                                                                  \
            report(#name);                                                                         \
        }                                                                                          \
    } while (0)

void rpl_exec_init(void (*report)(const char *name))
{
    PICK(reallocarray, report);
    PICK(memalign, report);
    PICK(aligned_alloc, report);
    PICK(valloc, report);
    PICK(pvalloc, report);
}

static struct rpl_slot *slots;
static uint64_t nr_slots;
static uint32_t touch_mode;
/* RPL_TOUCH_PAGES: the bytes of live blocks with every page written may
 * not pass touch_bound (0: no bound), so that a trace of huge blocks the
 * program never filled (1,000 of 2^40 bytes) cannot make the worker fill
 * the machine's memory; a block past it gets its first byte only. */
static uint64_t touch_bound, paged_bytes;

int rpl_slots_init(uint64_t n, uint32_t touch, uint64_t bound)
{
    nr_slots = n;
    touch_mode = touch;
    touch_bound = bound;
    if (!n)
        return 0;
    slots = rpl_map(n * sizeof(*slots));
    return slots ? 0 : -ENOMEM;
}

uint64_t rpl_slots_size(void)
{
    return nr_slots * sizeof(*slots);
}

int rpl_slot_valid(uint32_t slot)
{
    return slot < nr_slots;
}

void rpl_slots_live(uint64_t *blocks, uint64_t *bytes)
{
    *blocks = *bytes = 0;
    for (uint64_t i = 0; i < nr_slots; i++) {
        if (slots[i].ptr) {
            ++*blocks;
            *bytes += slots[i].size;
        }
    }
}

/* Wait until the slot has seen seq operations: only a block another
 * thread allocates (or a slot another thread empties) is waited for. */
static int wait_turn(struct rpl_slot *s, uint32_t seq, void (*pause)(void *), void *arg)
{
    uint32_t now = LOAD(&s->seq);

    if (now == seq)
        return 0;
    pause(arg);
    for (int i = 0; i < SPINS && (now = LOAD(&s->seq)) != seq; i++)
        ms_arch_relax();
    while ((now = LOAD(&s->seq)) != seq) {
        __atomic_add_fetch(&s->waiters, 1, __ATOMIC_SEQ_CST);
        if (LOAD(&s->seq) == now)
            rpl_futex_wait(&s->seq, now);
        __atomic_sub_fetch(&s->waiters, 1, __ATOMIC_SEQ_CST);
    }
    return 1;
}

/* Write into the new block p of slot s, as touch_mode says. */
static void touch(struct rpl_slot *s, void *p, uint64_t size, struct rpl_stats *st)
{
    volatile unsigned char *c = p;

    if (!p || !size)
        return;
    if (touch_mode != RPL_TOUCH_PAGES) {
        c[0] = 1;
        return;
    }
    if (touch_bound && __atomic_add_fetch(&paged_bytes, size, __ATOMIC_RELAXED) > touch_bound) {
        __atomic_sub_fetch(&paged_bytes, size, __ATOMIC_RELAXED);
        st->partly++;
        c[0] = 1;
        return;
    }
    s->paged = 1;
    for (uint64_t off = 0; off < size; off += PAGE)
        c[off] = 1;
}

/* The slot's block is freed or replaced: it no longer counts. */
static void untouch(struct rpl_slot *s)
{
    if (s->paged)
        __atomic_sub_fetch(&paged_bytes, s->size, __ATOMIC_RELAXED);
    s->paged = 0;
}

static uint64_t product(uint64_t a, uint64_t b)
{
    uint64_t r;

    return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

void rpl_exec(const struct rpl_op *op, struct rpl_stats *st, void (*pause)(void *),
              void (*resume)(void *), void *arg)
{
    struct rpl_slot *s;
    void *p = NULL;
    uint64_t size = op->a;
    int failed;

    st->calls++;
    if (op->slot == RPL_NO_SLOT) {
        void *volatile null = NULL; /* a literal free(NULL) is folded away */

        free(null);
        return;
    }
    s = &slots[op->slot];
    if (wait_turn(s, op->seq, pause, arg)) {
        st->waits++;
        resume(arg);
    }
    switch (op->kind) {
    case RPL_OP_MALLOC:
        p = malloc(size);
        break;
    case RPL_OP_CALLOC:
        size = product(op->a, op->b);
        p = calloc(op->a, op->b);
        break;
    case RPL_OP_REALLOC:
        p = realloc(s->ptr, size);
        break;
    case RPL_OP_REALLOCARRAY:
        size = product(op->a, op->b);
        p = fn.reallocarray(s->ptr, op->a, op->b);
        break;
    case RPL_OP_FREE:
        free(s->ptr);
        size = 0;
        break;
    case RPL_OP_MEMALIGN:
        p = fn.memalign(op->b, size);
        break;
    case RPL_OP_POSIX_MEMALIGN:
        if (posix_memalign(&p, op->b, size))
            p = NULL;
        break;
    case RPL_OP_ALIGNED_ALLOC:
        p = fn.aligned_alloc(op->b, size);
        break;
    case RPL_OP_VALLOC:
        p = fn.valloc(size);
        break;
    case RPL_OP_PVALLOC:
        p = fn.pvalloc(size);
        break;
    default:
        break;
    }
    failed = op->kind != RPL_OP_FREE && !p && size;
    if (failed) {
        st->failed++;
        /* A failed realloc leaves the old block where it was. */
        if (op->kind == RPL_OP_REALLOC || op->kind == RPL_OP_REALLOCARRAY)
            p = s->ptr, size = s->size;
    } else {
        untouch(s);
        touch(s, p, size, st);
    }
    s->ptr = p;
    s->size = p ? size : 0;
    STORE(&s->seq, op->seq + 1);
    if (LOAD(&s->waiters))
        rpl_futex_wake(&s->seq);
}
