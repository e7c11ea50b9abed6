/* SPDX-License-Identifier: MIT */
/* MEMSCRIBE_UNWIND=verify: the collector's walk (col_unwind.c)
 * against libunwind's full unw_backtrace from the same place, on every
 * call. Only this mode loads libunwind (and so opens its memory-validation
 * pipe): it is a test mode, not for data files. The collector does not
 * link it: every traced process would load it and liblzma for nothing
 * (0.23 ms of a traced process's ~1.2 ms start and end: bench/notes/
 * collector.md, "Paired ratios, and what a walk waits for"), and its
 * unversioned _Unwind_* would join
 * the program's global scope. */
#ifndef COL_UNWIND_LIBGCC

#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "collector/col_internal.h"
#include "collector/col_unwind_internal.h"

int col_unwind_verify;

static uintptr_t col_verify_lo, col_verify_hi;
/* libunwind's unw_backtrace (on AArch64 its steps instead: col_unw_steps) */
static int (*col_unw_backtrace)(void **, int);

#ifdef __aarch64__
/* libunwind 1.6's unw_backtrace on AArch64, its fast trace, gives each
 * return address less one (fixed upstream in 2025: "Fix off-by-one in
 * aarch64 unw_backtrace()") and ends at the frame a signal interrupted;
 * its general steps do neither, so the reference here is theirs: the
 * cursor's ip frame by frame, as unw_backtrace's own fallback reads it. */
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#define COL_STR2(x) #x
#define COL_STR(x) COL_STR2(x) /* a libunwind name as its macro spells it */

static int (*col_unw_init_local)(unw_cursor_t *, unw_context_t *);
static int (*col_unw_step)(unw_cursor_t *);
static int (*col_unw_get_reg)(unw_cursor_t *, unw_regnum_t, unw_word_t *);

static int col_unw_steps(void **buf, int max)
{
    unw_context_t uc;
    unw_cursor_t c;
    unw_word_t ip;
    int n = 0;

    unw_getcontext(&uc); /* inline code: no call into libunwind */
    if (col_unw_init_local(&c, &uc) < 0)
        return 0;
    do {
        if (col_unw_get_reg(&c, UNW_REG_IP, &ip) < 0 || !ip)
            break;
        buf[n++] = (void *)(uintptr_t)ip;
    } while (n < max && col_unw_step(&c) > 0);
    return n;
}

/* The steps' functions from h, the reference in place of unw_backtrace. */
static void col_unw_pick(void *h)
{
    col_unw_init_local =
        (int (*)(unw_cursor_t *, unw_context_t *))dlsym(h, COL_STR(unw_init_local));
    col_unw_step = (int (*)(unw_cursor_t *))dlsym(h, COL_STR(unw_step));
    col_unw_get_reg =
        (int (*)(unw_cursor_t *, unw_regnum_t, unw_word_t *))dlsym(h, COL_STR(unw_get_reg));
    col_unw_backtrace =
        col_unw_init_local && col_unw_step && col_unw_get_reg ? col_unw_steps : NULL;
}
#endif

void col_unwind_verify_init(void)
{
    /* Local: its symbols stay out of the program's lookups. From col_init,
     * which runs before the program's code or with this thread's hooks
     * passing straight through, as when ld.so loaded it as a dependency. */
    void *h = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);

    col_unw_backtrace = h ? (int (*)(void **, int))dlsym(h, "unw_backtrace") : NULL;
#ifdef __aarch64__
    if (h)
        col_unw_pick(h);
#endif
    if (!col_unw_backtrace) {
        /* A verify that checks nothing must not pass. */
        col_say("MEMSCRIBE_UNWIND=verify: cannot load libunwind.so.8 (Debian's libunwind8)", 0);
        abort();
    }
}

/* The program's frames of buf: neither ours nor libunwind's. */
static int col_verify_filter(void *const *buf, int n, uint64_t *out, int max)
{
    int k = 0;

    for (int i = 0; i < n && k < max; i++) {
        uintptr_t ip = (uintptr_t)buf[i];

        if ((ip < col_verify_lo || ip >= col_verify_hi) && !col_maps_tool_caller(buf[i]))
            out[k++] = ip;
    }
    return k;
}

static void col_verify_print(const char *what, const uint64_t *f, int n)
{
    char line[64 + 20 * (FMT_SHM_MAX_DEPTH + 4)];
    size_t len = 0;

    for (const char *s = what; *s; s++)
        line[len++] = *s;
    for (int i = 0; i < n; i++) {
        line[len++] = ' ';
        for (int sh = 60; sh >= 0; sh -= 4)
            if (f[i] >> sh || !sh)
                line[len++] = "0123456789abcdef"[(f[i] >> sh) & 15];
    }
    line[len++] = '\n';
    (void)!syscall(SYS_write, 2L, (long)line, (long)len);
}

void col_unwind_check(void *const *buf, int n, int max)
{
    void *ref[FMT_SHM_MAX_DEPTH + 32];
    uint64_t a[FMT_SHM_MAX_DEPTH + 4], b[FMT_SHM_MAX_DEPTH + 4];
    int nr, ka, kb, depth = (int)col_depth;

    /* libunwind looks up unwind tables with dl_iterate_phdr (col_fork.c). */
    col_loader_enter();
    nr = col_unw_backtrace(ref, max + 28 > (int)(sizeof(ref) / sizeof(ref[0]))
                                    ? (int)(sizeof(ref) / sizeof(ref[0]))
                                    : max + 28);
    col_loader_leave();

    if (!col_verify_hi)
        col_self_range(&col_verify_lo, &col_verify_hi);
    ka = col_verify_filter(buf, n, a, depth);
    kb = col_verify_filter(ref, nr, b, depth);
    col_unwind_check_same("the walk differs from libunwind's", "walk:     ", a, ka, "libunwind:", b,
                          kb);
}

void col_unwind_check_same(const char *why, const char *what_a, const uint64_t *a, int ka,
                           const char *what_b, const uint64_t *b, int kb)
{
    char head[128] = "MEMSCRIBE_UNWIND=verify: ";
    size_t len = strlen(head);

    if (ka == kb) {
        int i = 0;

        while (i < ka && a[i] == b[i])
            i++;
        if (i == ka)
            return;
    }
    for (; *why && len + 1 < sizeof(head); why++)
        head[len++] = *why;
    head[len] = 0;
    col_say(head, 0);
    len = 0;
    for (const char *p = "memscribe: "; *p; p++)
        head[len++] = *p;
    for (; *what_a && len + 1 < sizeof(head); what_a++)
        head[len++] = *what_a;
    head[len] = 0;
    col_verify_print(head, a, ka);
    len = strlen("memscribe: ");
    for (; *what_b && len + 1 < sizeof(head); what_b++)
        head[len++] = *what_b;
    head[len] = 0;
    col_verify_print(head, b, kb);
    abort();
}

#endif
