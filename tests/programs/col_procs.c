/* SPDX-License-Identifier: MIT */
/* Processes for the collector: "leaf N" allocates N bytes three times and
 * exits; "all" forks a child that allocates 1111 three times, forks and
 * execs "leaf 3333", posix_spawns "leaf 4444", vforks and execs
 * "leaf 5555", and itself allocates 2222 once; "forks N" forks N children
 * (each allocates 4242 three times) while three threads allocate. */
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static void leaf(size_t n)
{
    for (int i = 0; i < 3; i++)
        free(malloc(n));
}

static volatile int stop;

static void *spin(void *arg)
{
    (void)arg;
    while (!stop)
        free(malloc(100));
    return NULL;
}

static void wait_ok(pid_t pid)
{
    int st;

    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        exit(3);
}

int main(int argc, char **argv)
{
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    pid_t pid;

    if (n <= 0)
        return 2;
    self[n] = 0;
    if (argc == 3 && !strcmp(argv[1], "leaf")) {
        leaf((size_t)atol(argv[2]));
        return 0;
    }
    if (argc == 3 && !strcmp(argv[1], "forks")) {
        /* fork while other threads are inside the collector */
        pthread_t th[3];

        for (int i = 0; i < 3; i++)
            if (pthread_create(&th[i], NULL, spin, NULL) != 0)
                return 6;
        for (long i = atol(argv[2]); i > 0; i--) {
            pid = fork();
            if (pid == 0) {
                leaf(4242);
                _exit(0);
            }
            wait_ok(pid);
        }
        stop = 1;
        for (int i = 0; i < 3; i++)
            pthread_join(th[i], NULL);
        return 0;
    }
    if (argc != 2 || strcmp(argv[1], "all"))
        return 2;

    pid = fork(); /* fork without exec */
    if (pid == 0) {
        leaf(1111);
        exit(0);
    }
    wait_ok(pid);

    pid = fork(); /* fork + exec */
    if (pid == 0) {
        execl(self, self, "leaf", "3333", (char *)NULL);
        _exit(4);
    }
    wait_ok(pid);

    {
        char *args[] = {self, "leaf", "4444", NULL};

        if (posix_spawn(&pid, self, NULL, NULL, args, environ) != 0)
            return 5;
        wait_ok(pid);
    }

    pid = vfork();
    if (pid == 0) {
        execl(self, self, "leaf", "5555", (char *)NULL);
        _exit(4);
    }
    wait_ok(pid);

    free(malloc(2222));
    return 0;
}
