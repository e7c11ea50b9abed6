/* SPDX-License-Identifier: MIT */
/* Two builds of one program for memscribe diff (tests/e2e/diff_builds.sh).
 * Built as diff_base/diff_prog and as diff_new/diff_prog (-DDIFF_NEW,
 * which grows make_buffer's temporary buffer from 1000 to 1500 bytes and
 * calls leak_more(), a 64-byte leak). In the new build leak_some, leak_more
 * and churn sit 200 lines lower (#line), so matching by line tells their
 * sites apart while make_buffer's stays paired.
 * Expected change: allocations +1, bytes +564, peak +500 (the buffer is
 * the peak), leaked +64, temporary 0. */
#include <stdlib.h>
#include <string.h>

#ifdef DIFF_NEW
#define BUFFER 1500
#else
#define BUFFER 1000
#endif

static void escape(void *p)
{
    __asm__ volatile("" : : "g"(p) : "memory");
}

static void leak_some(void);
static void leak_more(void);
static void churn(void);

__attribute__((noinline)) static void make_buffer(void)
{
    char *b = malloc(BUFFER);
    memset(b, 1, BUFFER);
    escape(b);
    free(b);
}

int main(void)
{
    make_buffer();
    leak_some();
#ifdef DIFF_NEW
    leak_more();
#endif
    churn();
    return 0;
}

/* In the new build the functions below sit 200 lines lower. */
#ifdef DIFF_NEW
#line 300
#endif

__attribute__((noinline)) static void leak_some(void)
{
    escape(malloc(40));
}

__attribute__((noinline)) static void leak_more(void)
{
    escape(malloc(64));
}

__attribute__((noinline)) static void churn(void)
{
    for (int i = 0; i < 10; i++) {
        void *p = malloc(24), *q = malloc(8);
        escape(p);
        escape(q);
        free(p);
        free(q);
    }
}
