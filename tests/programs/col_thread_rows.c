/* SPDX-License-Identifier: MIT */
/* Threads as the trace lists them. A thread whose only heap call is a free
 * after its exit hook ran, once glibc has stopped running key destructors
 * (here the last of their PTHREAD_DESTRUCTOR_ITERATIONS rounds: a
 * destructor of the program's sets its key again for three rounds and
 * frees in the fourth; glibc's own thread buffers are freed after all
 * rounds too), must still get an exit.
 * A forked child and an exec'd image each have one main thread row, not a
 * second unnamed one for the recorder's own events. Prints
 * "late-free tid=T" (T the thread's tid) and "child pid=P" for each child.
 * Usage: col_thread_rows [exec'd] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_key_t key;
static pid_t late_tid;
static __thread int rounds;

static void free_last(void *block)
{
    if (++rounds < 4)
        pthread_setspecific(key, block);
    else
        free(block);
}

static void *late(void *block)
{
    late_tid = (pid_t)syscall(SYS_gettid);
    pthread_setspecific(key, block); /* freed by the key's destructor, round 4 */
    return NULL;
}

int main(int argc, char **argv)
{
    pthread_t th;
    void *block;
    pid_t child;

    if (argc > 1) { /* the exec'd image */
        free(malloc(2222));
        return 0;
    }
    block = malloc(4321);
    if (pthread_key_create(&key, free_last) != 0 || pthread_create(&th, NULL, late, block) != 0)
        return 1;
    pthread_join(th, NULL);
    printf("late-free tid=%d\n", (int)late_tid);
    fflush(stdout);
    child = fork();
    if (child == 0) {
        free(malloc(1111));
        execl("/proc/self/exe", argv[0], "exec'd", (char *)NULL);
        _exit(127);
    }
    printf("child pid=%d\n", (int)child);
    return waitpid(child, NULL, 0) == child ? 0 : 1;
}
