/* SPDX-License-Identifier: MIT */
/* For the collector started without `memscribe record` (col_selfrec.c).
 * Its constructor starts two threads that allocate 3001 and 3002 bytes
 * ten times each while main runs; main checks that the collector left it
 * no child (wait() says ECHILD), no descriptor but 0-2 and no blocked
 * signal, allocates 3003 bytes five times, forks a child that allocates
 * 3004 five times and execs "col_nowrap leaf", which allocates 3005 five
 * times, and prints "fds=N" (the descriptors it saw) and its exit status
 * 7. "orphan" forks a child that allocates 3006 bytes five times 300 ms
 * after its parent has exited; "sigchld", started with SIGCHLD blocked,
 * allocates 3007 bytes once and exits 27 if a SIGCHLD is pending.
 * "quick" only runs the constructor's threads and exits.
 * Usage: col_nowrap [leaf | orphan | sigchld | quick] (no threads but
 * with quick) */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_t threads[2];

static void allocate(size_t size, int times)
{
    for (int i = 0; i < times; i++) {
        void *p = malloc(size);

        __asm__ volatile("" ::"r"(p) : "memory");
        free(p);
    }
}

static void *worker(void *arg)
{
    allocate((size_t)(3001 + (long)arg), 10);
    return NULL;
}

/* glibc passes the program's arguments to its constructors. */
__attribute__((constructor)) static void col_nowrap_ctor(int argc, char **argv)
{
    if (argc != 1 && strcmp(argv[1], "quick"))
        return;
    for (long i = 0; i < 2; i++)
        if (pthread_create(&threads[i], NULL, worker, (void *)i) != 0)
            _exit(20);
}

static int count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    int n = 0;

    if (!d)
        return -1;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.' && atoi(e->d_name) != dirfd(d))
            n++;
    closedir(d);
    return n;
}

int main(int argc, char **argv)
{
    sigset_t blocked;
    int st;
    pid_t pid;

    if (argc == 2 && !strcmp(argv[1], "leaf")) {
        allocate(3005, 5);
        return 0;
    }
    if (argc == 2 && !strcmp(argv[1], "sigchld")) {
        /* Started with SIGCHLD blocked: a child of the collector's that
         * ended would have left it pending. */
        sigset_t pending;

        allocate(3007, 1);
        return sigpending(&pending) != 0 || sigismember(&pending, SIGCHLD) ? 27 : 0;
    }
    if (argc == 2 && !strcmp(argv[1], "orphan")) {
        /* The parent ends at once; its child starts its stream 300 ms
         * later, long after every image the recorder knew had ended. */
        pid = fork();
        if (pid == 0) {
            usleep(300 * 1000);
            allocate(3006, 5);
        }
        return pid < 0 ? 26 : 0;
    }
    for (int i = 0; i < 2; i++)
        if (pthread_join(threads[i], NULL) != 0)
            return 21;
    if (argc == 2 && !strcmp(argv[1], "quick"))
        return 0;
    if (wait(NULL) != -1 || errno != ECHILD)
        return 22; /* a child of the collector's is left over */
    if (sigprocmask(SIG_BLOCK, NULL, &blocked) != 0 || !sigisemptyset(&blocked))
        return 23;
    printf("fds=%d\n", count_fds());
    fflush(stdout);
    allocate(3003, 5);
    pid = fork();
    if (pid == 0) {
        allocate(3004, 5);
        execl("/proc/self/exe", argv[0], "leaf", (char *)NULL);
        _exit(24);
    }
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return 25;
    return 7;
}
