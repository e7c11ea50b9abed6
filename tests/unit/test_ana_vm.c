/* SPDX-License-Identifier: MIT */
/* The address-space model (ana_vm) and fragmentation (ana_frag) on
 * synthetic events: pieces cut as the kernel cuts mappings, reserved /
 * committed / charge totals, commit lifetimes with their times and stacks,
 * mremap, brk and sbrk, the collector's own mappings, holes, the largest
 * gap, misaligned mappings with stranded bytes, occupants; the one replay
 * (ana_vm_replay) and what it tells its consumer, in order. Exact numbers. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <cmocka.h>

#include "analysis/core/ana_ticks.h"
#include "analysis/pictures/ana_frag_svg.h"
#include "analysis/vm/ana_frag.h"
#include "analysis/vm/ana_vm.h"
#include "analysis/vm/ana_vm_replay.h"
#include "analysis/vm/ana_vm_window.h"

#define K 1024ull
#define M (1024ull * 1024)

struct lives {
    struct ana_vm_lifetime v[64];
    int n;
};

static int keep(void *arg, const struct ana_vm_lifetime *l)
{
    struct lives *ls = arg;

    assert_true(ls->n < 64);
    ls->v[ls->n++] = *l;
    return 0;
}

static struct fmt_event ev(uint16_t kind, uint64_t ts, uint64_t addr, uint64_t size, uint32_t stack)
{
    struct fmt_event e;

    memset(&e, 0, sizeof(e));
    e.kind = kind;
    e.ts_ns = ts;
    e.addr = addr;
    e.size = size;
    e.stack = stack;
    return e;
}

static void do_mmap(struct ana_vm *vm, uint64_t ts, uint64_t addr, uint64_t size, int prot,
                    int flags, uint32_t stack)
{
    struct fmt_event e = ev(FMT_EV_MMAP, ts, addr, size, stack);

    e.arg[0] = (uint64_t)prot;
    e.arg[1] = (uint64_t)flags;
    assert_int_equal(ana_vm_event(vm, &e), 0);
}

static void do_protect(struct ana_vm *vm, uint64_t ts, uint64_t addr, uint64_t size, int prot,
                       uint32_t stack)
{
    struct fmt_event e = ev(FMT_EV_MPROTECT, ts, addr, size, stack);

    e.arg[0] = (uint64_t)prot;
    assert_int_equal(ana_vm_event(vm, &e), 0);
}

static void do_unmap(struct ana_vm *vm, uint64_t ts, uint64_t addr, uint64_t size, uint32_t stack)
{
    struct fmt_event e = ev(FMT_EV_MUNMAP, ts, addr, size, stack);

    assert_int_equal(ana_vm_event(vm, &e), 0);
}

#define ANON (MAP_PRIVATE | MAP_ANONYMOUS)
#define RW (PROT_READ | PROT_WRITE)
#define BASE 0x7f0000000000ull

/* 1 GiB reserved, two parts committed, one decommitted, all unmapped. */
static void test_reserve_commit(void **state)
{
    struct lives ls = {0};
    struct ana_vm vm;
    const struct ana_vm_image *im;

    (void)state;
    ana_vm_init(&vm, keep, &ls);
    do_mmap(&vm, 10, BASE, 1024 * M, PROT_NONE, ANON | MAP_NORESERVE, 1);
    im = ana_vm_get(&vm, 0);
    assert_int_equal(im->reserved, 1024 * M);
    assert_int_equal(im->committed, 0);
    assert_int_equal(ls.n, 0);

    do_protect(&vm, 20, BASE + 1 * M, 2 * M, RW, 2);
    do_protect(&vm, 30, BASE + 100 * M, 8 * M, RW, 3);
    assert_int_equal(im->committed, 10 * M);
    assert_int_equal(im->charge, 10 * M);
    assert_int_equal(im->reserved, 1014 * M);
    assert_int_equal(im->nr, 5); /* none, rw, none, rw, none */

    do_protect(&vm, 40, BASE + 1 * M, 2 * M, PROT_NONE, 4);
    assert_int_equal(ls.n, 1);
    assert_int_equal(ls.v[0].lo, BASE + 1 * M);
    assert_int_equal(ls.v[0].hi, BASE + 3 * M);
    assert_int_equal(ls.v[0].commit_ns, 20);
    assert_int_equal(ls.v[0].decommit_ns, 40);
    assert_int_equal(ls.v[0].commit_stack, 2);
    assert_int_equal(ls.v[0].decommit_stack, 4);
    assert_true(ls.v[0].charge);
    assert_int_equal(im->committed, 8 * M);

    do_unmap(&vm, 50, BASE, 1024 * M, 5);
    assert_int_equal(ls.n, 2);
    assert_int_equal(ls.v[1].lo, BASE + 100 * M);
    assert_int_equal(ls.v[1].hi, BASE + 108 * M);
    assert_int_equal(ls.v[1].commit_ns, 30);
    assert_int_equal(ls.v[1].decommit_ns, 50);
    assert_int_equal(ls.v[1].commit_stack, 3);
    assert_int_equal(im->nr, 0);
    assert_int_equal(im->mapped, 0);
    assert_int_equal(im->reserved, 0);
    assert_int_equal(im->committed, 0);
    assert_int_equal(ana_vm_finish(&vm), 0);
    assert_int_equal(ls.n, 2);
    ana_vm_release(&vm);
}

