/* SPDX-License-Identifier: MIT */
/* Programs --vm-precise once harmed, one per mode; each
 * prints what it saw, the same traced and untraced (tests/e2e/vm_harm.sh):
 *   threads N   N threads at once, each mallocs and frees
 *   efault      rt_sigprocmask and rt_sigaction given bad pointers
 *   altstack    a handler on a 6 KiB sigaltstack that calls write()
 *   alarm N     malloc/free N times under a 20 us SIGALRM timer whose
 *               handler mallocs too, unless it interrupts the loop's own
 *               malloc or free (glibc's malloc is not reentrant: such a
 *               program crashed untraced, seen once in a fresh-check)
 *   mask        block SIGSYS, read the mask back, unblock, read again
 *   altjmp      a SA_ONSTACK handler leaves by siglongjmp, then an 8 MiB
 *               malloc (libc maps it: --vm-precise must still see that)
 *   exec PROG ARGS...  malloc, then exec PROG (tests/e2e/record_exec_class.sh) */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

static pthread_barrier_t all_in;

static void *worker(void *arg)
{
    void *p = malloc(1000 + (size_t)(uintptr_t)arg);

    pthread_barrier_wait(&all_in);
    free(p);
    return NULL;
}

static int run_threads(int n)
{
    pthread_t *t = calloc((size_t)n, sizeof(*t));

    pthread_barrier_init(&all_in, NULL, (unsigned)n);
    for (int i = 0; i < n; i++)
        if (pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)i) != 0)
            return 1;
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    printf("%d threads joined\n", n);
    free(t);
    return 0;
}

/* The raw syscalls, so libc's wrappers do not check the pointers first. */
static const char *result(long r)
{
    return r == 0 ? "0" : errno == EFAULT ? "EFAULT" : strerror(errno);
}

static int run_efault(void)
{
    void *bad = (void *)16;
    unsigned long set = 0;

    printf("sigprocmask bad set: %s\n",
           result(syscall(SYS_rt_sigprocmask, SIG_BLOCK, bad, NULL, 8)));
    printf("sigprocmask bad old: %s\n",
           result(syscall(SYS_rt_sigprocmask, SIG_BLOCK, &set, bad, 8)));
    printf("sigaction bad act: %s\n", result(syscall(SYS_rt_sigaction, SIGUSR1, bad, NULL, 8)));
    printf("sigaction bad old: %s\n", result(syscall(SYS_rt_sigaction, SIGUSR1, NULL, bad, 8)));
    printf("sigaction SIGSYS bad act: %s\n",
           result(syscall(SYS_rt_sigaction, SIGSYS, bad, NULL, 8)));
    printf("sigaction SIGSYS bad old: %s\n",
           result(syscall(SYS_rt_sigaction, SIGSYS, NULL, bad, 8)));
    return 0;
}

static volatile sig_atomic_t handled;
#define ALTSTACK_SIZE (6 * 1024)

/* The handler fills its alternate stack but for 1 KiB, enough for write()
 * untraced and too little for any signal frame (a SIGSYS frame is 1-4 KiB
 * by CPU); a guard page lies below. */
static char *altstack_base;

static __attribute__((noinline)) int write_with(size_t fill)
{
    static const char msg[] = "handler wrote\n";
    volatile char buf[fill ? fill : 1];

    for (size_t i = 0; i < fill; i++)
        buf[i] = (char)i;
    return write(1, msg, sizeof(msg) - 1) == (ssize_t)(sizeof(msg) - 1) &&
           (fill < 8 || buf[7] == 7);
}

static void on_usr1(int sig)
{
    char probe;
    size_t left = (size_t)(&probe - altstack_base), keep = 1024 + 256;

    (void)sig;
    handled = write_with(left > keep ? left - keep : 0);
}

