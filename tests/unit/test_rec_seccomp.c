/* SPDX-License-Identifier: MIT */
/* record -p's seccomp check (src/recorder/rec_seccomp.c): the evaluator
 * (src/util/util_seccomp.h) on filters built with struct sock_filter, as
 * programs write them, against the calls of fmt_shm_calls.h; the kernel's
 * precedence of actions; programs the kernel would refuse; and the filters
 * of real processes, installed with prctl(PR_SET_SECCOMP,
 * SECCOMP_MODE_FILTER), read back with ptrace and judged (as root: reading
 * a filter needs CAP_SYS_ADMIN). */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "format/fmt_shm_calls.h"
#include "recorder/rec_attach.h"
#include "util/util_seccomp.h"

#define ALL_CALLS                                                                                  \
    (FMT_CALL_INJECT | FMT_CALL_START | FMT_CALL_THREAD | FMT_CALL_ATTACH | FMT_CALL_PRECISE |     \
     FMT_CALL_STOP)
#define LD_NR BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))
#define LD_ARCH BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch))
#define LD_ARG(i) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[i]))
#define RET(v) BPF_STMT(BPF_RET | BPF_K, (v))
#define IF_EQ(k, skip_if_not) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (k), 0, (skip_if_not))

/* Judge one filter on the calls of when, this machine's 64-bit ABI (is32:
 * i386's); returns the call's name
 * or NULL, the effect in *effect. */
static const char *judge1(struct sock_filter *insns, uint32_t len, int is32, unsigned when,
                          const char **effect)
{
    uint32_t lens[1] = {len};
    struct rec_seccomp_filters f = {insns, lens, 1};
    const struct fmt_shm_call *c = rec_seccomp_judge(&f, is32, when, effect);

    return c ? fmt_shm_call_name(c, is32 ? FMT_ABI_I386 : FMT_ABI_NATIVE) : NULL;
}

static void test_allow_and_kill_all(void **state)
{
    struct sock_filter allow[] = {RET(SECCOMP_RET_ALLOW)}, kill[] = {RET(SECCOMP_RET_KILL_PROCESS)};
    const char *effect = NULL;

    (void)state;
    assert_null(judge1(allow, 1, 0, ALL_CALLS, &effect));
    assert_null(judge1(allow, 1, 1, ALL_CALLS, &effect));
    assert_string_equal(judge1(kill, 1, 0, FMT_CALL_THREAD, &effect), "gettid");
    assert_string_equal(effect, "kills the process (SECCOMP_RET_KILL_PROCESS)");
}

/* A whitelist of every call the table names on this machine's ABI, but
 * skip_nr; another ABI is killed. */
static uint32_t whitelist(struct sock_filter *out, long skip_nr)
{
    uint32_t n = 0;
    long seen[512];
    int nr_seen = 0;

    out[n++] = (struct sock_filter)LD_ARCH;
    out[n++] = (struct sock_filter)IF_EQ(fmt_call_arch[FMT_ABI_NATIVE], 0); /* jf set below */
    out[n++] = (struct sock_filter)LD_NR;
    for (size_t i = 0; i < FMT_SHM_NR_CALLS; i++) {
        long nr = fmt_shm_calls[i].nr[FMT_ABI_NATIVE];
        int dup = 0;

        for (int j = 0; j < nr_seen; j++)
            dup |= seen[j] == nr;
        if (nr < 0 || nr == skip_nr || dup)
            continue;
        seen[nr_seen++] = nr;
        out[n++] = (struct sock_filter)IF_EQ((uint32_t)nr, 1);
        out[n++] = (struct sock_filter)RET(SECCOMP_RET_ALLOW);
    }
    out[n++] = (struct sock_filter)RET(SECCOMP_RET_KILL_PROCESS);
    out[1].jf = (uint8_t)(n - 3); /* another ABI: to the last RET */
    return n;
}