static void window_event(struct ana_vm_window *w, struct fmt_event e, int prot, int flags)
{
    e.arg[0] = (uint64_t)prot;
    e.arg[1] = (uint64_t)flags;
    assert_int_equal(ana_vm_replay_event(&w->replay, &e), 0);
}

/* Commit lifetimes in the window [25, 45]: one committed before and ended
 * inside (AOFI, -2 MiB), one committed inside and open at the end (AIFO,
 * +8 MiB), one inside and out (AIFI, 0), one ended before the window (not
 * kept); groups by key and Impacting Type, largest |impacting| first;
 * totals at 35 and 45; the committed peak inside the window. */
static void test_window(void **state)
{
    struct ana_vm_window w;
    struct ana_vm_group *g;
    long ng;

    (void)state;
    memset(&w, 0, sizeof(w));
    w.replay.t0 = 25;
    w.replay.t1 = 45;
    w.origins = ~0u;
    w.replay.nr_intervals = 2;
    ana_vm_window_init(&w);
    window_event(&w, ev(FMT_EV_MMAP, 10, BASE, 1024 * M, 0), PROT_NONE, ANON | MAP_NORESERVE);
    window_event(&w, ev(FMT_EV_MPROTECT, 12, BASE + 200 * M, 1 * M, 5), RW, 0);
    window_event(&w, ev(FMT_EV_MPROTECT, 15, BASE + 200 * M, 1 * M, 6), PROT_NONE, 0);
    window_event(&w, ev(FMT_EV_MPROTECT, 20, BASE + 1 * M, 2 * M, 2), RW, 0);
    window_event(&w, ev(FMT_EV_MPROTECT, 30, BASE + 100 * M, 8 * M, 3), RW, 0);
    window_event(&w, ev(FMT_EV_MPROTECT, 32, BASE + 300 * M, 4 * M, 3), RW, 0);
    window_event(&w, ev(FMT_EV_MPROTECT, 38, BASE + 300 * M, 4 * M, 4), PROT_NONE, 0);
    window_event(&w, ev(FMT_EV_MPROTECT, 40, BASE + 1 * M, 2 * M, 4), PROT_NONE, 0);
    assert_int_equal(ana_vm_replay_finish(&w.replay), 0);

    assert_int_equal(w.peak_committed, 14 * M);
    assert_int_equal(w.peak_ns, 32);
    assert_int_equal(w.nr_samples, 2);
    assert_int_equal(w.samples[0].ts, 35);
    assert_int_equal(w.samples[0].committed, 14 * M);
    assert_int_equal(w.samples[0].reserved, 1010 * M);
    assert_int_equal(w.samples[1].ts, 45);
    assert_int_equal(w.samples[1].committed, 8 * M);

    assert_int_equal(w.nr, 3);
    assert_int_equal(w.images[0].nr[ANA_AIFI], 1);
    assert_int_equal(w.images[0].bytes[ANA_AIFI], 4 * M);
    assert_int_equal(w.images[0].bytes[ANA_AIFO], 8 * M);
    assert_int_equal(w.images[0].bytes[ANA_AOFI], 2 * M);
    assert_int_equal(w.images[0].nr[ANA_AOFO], 0);
    for (size_t i = 0; i < w.nr; i++)
        w.v[i].key = w.v[i].l.commit_stack;
    ng = ana_vm_window_groups(&w, &g);
    assert_int_equal(ng, 3);
    /* key 3 Impacting: the open 8 MiB (AIFO) */
    assert_int_equal(g[0].key, 3);
    assert_false(g[0].transient);
    assert_int_equal(g[0].count, 1);
    assert_int_equal(g[0].size, 8 * M);
    assert_int_equal(g[0].impacting, (int64_t)(8 * M));
    assert_int_equal(w.v[g[0].first].l.commit_ns, 30);
    assert_true(w.v[g[0].first].l.open);
    /* key 2 Impacting: the 2 MiB committed before (AOFI): nothing
     * committed inside */
    assert_int_equal(g[1].key, 2);
    assert_false(g[1].transient);
    assert_int_equal(g[1].count, 1);
    assert_int_equal(g[1].size, 0);
    assert_int_equal(g[1].impacting, -(int64_t)(2 * M));
    /* key 3 Transient: the 4 MiB in and out (AIFI) */
    assert_int_equal(g[2].key, 3);
    assert_true(g[2].transient);
    assert_int_equal(g[2].count, 1);
    assert_int_equal(g[2].size, 4 * M);
    assert_int_equal(g[2].impacting, 0);
    assert_int_equal(w.v[g[2].first].l.commit_ns, 32);
    assert_int_equal(w.v[g[2].first].cls, ANA_AIFI);
    free(g);
    ana_vm_window_release(&w);
}

