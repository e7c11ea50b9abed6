/* SPDX-License-Identifier: MIT */
/* Processes for the collector: "leaf N" allocates N bytes three times and
 * exits; "all" forks a child that allocates 1111 three times, forks and
 * execs "leaf 3333", posix_spawns "leaf 4444", vforks and execs
 * "leaf 5555", and itself allocates 2222 once; "forks N" forks N children
 * (each allocates 4242 three times) while three threads allocate;
 * "loaderfork" forks while a thread of its own is inside dl_iterate_phdr
 * (the loader's lock held: glibc does not reset it in the child), and the
 * child allocates 4343 three times, which needs no loader lock; a child
 * still not done after 20 s is killed and the program exits 7. */
#include <link.h>
#include <pthread.h>
#include <signal.h>
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

static int hold_pipe[2], release_pipe[2];

/* Tell main we hold the loader's lock, then keep it until released. */
static int hold_loader(struct dl_phdr_info *info, size_t size, void *arg)
{
    char c = 0;

    (void)info, (void)size, (void)arg;
    if (write(hold_pipe[1], &c, 1) != 1 || read(release_pipe[0], &c, 1) != 1)
        _exit(8);
    return 1;
}

static void *in_loader(void *arg)
{
    (void)arg;
    dl_iterate_phdr(hold_loader, NULL);
    return NULL;
}

static int loader_fork(void)
{
    pthread_t th;
    char c = 0;
    pid_t pid;
    int st = 0;

    if (pipe(hold_pipe) != 0 || pipe(release_pipe) != 0 ||
        pthread_create(&th, NULL, in_loader, NULL) != 0 || read(hold_pipe[0], &c, 1) != 1)
        return 6;
    pid = fork();
    if (pid == 0) {
        leaf(4343);
        _exit(0);
    }
    for (int i = 0; i < 2000 && waitpid(pid, &st, WNOHANG) == 0; i++)
        usleep(10000);
    if (waitpid(pid, &st, WNOHANG) == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &st, 0);
        return 7;
    }
    if (write(release_pipe[1], &c, 1) != 1 || pthread_join(th, NULL) != 0)
        return 6;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 3;
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
    if (argc == 2 && !strcmp(argv[1], "loaderfork"))
        return loader_fork();
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
