/* SPDX-License-Identifier: MIT */
/* Children that end while their parent waits, for the dates of process
 * exits (tests/e2e/ana_exits.sh): the parent forks five children one after
 * another; child i allocates 100 + i bytes and leaves by exit() (i even)
 * or _exit() (i odd); the parent waits for it, then at once allocates
 * 1000 + i bytes. Every block stays allocated. The trace must date child
 * i's exit before the parent's block of 1000 + i bytes: the child had
 * ended when waitpid returned. */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define NR_CHILDREN 5

static void escape(void *p)
{
    __asm__ volatile("" : : "g"(p) : "memory");
}

int main(void)
{
    for (int i = 0; i < NR_CHILDREN; i++) {
        pid_t pid = fork();

        if (pid < 0)
            return 1;
        if (pid == 0) {
            escape(malloc(100 + (size_t)i));
            if (i % 2 == 0)
                exit(0);
            _exit(0);
        }
        if (waitpid(pid, NULL, 0) != pid)
            return 2;
        escape(malloc(1000 + (size_t)i));
    }
    return 0;
}