/* WPA's classes of commit lifetimes, as `window` classifies heap blocks
 * (commit = allocation, decommit or release = free), on a hand-made
 * sequence whose every lifetime's class is known, the window's edges
 * included (both ends are inside): [100, 200].
 *   stack 1: committed 10, released 50            before: not in the window
 *   stack 1: committed 10, released 100           AOFI (ends at t0)
 *   stack 2: committed 90, decommitted 150        AOFI
 *   stack 2: committed 99, open                   AOFO
 *   stack 3: committed 100, decommitted 200       AIFI (both edges)
 *   stack 3: committed 120, decommitted 130       AIFI
 *   stack 4: committed 150, decommitted 201       AIFO (ends after t1)
 *   stack 4: committed 200, open                  AIFO (starts at t1)
 *   stack 5: committed 201, open                  after: not in the window
 *   stack 6: committed 50, released 250           AOFO
 * A lifetime cut in two by a decommit of its middle ends as three rows,
 * each classed by its own end: stack 7 commits 3 pages at 110, the middle
 * one is decommitted at 120 (AIFI), the others stay (AIFO, AIFO). Every
 * lifetime is checked against ana_wpa_class_of, and the groups' counts,
 * sizes and impacting sizes against sums over the classes. */
static void test_window_classes(void **state)
{
    static const struct {
        uint64_t commit, end; /* end 0: open */
        uint32_t stack;
        int cls;
    } want[] = {
        {10, 100, 1, ANA_AOFI},  {90, 150, 2, ANA_AOFI},  {99, 0, 2, ANA_AOFO},
        {100, 200, 3, ANA_AIFI}, {120, 130, 3, ANA_AIFI}, {150, 201, 4, ANA_AIFO},
        {200, 0, 4, ANA_AIFO},   {50, 250, 6, ANA_AOFO},
    };
    struct ana_vm_window w;
    struct ana_vm_group *g;
    struct ana_wpa by_key[8][2]; /* [stack][transient] */
    uint64_t a = BASE;
    long ng;

    (void)state;
    memset(by_key, 0, sizeof(by_key));
    memset(&w, 0, sizeof(w));
    w.replay.t0 = 100;
    w.replay.t1 = 200;
    w.origins = ~0u;
    ana_vm_window_init(&w);
    /* A lifetime per 64 KiB slot, committed by mmap and ended by munmap
     * (stack 1) or mprotect PROT_NONE (the others), in time order. */
    struct {
        uint64_t ts, addr, size;
        int kind; /* 0 commit, 1 unmap, 2 decommit */
        uint32_t stack;
    } evs[] = {
        {10, 0, 4 * K, 0, 1},  {10, 1, 4 * K, 0, 1},  {50, 0, 4 * K, 1, 1},
        {50, 9, 4 * K, 0, 6},  {90, 2, 4 * K, 0, 2},  {99, 3, 4 * K, 0, 2},
        {100, 1, 4 * K, 1, 1}, {100, 4, 8 * K, 0, 3}, {110, 7, 12 * K, 0, 7},
        {120, 5, 4 * K, 0, 3}, {120, 7, 0, 3, 7},     {130, 5, 4 * K, 2, 3},
        {150, 2, 4 * K, 2, 2}, {150, 6, 4 * K, 0, 4}, {200, 4, 8 * K, 2, 3},
        {200, 8, 4 * K, 0, 4}, {201, 6, 4 * K, 2, 4}, {201, 10, 4 * K, 0, 5},
        {250, 9, 4 * K, 1, 6},
    };
    for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++) {
        uint64_t addr = a + evs[i].addr * 64 * K;

        if (evs[i].kind == 0)
            window_event(&w, ev(FMT_EV_MMAP, evs[i].ts, addr, evs[i].size, evs[i].stack), RW, ANON);
        else if (evs[i].kind == 1)
            window_event(&w, ev(FMT_EV_MUNMAP, evs[i].ts, addr, evs[i].size, evs[i].stack), 0, 0);
        else if (evs[i].kind == 2)
            window_event(&w, ev(FMT_EV_MPROTECT, evs[i].ts, addr, evs[i].size, 9), PROT_NONE, 0);
        else /* the middle page of stack 7's three */
            window_event(&w, ev(FMT_EV_MPROTECT, evs[i].ts, addr + 4 * K, 4 * K, 9), PROT_NONE, 0);
    }
    assert_int_equal(ana_vm_replay_finish(&w.replay), 0);

    /* 8 listed above and stack 7's three parts; stack 1's first and stack
     * 5's are outside. */
    assert_int_equal(w.nr, 11);
    for (size_t i = 0; i < w.nr; i++) {
        const struct ana_vm_life *x = &w.v[i];
        uint64_t size = x->l.hi - x->l.lo;
        int expect = -1;

        assert_int_equal(x->cls,
                         ana_wpa_class_of(x->l.commit_ns, x->l.decommit_ns, x->l.open, 100, 200));
        if (x->l.commit_stack == 7)
            expect = x->l.open ? ANA_AIFO : ANA_AIFI;
        for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++)
            if (want[k].stack == x->l.commit_stack && want[k].commit == x->l.commit_ns &&
                (want[k].end ? !x->l.open && want[k].end == x->l.decommit_ns : x->l.open))
                expect = want[k].cls;
        assert_int_equal(x->cls, expect);
        assert_int_equal(x->impacting, x->cls == ANA_AIFO   ? (int64_t)size
                                       : x->cls == ANA_AOFI ? -(int64_t)size
                                                            : 0);
        by_key[x->l.commit_stack][x->cls == ANA_AIFI].nr[x->cls]++;
        by_key[x->l.commit_stack][x->cls == ANA_AIFI].bytes[x->cls] += size;
        w.v[i].key = x->l.commit_stack;
    }
    assert_int_equal(w.images[0].nr[ANA_AIFI], 3);
    assert_int_equal(w.images[0].bytes[ANA_AIFI], 8 * K + 4 * K + 4 * K);
    assert_int_equal(w.images[0].nr[ANA_AIFO], 4);
    assert_int_equal(w.images[0].bytes[ANA_AIFO], 4 * K + 4 * K + 8 * K);
    assert_int_equal(w.images[0].nr[ANA_AOFI], 2);
    assert_int_equal(w.images[0].nr[ANA_AOFO], 2);
    assert_int_equal(ana_wpa_impacting_size(&w.images[0]), (int64_t)(16 * K - 8 * K));

    ng = ana_vm_window_groups(&w, &g);
    /* Transient: 3, 7; Impacting: 1, 2, 4, 7 (stack 6 is AOFO alone: no
     * group; stack 2's AOFO lifetime is in no group). */
    assert_int_equal(ng, 6);
    for (long i = 0; i < ng; i++) {
        const struct ana_wpa *c = &by_key[g[i].key][g[i].transient];

        assert_int_equal(g[i].count,
                         g[i].transient ? ana_wpa_transient_count(c) : ana_wpa_impacting_count(c));
        assert_int_equal(g[i].size, g[i].transient ? c->bytes[ANA_AIFI] : c->bytes[ANA_AIFO]);
        assert_int_equal(g[i].impacting, g[i].transient ? 0 : ana_wpa_impacting_size(c));
        for (size_t k = g[i].first; k < g[i].first + g[i].count; k++) {
            assert_int_equal(w.v[k].key, g[i].key);
            assert_int_equal(w.v[k].cls == ANA_AIFI, g[i].transient);
        }
        if (i) /* |impacting|, then size */
            assert_true(
                llabs(g[i - 1].impacting) > llabs(g[i].impacting) ||
                (llabs(g[i - 1].impacting) == llabs(g[i].impacting) && g[i - 1].size >= g[i].size));
    }
    /* The largest: stack 4's two AIFO lifetimes, +8 KiB. */
    assert_int_equal(g[0].key, 4);
    assert_int_equal(g[0].impacting, (int64_t)(8 * K));
    free(g);
    ana_vm_window_release(&w);
}

