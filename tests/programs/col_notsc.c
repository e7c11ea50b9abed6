/* SPDX-License-Identifier: MIT */
/* A program that takes the time-stamp counter away from its threads, as
 * sandboxes and record/replay tools do (tests/e2e/record_notsc.sh).
 * Usage: col_notsc clock | strict-prctl | strict-syscall
 *
 * clock: thread "keep" starts with the TSC; then main calls
 * prctl(PR_SET_TSC, PR_TSC_SIGSEGV) and mallocs and frees 1001 bytes 100
 * times; thread "inherit", started by main, has the TSC off from birth and
 * does the same with 1002 bytes; thread "again" turns it back on with
 * syscall(SYS_prctl, PR_SET_TSC, PR_TSC_ENABLE) for 100 x 1003 bytes and
 * off again the same way for 100 x 1004. Then main and "keep" hand 1 MiB
 * blocks (each its own mmap, so a freed block's address is usually the
 * next one's) back and forth 200 times: main mallocs and frees one, then
 * "keep" does, then main again: each free is stamped by one clock and the
 * malloc that follows by the other.
 *
 * strict-*: thread "strict" mallocs and frees 1005 bytes 10 times, enters
 * seccomp's strict mode (by prctl or by the seccomp system call), then
 * mallocs and frees 1006 bytes from its thread cache (where 1005's block
 * went), writes one line and
 * leaves with the exit system call (strict mode allows nothing else). Then
 * main mallocs and frees 1007 bytes 10 times.
 *
 * It prints "ok" and exits 0; rdtsc or any other forbidden call by the
 * collector would kill it (SIGSEGV, SIGKILL). */
#include <linux/seccomp.h>
#include <malloc.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NR_HANDOFFS 200
#define BIG (1u << 20)

static sem_t to_keep, to_main;

static void churn(size_t size, int times)
{
    for (int i = 0; i < times; i++) {
        char *volatile p = malloc(size);

        p[0] = 1;
        free(p);
    }
}

static int tsc_mode(void)
{
    int mode = 0;

    prctl(PR_GET_TSC, &mode, 0, 0, 0);
    return mode;
}

static void *keep(void *arg)
{
    (void)arg;
    for (int i = 0; i < NR_HANDOFFS; i++) {
        char *volatile p;

        sem_wait(&to_keep);
        p = malloc(BIG);
        p[0] = 2;
        free(p);
        sem_post(&to_main);
    }
    return NULL;
}

static void *inherit(void *arg)
{
    (void)arg;
    if (tsc_mode() != PR_TSC_SIGSEGV)
        fprintf(stderr, "inherit: the TSC is on\n");
    churn(1002, 100);
    return NULL;
}

static void *again(void *arg)
{
    (void)arg;
    syscall(SYS_prctl, PR_SET_TSC, PR_TSC_ENABLE, 0, 0, 0);
    churn(1003, 100);
    syscall(SYS_prctl, PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0);
    churn(1004, 100);
    return NULL;
}

static int run_clock(void)
{
    pthread_t k, t;

    mallopt(M_MMAP_THRESHOLD, 64 * 1024); /* fixed: every BIG block is an mmap */
    sem_init(&to_keep, 0, 0);
    sem_init(&to_main, 0, 0);
    if (pthread_create(&k, NULL, keep, NULL) != 0)
        return 1;
    prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0);
    if (tsc_mode() != PR_TSC_SIGSEGV)
        return 1;
    churn(1001, 100);
    if (pthread_create(&t, NULL, inherit, NULL) != 0 || pthread_join(t, NULL) != 0)
        return 1;
    if (pthread_create(&t, NULL, again, NULL) != 0 || pthread_join(t, NULL) != 0)
        return 1;
    for (int i = 0; i < NR_HANDOFFS; i++) {
        char *volatile p = malloc(BIG);

        p[0] = 3;
        free(p);
        sem_post(&to_keep);
        sem_wait(&to_main);
    }
    return pthread_join(k, NULL) != 0;
}

static void *strict(void *arg)
{
    static const char line[] = "strict: still running\n";

    churn(1005, 10);
    if (arg)
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT, 0, 0, 0);
    else
        syscall(SYS_seccomp, SECCOMP_SET_MODE_STRICT, 0, NULL);
    churn(1006, 1); /* from the thread's cache: no system call */
    if (write(1, line, sizeof(line) - 1) < 0)
        syscall(SYS_exit, 1);
    syscall(SYS_exit, 0); /* strict mode: not exit_group, not glibc's thread exit */
    return NULL;
}

int main(int argc, char **argv)
{
    pthread_t t;

    if (argc != 2)
        return 2;
    if (!strcmp(argv[1], "clock")) {
        if (run_clock() != 0)
            return 1;
    } else if (!strcmp(argv[1], "strict-prctl") || !strcmp(argv[1], "strict-syscall")) {
        if (pthread_create(&t, NULL, strict, argv[1][7] == 'p' ? argv : NULL) != 0 ||
            pthread_join(t, NULL) != 0)
            return 1;
        churn(1007, 10);
    } else {
        return 2;
    }
    printf("ok\n");
    return 0;
}
