/* SPDX-License-Identifier: MIT */
/* A function whose name holds a terminal escape and bytes that are not
 * UTF-8 (tests/e2e/ana_escape.sh): it leaks 77 bytes. The test runs it
 * with such an argv too. The name is an assembler label: C has no other
 * way to spell it. */
#include <stdlib.h>

__attribute__((noinline)) void *evil(void) __asm__("\"evil\033[2J\377\300name\"");

void *evil(void)
{
    return malloc(77);
}

int main(void)
{
    void *volatile p = evil();
    (void)p;
    return 0;
}