static void test_whitelist_names_the_call(void **state)
{
    struct sock_filter f[256];
    const char *effect = NULL;
    uint32_t n;

    (void)state;
    n = whitelist(f, -1);
    assert_null(judge1(f, n, 0, ALL_CALLS, &effect));
    /* Another ABI dies at its first call. */
    assert_non_null(judge1(f, n, 1, FMT_CALL_THREAD, &effect));
    n = whitelist(f, SYS_mprotect);
    /* dlopen's RELRO and the GOT need mprotect; nothing else does. */
    assert_string_equal(judge1(f, n, 0, ALL_CALLS, &effect), "mprotect");
    assert_string_equal(effect, "kills the process (SECCOMP_RET_KILL_PROCESS)");
    assert_null(judge1(f, n, 0, FMT_CALL_START | FMT_CALL_THREAD, &effect));
    n = whitelist(f, SYS_getpid);
    assert_string_equal(judge1(f, n, 0, FMT_CALL_THREAD, &effect), "getpid");
    n = whitelist(f, SYS_memfd_create);
    assert_string_equal(judge1(f, n, 0, FMT_CALL_THREAD, &effect), "memfd_create");
}

/* Call nr with PROT_EXEC in its third argument gets action, anything
 * else goes through (as systemd's MemoryDenyWriteExecute= checks). */
static void deny_exec(struct sock_filter out[6], uint32_t nr, uint32_t action)
{
    struct sock_filter f[6] = {
        LD_NR,
        IF_EQ(nr, 2),
        LD_ARG(2),
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 4 /* PROT_EXEC */, 1, 0),
        RET(SECCOMP_RET_ALLOW),
        RET(action),
    };

    memcpy(out, f, sizeof(f));
}

/* Arguments: mprotect and mmap denied only with PROT_EXEC. */
static void test_arguments(void **state)
{
    struct sock_filter deny_exec_mprotect[6], deny_exec_mmap[6];
    const struct fmt_shm_call *c;
    const char *effect = NULL;
    uint32_t len = 6;
    struct rec_seccomp_filters f = {deny_exec_mmap, &len, 1};

    (void)state;
    deny_exec(deny_exec_mprotect, SYS_mprotect, SECCOMP_RET_ERRNO | EPERM);
    deny_exec(deny_exec_mmap, SYS_mmap, SECCOMP_RET_TRAP);
    assert_null(judge1(deny_exec_mprotect, 6, 0, ALL_CALLS, &effect));
    c = rec_seccomp_judge(&f, 0, ALL_CALLS, &effect);
    assert_non_null(c);
    assert_string_equal(c->why, "loading the attach collector (dlopen): its code");
    assert_string_equal(effect, "raises SIGSYS (SECCOMP_RET_TRAP)");
    assert_null(
        rec_seccomp_judge(&f, 0, FMT_CALL_START | FMT_CALL_THREAD | FMT_CALL_ATTACH, &effect));
}

static void test_i386_names(void **state)
{
    struct sock_filter kill_mmap2[] = {LD_NR, IF_EQ(192, 1), RET(SECCOMP_RET_KILL_THREAD),
                                       RET(SECCOMP_RET_ALLOW)};
    const char *effect = NULL;

    (void)state;
    assert_string_equal(judge1(kill_mmap2, 4, 1, FMT_CALL_THREAD, &effect), "mmap2");
    assert_string_equal(effect, "kills the thread (SECCOMP_RET_KILL_THREAD)");
    assert_null(judge1(kill_mmap2, 4, 0, FMT_CALL_THREAD, &effect)); /* 192 is lgetxattr there */
}

/* Several filters: the kernel acts on the lowest action. */
static void test_precedence(void **state)
{
    static const struct {
        uint32_t a, b;
        const char *effect;
    } cases[] = {
        {SECCOMP_RET_ERRNO | EPERM, SECCOMP_RET_KILL_PROCESS, "kills the process"},
        {SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO | 1, "fails with an error"},
        {SECCOMP_RET_LOG, SECCOMP_RET_ALLOW, NULL},
        {SECCOMP_RET_TRACE, SECCOMP_RET_USER_NOTIF, "waits for a supervisor"},
        {SECCOMP_RET_TRACE, SECCOMP_RET_LOG, "is left to a tracer"},
        {SECCOMP_RET_TRAP, SECCOMP_RET_KILL_THREAD, "kills the thread"},
        {0x12340000u, SECCOMP_RET_ALLOW, "kills the process"}, /* an action unknown */
    };
    const char *effect;

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct sock_filter insns[4] = {LD_NR, IF_EQ(SYS_gettid, 1), RET(cases[i].a),
                                       RET(SECCOMP_RET_ALLOW)};
        uint32_t lens[2] = {4, 4};
        struct sock_filter both[8];
        struct rec_seccomp_filters f = {both, lens, 2};
        const struct fmt_shm_call *c;

        memcpy(both, insns, sizeof(insns));
        memcpy(both + 4, insns, sizeof(insns));
        both[6] = (struct sock_filter)RET(cases[i].b);
        effect = NULL;
        c = rec_seccomp_judge(&f, 0, FMT_CALL_THREAD, &effect);
        if (!cases[i].effect) {
            assert_null(c);
            continue;
        }
        assert_non_null(c);
        assert_string_equal(c->name, "gettid");
        assert_non_null(strstr(effect, cases[i].effect));
    }
}

