/* SPDX-License-Identifier: MIT */
/* A program that is hard on precise capture: it blocks every signal,
 * installs its own SIGSYS handler and reads it back, raises SIGSYS, has a
 * signal handler that maps memory and returns, forks and the child execs,
 * a child whose exec fails, posix_spawn, vfork + exec, and a thread.
 * Everything it prints must be the same traced and untraced. */
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;
static volatile sig_atomic_t got_sys, got_usr;

static void *thread_main(void *arg)
{
    void *p = malloc(200000); /* above the mmap threshold: libc maps it */

    free(p);
    return arg;
}

static void on_sys(int sig)
{
    (void)sig;
    got_sys++;
}

static void on_usr(int sig)
{
    void *p = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

    (void)sig;
    if (p != MAP_FAILED)
        munmap(p, 65536);
    got_usr++;
}

int main(int argc, char **argv)
{
    struct sigaction sa, back;
    sigset_t all, one, now;
    pid_t pid;
    int status;

    if (argc > 1) { /* the exec'd child */
        printf("exec'd child runs\n");
        return 7;
    }
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, NULL);
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_sys;
    sigaction(SIGSYS, &sa, NULL);
    sigaction(SIGSYS, NULL, &back);
    printf("SIGSYS handler reads back: %s\n", back.sa_handler == on_sys ? "yes" : "no");
    sa.sa_handler = on_usr;
    sigaction(SIGUSR1, &sa, NULL);

    sigemptyset(&one);
    sigaddset(&one, SIGSYS);
    sigaddset(&one, SIGUSR1);
    sigprocmask(SIG_UNBLOCK, &one, NULL);
    raise(SIGSYS);
    raise(SIGUSR1);
    printf("SIGSYS handled %d, SIGUSR1 handled %d\n", (int)got_sys, (int)got_usr);
    sigprocmask(SIG_BLOCK, &one, &now);
    printf("SIGUSR1 was unblocked: %s\n", sigismember(&now, SIGUSR1) ? "no" : "yes");
    fflush(stdout);

    pid = fork();
    if (pid == 0) {
        void *p = malloc(100000);

        free(p);
        execl("/proc/self/exe", argv[0], "child", (char *)NULL);
        _exit(99);
    }
    waitpid(pid, &status, 0);
    printf("child exited %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);

    /* A failed exec (the PATH search of execvp) leaves the child running. */
    fflush(stdout);
    pid = fork();
    if (pid == 0) {
        execlp("memscribe-no-such-command", "x", (char *)NULL);
        printf("exec failed as expected\n");
        fflush(stdout);
        _exit(3);
    }
    waitpid(pid, &status, 0);
    printf("failed-exec child exited %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);

    {
        char *args[] = {argv[0], "child", NULL};

        fflush(stdout);
        if (posix_spawn(&pid, "/proc/self/exe", NULL, NULL, args, environ) == 0) {
            waitpid(pid, &status, 0);
            printf("spawned child exited %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        }
    }
    fflush(stdout);
    pid = vfork();
    if (pid == 0) {
        execl("/proc/self/exe", argv[0], "child", (char *)NULL);
        _exit(99);
    }
    waitpid(pid, &status, 0);
    printf("vforked child exited %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);

    {
        pthread_t th;

        pthread_create(&th, NULL, thread_main, NULL);
        pthread_join(th, NULL);
        printf("thread joined\n");
    }
    sigprocmask(SIG_SETMASK, NULL, &now);
    printf("SIGUSR1 still blocked: %s\n", sigismember(&now, SIGUSR1) ? "yes" : "no");
    return 0;
}