/* The samplers' moments (ana_ticks): nr even moments over [t0, t1], the
 * last exactly t1, each taken only before a later time. */
static void test_ticks(void **state)
{
    struct ana_ticks t;
    uint64_t at = 0;

    (void)state;
    ana_ticks_init(&t, 10, 110, 3);
    assert_true(ana_ticks_due(&t, 44, &at));
    assert_int_equal(at, 43);
    ana_ticks_taken(&t);
    assert_false(ana_ticks_due(&t, 76, &at)); /* 76 is not before 76 */
    assert_int_equal(at, 76);
    assert_true(ana_ticks_due(&t, 77, &at));
    ana_ticks_taken(&t);
    assert_true(ana_ticks_due(&t, UINT64_MAX, &at));
    assert_int_equal(at, 110); /* not 10 + 99 */
    ana_ticks_taken(&t);
    assert_false(ana_ticks_due(&t, UINT64_MAX, &at));
}

/* What the replay tells its consumer, in order, a line each. */
struct told {
    char log[1024];
};

static void tell(struct told *t, const char *what, uint64_t a, uint64_t b)
{
    size_t n = strlen(t->log);

    snprintf(t->log + n, sizeof(t->log) - n, "%s %" PRIu64 " %" PRIu64 "\n", what, a, b);
}