/* The ALU, the scratch words, X and RET A, as a compiler of filters uses
 * them: A = (nr * 2 + 6) / 2 - 3 = nr, kept in M[3]; X = ERRNO's action;
 * RET A = ERRNO | nr. */
static void test_alu(void **state)
{
    struct sock_filter f[] = {
        LD_NR,
        BPF_STMT(BPF_ALU | BPF_MUL | BPF_K, 2),
        BPF_STMT(BPF_ALU | BPF_ADD | BPF_K, 6),
        BPF_STMT(BPF_ALU | BPF_DIV | BPF_K, 2),
        BPF_STMT(BPF_ALU | BPF_SUB | BPF_K, 3),
        BPF_STMT(BPF_ST, 3),
        BPF_STMT(BPF_LD | BPF_IMM, SECCOMP_RET_ERRNO >> 4),
        BPF_STMT(BPF_ALU | BPF_LSH | BPF_K, 4),
        BPF_STMT(BPF_MISC | BPF_TAX, 0),
        BPF_STMT(BPF_LD | BPF_MEM, 3),
        BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xffff),
        BPF_STMT(BPF_ALU | BPF_OR | BPF_X, 0),
        BPF_STMT(BPF_RET | BPF_A, 0),
    };
    struct seccomp_data d = {.nr = SYS_getpid, .arch = fmt_call_arch[FMT_ABI_NATIVE]};

    (void)state;
    assert_int_equal(util_seccomp_run(f, sizeof(f) / sizeof(f[0]), &d),
                     SECCOMP_RET_ERRNO | SYS_getpid);
}

static void test_refused_programs(void **state)
{
    /* Programs the kernel refuses (bpf_check_classic, seccomp_check_filter),
     * two instructions each. */
    static const struct sock_filter refused[][2] = {
        {BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 1, 5, 0), RET(SECCOMP_RET_ALLOW)}, /* jumps out */
        {LD_NR, BPF_STMT(BPF_ALU | BPF_ADD | BPF_K, 1)},                        /* no RET last */
        {BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 2), RET(SECCOMP_RET_ALLOW)},        /* misaligned */
        {BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 64), RET(SECCOMP_RET_ALLOW)},       /* past the data */
        {BPF_STMT(BPF_ALU | BPF_DIV | BPF_K, 0), RET(SECCOMP_RET_ALLOW)},
        {BPF_STMT(BPF_ALU | BPF_LSH | BPF_K, 32), RET(SECCOMP_RET_ALLOW)},
        {BPF_STMT(BPF_ALU | BPF_MOD | BPF_K, 3), RET(SECCOMP_RET_ALLOW)}, /* not for seccomp */
        {BPF_STMT(BPF_JMP | BPF_JA, 1), RET(SECCOMP_RET_ALLOW)},
        {BPF_STMT(BPF_ST, 16), RET(SECCOMP_RET_ALLOW)},
    };
    struct seccomp_data d = {.nr = SYS_getpid, .arch = fmt_call_arch[FMT_ABI_NATIVE]};
    struct sock_filter reads_ip[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, instruction_pointer)),
        RET(SECCOMP_RET_ALLOW)};
    struct sock_filter div_x0[] = {BPF_STMT(BPF_LDX | BPF_IMM, 0),
                                   BPF_STMT(BPF_ALU | BPF_DIV | BPF_X, 0), RET(SECCOMP_RET_ALLOW)};
    const char *effect = NULL;

    (void)state;
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
        assert_int_equal(util_seccomp_run(refused[i], 2, &d), UTIL_SECCOMP_INVALID);
    assert_int_equal(util_seccomp_run(refused[0], 0, &d), UTIL_SECCOMP_INVALID);
    assert_int_equal(util_seccomp_run(reads_ip, 2, &d), UTIL_SECCOMP_READS_IP);
    assert_int_equal(util_seccomp_run(div_x0, 3, &d), SECCOMP_RET_KILL_THREAD);
    assert_non_null(judge1(reads_ip, 2, 0, FMT_CALL_THREAD, &effect));
    assert_non_null(strstr(effect, "instruction address"));
}

