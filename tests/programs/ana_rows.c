/* SPDX-License-Identifier: MIT */
/* Three calls of malloc on one source line, as a loop the compiler
 * unrolled gives them: three call addresses, one (function, file, line).
 * memscribe shows them as one call site of 3 allocations
 * (tests/e2e/ana_rows.sh). Leaks 3 x 24 bytes; 5 x 100 more from a
 * second line, freed. */
#include <stdlib.h>

/* Keep the compiler from dropping allocations whose memory is unused. */
static void escape(void *p)
{
    __asm__ volatile("" : : "g"(p) : "memory");
}

/* One line: every call in the expansion has the line of the use. */
#define THREE(v) ((v)[0] = malloc(24), (v)[1] = malloc(24), (v)[2] = malloc(24))

__attribute__((noinline)) static void three(void **v)
{
    THREE(v);
    escape(v);
}

__attribute__((noinline)) static void other(void)
{
    for (int i = 0; i < 5; i++) {
        void *p = malloc(100);
        escape(p);
        free(p);
    }
}

int main(void)
{
    void *v[3];

    three(v);
    other();
    escape(v);
    return 0;
}
