/* SPDX-License-Identifier: MIT */
/* Allocates 1 MiB blocks until malloc fails, and prints how many it got:
 * run under an RLIMIT_AS, the number says how much address space was left
 * to the program (the collector's own reservations count against it). */
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    void **blocks = NULL;
    size_t n = 0, cap = 0;

    for (;;) {
        void *p;

        if (n == cap) {
            void **bigger = realloc(blocks, (cap = cap ? 2 * cap : 256) * sizeof(*blocks));

            if (!bigger)
                break;
            blocks = bigger;
        }
        p = malloc(1 << 20);
        if (!p)
            break;
        blocks[n++] = p;
    }
    printf("mib=%zu\n", n);
    while (n)
        free(blocks[--n]);
    free(blocks);
    return 0;
}