/* A child that installs filter f (NULL: none), or enters strict mode,
 * and waits. */
static pid_t child_with(const struct sock_filter *f, unsigned short len, int strict)
{
    int p[2], block[2];
    char c;
    pid_t pid;

    assert_int_equal(pipe(p), 0);
    assert_int_equal(pipe(block), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct sock_fprog prog = {len, (struct sock_filter *)f};

        close(p[0]);
        if (strict) {
            syscall(SYS_seccomp, SECCOMP_SET_MODE_STRICT, 0, NULL);
            if (write(p[1], "s", 1) != 1 || read(block[0], &c, 1) < 0) /* waits for good */
                syscall(SYS_exit, 1);
            syscall(SYS_exit, 0);
        }
        if (f && (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
                  prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0))
            _exit(1);
        if (write(p[1], "r", 1) != 1)
            _exit(1);
        for (;;)
            pause();
    }
    close(p[1]);
    close(block[0]);
    close(block[1]);
    assert_int_equal(read(p[0], &c, 1), 1);
    close(p[0]);
    return pid;
}

static void end_child(pid_t pid)
{
    int status;

    kill(pid, SIGKILL);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL); /* nothing killed it before */
}

static void test_real_process(void **state)
{
    struct sock_filter kill_mprotect[] = {LD_NR, IF_EQ(SYS_mprotect, 1),
                                          RET(SECCOMP_RET_KILL_PROCESS), RET(SECCOMP_RET_ALLOW)};
    struct sock_filter allow[] = {RET(SECCOMP_RET_ALLOW)};
    struct rec_seccomp_filters got;
    char msg[1024], want[64];
    pid_t pid;

    (void)state;
    if (geteuid() != 0)
        skip(); /* reading a filter needs CAP_SYS_ADMIN */

    pid = child_with(kill_mprotect, 4, 0);
    /* The filter as installed, read back. */
    assert_int_equal(rec_attach_stop_thread(pid), 0);
    assert_int_equal(rec_seccomp_read(pid, &got), 0);
    rec_attach_let_go(pid);
    assert_int_equal(got.nr, 1);
    assert_int_equal(got.len[0], 4);
    assert_memory_equal(got.insns, kill_mprotect, sizeof(kill_mprotect));
    rec_seccomp_free(&got);
    assert_int_equal(rec_seccomp_check(pid, pid, 0, msg, sizeof(msg)), -1);
    snprintf(want, sizeof(want), "thread %d's seccomp filter", (int)pid);
    assert_non_null(strstr(msg, want));
    assert_non_null(strstr(msg, ": mprotect ("));
    end_child(pid);

    pid = child_with(allow, 1, 0);
    assert_int_equal(rec_seccomp_check(pid, pid, 0, msg, sizeof(msg)), 0);
    end_child(pid);

    pid = child_with(NULL, 0, 0);
    assert_int_equal(rec_seccomp_check(pid, pid, 0, msg, sizeof(msg)), 0);
    end_child(pid);

    pid = child_with(NULL, 0, 1);
    assert_int_equal(rec_seccomp_check(pid, pid, 0, msg, sizeof(msg)), -1);
    assert_non_null(strstr(msg, "is in seccomp strict mode"));
    end_child(pid);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_allow_and_kill_all), cmocka_unit_test(test_whitelist_names_the_call),
        cmocka_unit_test(test_arguments),          cmocka_unit_test(test_i386_names),
        cmocka_unit_test(test_precedence),         cmocka_unit_test(test_alu),
        cmocka_unit_test(test_refused_programs),   cmocka_unit_test(test_real_process),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
