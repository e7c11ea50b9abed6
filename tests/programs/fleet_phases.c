/* SPDX-License-Identifier: MIT */
/* A service of phases for the metrics tests (tests/e2e/fleet_*.sh), each
 * phase waiting for a file the test makes in DIR: it holds 1 MiB from
 * phase_one(), then (DIR/go1) frees it and holds 3 MiB from phase_two(),
 * then (DIR/go2) frees that and exits 0. Its pid goes to DIR/pid first
 * (record -p). Static functions, at -O0 in a test build: the sites are
 * named by them.
 * usage: fleet_phases DIR */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Wait for the file the test makes. */
static void wait_for(const char *dir, const char *name)
{
    char path[4096];

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    while (access(path, F_OK))
        usleep(20000);
}

__attribute__((noinline)) static char *phase_one(void)
{
    return memset(malloc(1 << 20), 1, 1 << 20);
}

__attribute__((noinline)) static char *phase_two(void)
{
    return memset(malloc(3 << 20), 2, 3 << 20);
}

int main(int argc, char **argv)
{
    char path[4096], pid[32];

    if (argc != 2)
        return 2;
    /* the pid, written whole before the file has a name (record -p) */
    snprintf(path, sizeof(path), "%s/pid.tmp", argv[1]);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
    if (fd < 0 || write(fd, pid, (size_t)n) != n || close(fd))
        return 1;
    char done[4096];
    snprintf(done, sizeof(done), "%s/pid", argv[1]);
    if (rename(path, done))
        return 1;
    char *a = phase_one();
    wait_for(argv[1], "go1");
    free(a);
    char *b = phase_two();
    wait_for(argv[1], "go2");
    free(b);
    return 0;
}