static int told_moment(void *arg, uint64_t ts, uint32_t image, const struct ana_vm_image *im)
{
    (void)image;
    tell(arg, "moment", ts, im->committed);
    return 0;
}

static int told_before(void *arg, const struct fmt_event *ev)
{
    tell(arg, "before", ev->ts_ns, ev->kind);
    return 0;
}

static int told_after(void *arg, const struct fmt_event *ev)
{
    tell(arg, "after", ev->ts_ns, ev->kind);
    return 0;
}

static int told_lifetime(void *arg, const struct ana_vm_lifetime *l)
{
    tell(arg, "lifetime", l->commit_ns, l->open ? 0 : l->decommit_ns);
    return 0;
}

/* The one replay (ana_vm_replay): each moment (ana_ticks) before the
 * first event after it; the consumer around each event; the scan stopped
 * by the first event after `until`; open lifetimes at the end. */
static void test_replay(void **state)
{
    static const struct ana_vm_replay_ops ops = {.moment = told_moment,
                                                 .before = told_before,
                                                 .after = told_after,
                                                 .lifetime = told_lifetime};
    struct told t = {""};
    struct ana_vm_replay p = {.t0 = 0, .t1 = 40, .nr_intervals = 2, .until = 45};
    const uint64_t rw = PROT_READ | PROT_WRITE, anon = MAP_PRIVATE | MAP_ANONYMOUS;
    struct fmt_event e[] = {
        ev(FMT_EV_MMAP, 10, 0x10000, 4 * K, 1), ev(FMT_EV_MUNMAP, 30, 0x10000, 4 * K, 2),
        ev(FMT_EV_MMAP, 40, 0x20000, 8 * K, 3),
        ev(FMT_EV_MMAP, 46, 0x40000, 4 * K, 4), /* after until */
    };

    (void)state;
    ana_vm_replay_init(&p, &ops, &t);
    for (size_t i = 0; i < sizeof(e) / sizeof(e[0]); i++) {
        e[i].arg[0] = rw;
        e[i].arg[1] = anon;
        assert_int_equal(ana_vm_replay_event(&p, &e[i]), e[i].ts_ns > 45);
    }
    assert_int_equal(ana_vm_replay_finish(&p), 0);
    assert_string_equal(t.log, "before 10 16\n"
                               "after 10 16\n"
                               "moment 20 4096\n"
                               "before 30 17\n"
                               "lifetime 10 30\n"
                               "after 30 17\n"
                               "before 40 16\n"
                               "after 40 16\n"
                               "moment 40 8192\n"
                               "lifetime 40 0\n");
    ana_vm_replay_release(&p);
}

