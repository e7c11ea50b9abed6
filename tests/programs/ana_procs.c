/* SPDX-License-Identifier: MIT */
/* Two processes for the per-process reports (tests/e2e/ana_procs.sh): the
 * parent leaks 1000 bytes in parent_work, forks, and the child leaks 2000
 * bytes in child_work and makes one temporary allocation of 30 bytes. */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void escape(void *p)
{
    __asm__ volatile("" : : "g"(p) : "memory");
}

__attribute__((noinline)) static void parent_work(void)
{
    void *p = malloc(1000);
    escape(p);
}

__attribute__((noinline)) static void child_work(void)
{
    void *p = malloc(2000);
    escape(p);
    void *q = malloc(30);
    escape(q);
    free(q);
}

int main(void)
{
    parent_work();
    pid_t pid = fork();
    if (pid < 0)
        return 1;
    if (pid == 0) {
        child_work();
        _exit(0);
    }
    waitpid(pid, NULL, 0);
    return 0;
}
