/* SPDX-License-Identifier: MIT */
/* Deep recursion for the call trees' JSON (tests/e2e/ana_deep.sh): dive(n)
 * calls itself n times and leaks 100 bytes at the bottom. argv[1] is n
 * (default 40); the stack is n + 1 dive frames under main. */
#include <stdlib.h>

static void escape(void *p)
{
    __asm__ volatile("" : : "g"(p) : "memory");
}

__attribute__((noinline)) static void dive(int n)
{
    if (n == 0) {
        escape(malloc(100));
        return;
    }
    dive(n - 1);
    __asm__ volatile(""); /* not a tail call: each level keeps its frame */
}

int main(int argc, char **argv)
{
    dive(argc > 1 ? atoi(argv[1]) : 40);
    return 0;
}