/* A partial munmap ends the part it removes; MAP_FIXED replaces; lengths
 * round up to pages; shared or read-only mappings are no charge; what is
 * left at the end is reported open. */
static void test_cuts_and_open(void **state)
{
    struct lives ls = {0};
    struct ana_vm vm;
    const struct ana_vm_image *im;

    (void)state;
    ana_vm_init(&vm, keep, &ls);
    do_mmap(&vm, 1, BASE, 10 * 4096 - 100, RW, ANON, 7); /* rounds to 10 pages */
    do_mmap(&vm, 2, BASE + 1 * M, 4 * 4096, PROT_READ, MAP_PRIVATE, 8);
    do_mmap(&vm, 3, BASE + 2 * M, 4 * 4096, RW, MAP_SHARED | MAP_ANONYMOUS, 9);
    im = ana_vm_get(&vm, 0);
    assert_int_equal(im->committed, 18 * 4096);
    assert_int_equal(im->charge, 10 * 4096);

    do_unmap(&vm, 4, BASE + 4096, 2 * 4096, 10); /* a hole in the middle */
    assert_int_equal(ls.n, 1);
    assert_int_equal(ls.v[0].lo, BASE + 4096);
    assert_int_equal(ls.v[0].hi, BASE + 3 * 4096);
    assert_int_equal(ls.v[0].commit_stack, 7);
    assert_int_equal(im->nr, 4);

    /* MAP_FIXED over the tail of the first mapping, PROT_NONE. */
    do_mmap(&vm, 5, BASE + 8 * 4096, 2 * 4096, PROT_NONE, ANON | MAP_FIXED, 11);
    assert_int_equal(ls.n, 2);
    assert_int_equal(ls.v[1].lo, BASE + 8 * 4096);
    assert_int_equal(ls.v[1].decommit_ns, 5);
    assert_int_equal(im->reserved, 2 * 4096);
    assert_int_equal(im->committed, (1 + 5 + 4 + 4) * 4096);

    assert_int_equal(ana_vm_finish(&vm), 0);
    /* Open: pages [0,1) and [3,8) of stack 7, the file, the shared one. */
    assert_int_equal(ls.n, 6);
    for (int i = 2; i < 6; i++)
        assert_true(ls.v[i].open);
    assert_int_equal(ls.v[2].hi - ls.v[2].lo, 4096);
    assert_int_equal(ls.v[3].hi - ls.v[3].lo, 5 * 4096);
    assert_true(ls.v[3].charge);
    assert_false(ls.v[4].charge);
    assert_false(ls.v[5].charge);
    ana_vm_release(&vm);
}