static int run_altstack(void)
{
    /* A guard page below: running off the stack is a clean SIGSEGV. */
    char *m = mmap(NULL, 4096 + ALTSTACK_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
    stack_t ss = {.ss_sp = m + 4096, .ss_size = ALTSTACK_SIZE};
    struct sigaction sa = {.sa_handler = on_usr1, .sa_flags = SA_ONSTACK};

    altstack_base = m + 4096;
    fflush(stdout);
    if (write(1, "", 0) != 0) /* binds write() now: lazy binding saves registers on the stack */
        return 1;
    if (m == MAP_FAILED || mprotect(m, 4096, PROT_NONE) != 0 || sigaltstack(&ss, NULL) != 0 ||
        sigaction(SIGUSR1, &sa, NULL) != 0)
        return 1;
    raise(SIGUSR1);
    printf("handled on the alternate stack: %d\n", (int)handled);
    return 0;
}

static volatile sig_atomic_t ticks, in_heap;

static void on_alarm(int sig)
{
    (void)sig;
    if (!in_heap)
        free(malloc(48));
    ticks++;
}

static int run_alarm(long n)
{
    struct sigaction sa = {.sa_handler = on_alarm, .sa_flags = SA_RESTART};
    struct itimerval it = {{0, 20}, {0, 20}};
    struct itimerval off = {{0, 0}, {0, 0}};

    /* The heap is set up first: a handler that mallocs during the very
     * first malloc would break the program untraced too. */
    free(malloc(16));
    sigaction(SIGALRM, &sa, NULL);
    setitimer(ITIMER_REAL, &it, NULL);
    for (long i = 0; i < n; i++) {
        void *p;

        in_heap = 1;
        p = malloc(16 + (size_t)(i % 64) * 8);
        free(p);
        in_heap = 0;
    }
    setitimer(ITIMER_REAL, &off, NULL);
    printf("%ld iterations done, ticks %s\n", n, ticks > 0 ? "seen" : "none");
    return 0;
}

static sigjmp_buf jumped;

static void on_usr2(int sig)
{
    (void)sig;
    siglongjmp(jumped, 1);
}

static int run_altjmp(void)
{
    static char stack[64 * 1024];
    stack_t ss = {.ss_sp = stack, .ss_size = sizeof(stack)};
    struct sigaction sa = {.sa_handler = on_usr2, .sa_flags = SA_ONSTACK};
    void *p;

    if (sigaltstack(&ss, NULL) != 0 || sigaction(SIGUSR2, &sa, NULL) != 0)
        return 1;
    if (!sigsetjmp(jumped, 1))
        raise(SIGUSR2);
    p = malloc(8 << 20);
    printf("back from the handler; 8 MiB malloc %s\n", p ? "ok" : "failed");
    free(p);
    return 0;
}

static int run_mask(void)
{
    sigset_t s, got;

    sigemptyset(&s);
    sigaddset(&s, SIGSYS);
    sigprocmask(SIG_BLOCK, &s, NULL);
    sigprocmask(SIG_BLOCK, NULL, &got);
    printf("SIGSYS blocked as read back: %d\n", sigismember(&got, SIGSYS));
    sigprocmask(SIG_UNBLOCK, &s, NULL);
    sigprocmask(SIG_BLOCK, NULL, &got);
    printf("after unblocking: %d\n", sigismember(&got, SIGSYS));
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "threads"))
        return run_threads(atoi(argv[2]));
    if (argc == 2 && !strcmp(argv[1], "efault"))
        return run_efault();
    if (argc == 2 && !strcmp(argv[1], "altstack"))
        return run_altstack();
    if (argc == 3 && !strcmp(argv[1], "alarm"))
        return run_alarm(atol(argv[2]));
    if (argc == 2 && !strcmp(argv[1], "mask"))
        return run_mask();
    if (argc == 2 && !strcmp(argv[1], "altjmp"))
        return run_altjmp();
    if (argc >= 3 && !strcmp(argv[1], "exec")) {
        free(malloc(31337));
        execv(argv[2], argv + 2);
        perror("vm_harm: exec");
        return 1;
    }
    fprintf(stderr, "usage: vm_harm threads N | efault | altstack | alarm N | mask | altjmp\n");
    return 2;
}
