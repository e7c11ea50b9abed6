/* SPDX-License-Identifier: MIT */
/* Dies mid-run: allocates blocks of 2000 + i bytes and announces each on
 * stdout once malloc has returned, then after N blocks dies by SIGKILL,
 * SIGSEGV or abort(). Usage: col_crash kill|segv|abort N
 * "slow N" instead keeps allocating for N seconds (to kill the recorder). */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void announce(const void *p)
{
    char line[32];
    int n = snprintf(line, sizeof(line), "0x%lx\n", (unsigned long)p);

    if (write(1, line, (size_t)n) != n)
        _exit(5);
}

int main(int argc, char **argv)
{
    long n = argc > 2 ? atol(argv[2]) : 1000;

    if (argc != 3)
        return 2;
    if (!strcmp(argv[1], "slow")) {
        time_t end = time(NULL) + n;
        long i = 0;

        while (time(NULL) < end) {
            void *p = malloc(2000 + (size_t)(i++ % 1000));

            free(p);
        }
        printf("%ld\n", i);
        return 0;
    }
    for (long i = 0; i < n; i++) {
        void *p = malloc(2000 + (size_t)i);

        announce(p);
    }
    if (!strcmp(argv[1], "kill"))
        kill(getpid(), SIGKILL);
    else if (!strcmp(argv[1], "segv"))
        *(volatile int *)(uintptr_t)8 = 1;
    else if (!strcmp(argv[1], "abort"))
        abort();
    return 2;
}