/* mremap in place (grow, shrink) and moved; brk and sbrk move the heap. */
static void test_mremap_brk(void **state)
{
    struct lives ls = {0};
    struct ana_vm vm;
    const struct ana_vm_image *im;
    struct fmt_event e;

    (void)state;
    ana_vm_init(&vm, keep, &ls);
    do_mmap(&vm, 1, BASE, 4 * 4096, RW, ANON, 1);
    e = ev(FMT_EV_MREMAP, 2, BASE, 8 * 4096, 2);
    e.old_addr = BASE;
    e.old_size = 4 * 4096;
    assert_int_equal(ana_vm_event(&vm, &e), 0);
    im = ana_vm_get(&vm, 0);
    assert_int_equal(im->committed, 8 * 4096);
    assert_int_equal(im->nr, 2); /* the grown tail is its own piece, stack 2 */
    assert_int_equal(im->v[1].commit_stack, 2);

    e = ev(FMT_EV_MREMAP, 3, BASE + M, 8 * 4096, 3); /* moved */
    e.old_addr = BASE;
    e.old_size = 8 * 4096;
    assert_int_equal(ana_vm_event(&vm, &e), 0);
    assert_int_equal(im->committed, 8 * 4096);
    assert_int_equal(im->nr, 1);
    assert_int_equal(im->v[0].lo, BASE + M);
    assert_int_equal(im->v[0].prot, (uint32_t)RW);
    assert_int_equal(ls.n, 2); /* both old pieces ended at 3 */
    assert_int_equal(ls.v[0].decommit_ns, 3);
    assert_int_equal(ls.v[1].decommit_ns, 3);

    /* MREMAP_DONTUNMAP: the old range stays, the new one is added. */
    e = ev(FMT_EV_MREMAP, 4, BASE + 2 * M, 8 * 4096, 4);
    e.old_addr = BASE + M;
    e.old_size = 8 * 4096;
    e.arg[1] = MREMAP_MAYMOVE | 4;
    assert_int_equal(ana_vm_event(&vm, &e), 0);
    assert_int_equal(im->committed, 16 * 4096);
    assert_int_equal(ls.n, 2);
    do_unmap(&vm, 4, BASE + 2 * M, 8 * 4096, 4);
    assert_int_equal(ls.n, 3);
    ls.n = 2;

    /* brk(0) tells the break; growing maps whole pages above it. */
    e = ev(FMT_EV_BRK, 4, 0x555500001000ull + 100, 0, 4);
    assert_int_equal(ana_vm_event(&vm, &e), 0);
    e = ev(FMT_EV_BRK, 5, 0x555500001000ull + 100 + 3 * 4096, 0, 5);
    e.arg[0] = e.addr;
    assert_int_equal(ana_vm_event(&vm, &e), 0);
    assert_int_equal(im->committed, 8 * 4096 + 3 * 4096);
    /* sbrk(-2 pages) from there: the top two pages go. */
    e = ev(FMT_EV_SBRK, 6, 0x555500001000ull + 100 + 3 * 4096, 0, 6);
    e.arg[0] = (uint64_t)(int64_t)(-2 * 4096);
    assert_int_equal(ana_vm_event(&vm, &e), 0);
    assert_int_equal(im->committed, 8 * 4096 + 1 * 4096);
    assert_int_equal(ls.n, 3);
    assert_int_equal(ls.v[2].commit_stack, 5);
    assert_int_equal(ls.v[2].hi - ls.v[2].lo, 2 * 4096);
    ana_vm_release(&vm);
}

/* The collector's own mappings: space, not memory, no lifetimes. */
static void test_collector(void **state)
{
    struct lives ls = {0};
    struct ana_vm vm;
    const struct ana_vm_image *im;
    struct fmt_event e = ev(FMT_EV_MMAP, 1, BASE, 64 * M, 0);

    (void)state;
    ana_vm_init(&vm, keep, &ls);
    e.arg[0] = RW;
    e.arg[1] = MAP_SHARED;
    e.flags = FMT_EVF_COLLECTOR;
    e.origin = FMT_ORIGIN_SNAPSHOT;
    assert_int_equal(ana_vm_event(&vm, &e), 0);
    im = ana_vm_get(&vm, 0);
    assert_int_equal(im->collector, 64 * M);
    assert_int_equal(im->mapped, 0);
    assert_int_equal(im->committed, 0);
    assert_int_equal(ana_vm_finish(&vm), 0);
    assert_int_equal(ls.n, 0);
    ana_vm_release(&vm);
}

