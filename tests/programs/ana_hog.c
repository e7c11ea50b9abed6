/* SPDX-License-Identifier: MIT */
/* A process that takes 50 MiB of heap (one malloc of exactly 52,428,800
 * bytes, touched) and exits without freeing it, for the process-tree
 * totals (tests/e2e/ana_tree_peak.sh). With two arguments MINE THEIRS it
 * holds the block until both hogs have theirs: it creates the file MINE,
 * then waits (at most 60 s) for THEIRS to exist, so that two of them run
 * at once with 100 MiB between them. Nothing else allocates. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define HOG_BYTES (50u << 20)

int main(int argc, char **argv)
{
    char *p = malloc(HOG_BYTES);

    if (!p)
        return 1;
    memset(p, 1, HOG_BYTES);
    if (argc == 3) {
        int fd = open(argv[1], O_WRONLY | O_CREAT | O_EXCL, 0600);
        if (fd < 0)
            return 2;
        close(fd);
        struct timespec ms = {0, 1000000};
        for (int i = 0; i < 60000 && access(argv[2], F_OK); i++)
            nanosleep(&ms, NULL);
        if (access(argv[2], F_OK))
            return 3;
    }
    __asm__ volatile("" : : "g"(p) : "memory");
    return 0;
}
