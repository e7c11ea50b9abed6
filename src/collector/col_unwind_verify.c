/* SPDX-License-Identifier: MIT */
/* MEMSCRIBE_UNWIND=verify: the collector's walk (col_unwind_x86_64.c)
 * against libunwind's full unw_backtrace from the same place, on every
 * call. Only this mode initialises libunwind (and so opens its
 * memory-validation pipe): it is a test mode, not for data files. */
#if defined(__x86_64__) && !defined(COL_UNWIND_LIBGCC)

#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "collector/col_internal.h"
#include "collector/col_unwind_internal.h"

int col_unwind_verify;

static uintptr_t col_verify_lo, col_verify_hi;

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
    int nr = unw_backtrace(ref, max + 28 > (int)(sizeof(ref) / sizeof(ref[0]))
                                    ? (int)(sizeof(ref) / sizeof(ref[0]))
                                    : max + 28);
    int ka, kb, depth = (int)col_depth;

    if (!col_verify_hi)
        col_self_range(&col_verify_lo, &col_verify_hi);
    ka = col_verify_filter(buf, n, a, depth);
    kb = col_verify_filter(ref, nr, b, depth);
    if (ka == kb) {
        int i = 0;

        while (i < ka && a[i] == b[i])
            i++;
        if (i == ka)
            return;
    }
    col_say("MEMSCRIBE_UNWIND=verify: the walk differs from libunwind's", 0);
    col_verify_print("memscribe: walk:     ", a, ka);
    col_verify_print("memscribe: libunwind:", b, kb);
    abort();
}

#endif