/* A 32-bit space: holes at both ends count; misaligned mappings strand the
 * bytes up to the next 64 KiB boundary that are free; occupants of a
 * range are summed per stack. */
static void test_frag_32(void **state)
{
    struct ana_vm vm;
    const struct ana_vm_image *im;
    struct ana_frag_stats st;
    struct ana_frag_site *s;
    long n;

    (void)state;
    ana_vm_init(&vm, NULL, NULL);
    do_mmap(&vm, 1, 0x10000000, 64 * K, RW, ANON, 1);         /* aligned */
    do_mmap(&vm, 2, 0x20000000, 64 * K + 4 * K, RW, ANON, 2); /* size off by 4 KiB */
    do_mmap(&vm, 3, 0x20011000 + 8 * K, 4 * K, RW, ANON, 3);  /* address off */
    do_mmap(&vm, 4, 0xf0000000, 16 * M, PROT_NONE, ANON, 1);
    im = ana_vm_get(&vm, 0);
    ana_frag_stats(im, &st);
    assert_true(st.is_32);
    assert_int_equal(st.space_lo, 0x10000);
    assert_int_equal(st.space_hi, 0x100000000ull);
    assert_int_equal(st.nr_mappings, 4);
    assert_int_equal(st.nr_holes, 5);
    /* Largest: from the end of the second pair to 0xf0000000. */
    assert_int_equal(st.largest_lo, 0x20011000 + 12 * K);
    assert_int_equal(st.largest_hi, 0xf0000000);
    assert_int_equal(st.free, 0x100000000ull - 0x10000 - st.mapped);

    n = ana_frag_misaligned(im, 64 * K, &s);
    assert_int_equal(n, 2);
    /* Stack 2 ends at 0x20011000: 8 KiB free up to stack 3, of the 60 KiB
     * to the boundary. Stack 3 at 0x20013000-0x20014000: 8 KiB below to
     * stack 2 (and the boundary at 0x20010000 is further), 48 KiB above. */
    assert_int_equal(s[0].stack, 3);
    assert_int_equal(s[0].stranded, 8 * K + 48 * K);
    assert_int_equal(s[1].stack, 2);
    assert_int_equal(s[1].stranded, 8 * K);
    assert_int_equal(s[1].size, 68 * K);
    free(s);

    n = ana_frag_occupants(im, 0x20000000, 0x20020000, &s);
    assert_int_equal(n, 2);
    assert_int_equal(s[0].stack, 2);
    assert_int_equal(s[0].size, 68 * K);
    assert_int_equal(s[1].size, 4 * K);
    free(s);
    ana_vm_release(&vm);
}

/* The map renders: every mapping and the largest hole are drawn. */
static void test_frag_svg(void **state)
{
    struct ana_vm vm;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    (void)state;
    ana_vm_init(&vm, NULL, NULL);
    do_mmap(&vm, 1, 0x10000000, 64 * K, RW, ANON, 1);
    do_mmap(&vm, 2, 0x20000000, 64 * K, PROT_NONE, ANON, 2);
    do_mmap(&vm, 3, 0x30000000, 64 * K, PROT_READ, MAP_PRIVATE, 3);
    assert_int_equal(ana_frag_svg(f, ana_vm_get(&vm, 0), "map <test>", 0), 0);
    fclose(f);
    assert_non_null(strstr(buf, "class=\"fr-chg\""));
    assert_non_null(strstr(buf, "class=\"fr-res\""));
    assert_non_null(strstr(buf, "class=\"fr-com\""));
    assert_non_null(strstr(buf, "class=\"fr-big\""));
    assert_non_null(strstr(buf, "map &lt;test&gt;"));
    free(buf);
    ana_vm_release(&vm);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reserve_commit), cmocka_unit_test(test_window),
        cmocka_unit_test(test_window_classes), cmocka_unit_test(test_cuts_and_open),
        cmocka_unit_test(test_mremap_brk),     cmocka_unit_test(test_collector),
        cmocka_unit_test(test_frag_32),        cmocka_unit_test(test_frag_svg),
        cmocka_unit_test(test_ticks),          cmocka_unit_test(test_replay),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
