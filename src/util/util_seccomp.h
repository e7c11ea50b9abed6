/* SPDX-License-Identifier: MIT */
/* A seccomp filter (the classic BPF program prctl(PR_SET_SECCOMP) and
 * seccomp(2) take) run on one system call, as the kernel runs it
 * (kernel/seccomp.c: seccomp_check_filter, seccomp_run_filters): what it
 * would return. For checking a filter against calls we are about to make:
 * `record -p` against the filters of each thread it attaches to
 * (src/recorder/rec_seccomp.c), the collector against a filter the
 * program installs (src/collector/col_hooks_sys.c). Header-only: the
 * collector includes it without linking. Allocates nothing. */
#ifndef UTIL_SECCOMP_H
#define UTIL_SECCOMP_H

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* util_seccomp_run's answers besides a return value: the kernel would not
 * take the program; the program reads the instruction address, which we
 * cannot know for a call we have not made yet. */
#define UTIL_SECCOMP_INVALID (-1)
#define UTIL_SECCOMP_READS_IP (-2)

/* What filter f of len instructions returns for the call d (a SECCOMP_RET_
 * value, >= 0), or UTIL_SECCOMP_INVALID, or UTIL_SECCOMP_READS_IP. Runs
 * what seccomp_check_filter and bpf_check_classic let through, with their
 * checks (jumps in range, scratch words, no division by a zero constant,
 * a last instruction that returns); a division by a zero X returns 0, as
 * the kernel's does (SECCOMP_RET_KILL_THREAD). */
static inline int64_t util_seccomp_run(const struct sock_filter *f, uint32_t len,
                                       const struct seccomp_data *d)
{
    uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = {0};

    if (len == 0 || len > BPF_MAXINSNS || BPF_CLASS(f[len - 1].code) != BPF_RET)
        return UTIL_SECCOMP_INVALID;
    for (uint32_t pc = 0; pc < len; pc++) {
        const struct sock_filter *i = &f[pc];
        uint32_t k = i->k, src = BPF_SRC(i->code) == BPF_X ? x : k;
        int taken;

        switch (i->code) {
        case BPF_LD | BPF_W | BPF_ABS:
            if (k >= sizeof(*d) || (k & 3))
                return UTIL_SECCOMP_INVALID;
            if (k >= offsetof(struct seccomp_data, instruction_pointer) &&
                k < offsetof(struct seccomp_data, args))
                return UTIL_SECCOMP_READS_IP;
            memcpy(&a, (const char *)d + k, sizeof(a));
            continue;
        case BPF_LD | BPF_W | BPF_LEN:
            a = sizeof(*d);
            continue;
        case BPF_LDX | BPF_W | BPF_LEN:
            x = sizeof(*d);
            continue;
        case BPF_LD | BPF_IMM:
            a = k;
            continue;
        case BPF_LDX | BPF_IMM:
            x = k;
            continue;
        case BPF_MISC | BPF_TAX:
            x = a;
            continue;
        case BPF_MISC | BPF_TXA:
            a = x;
            continue;
        case BPF_LD | BPF_MEM:
        case BPF_LDX | BPF_MEM:
        case BPF_ST:
        case BPF_STX:
            if (k >= BPF_MEMWORDS)
                return UTIL_SECCOMP_INVALID;
            if (i->code == (BPF_LD | BPF_MEM))
                a = mem[k];
            else if (i->code == (BPF_LDX | BPF_MEM))
                x = mem[k];
            else
                mem[k] = i->code == BPF_ST ? a : x;
            continue;
        case BPF_ALU | BPF_NEG:
            a = -a;
            continue;
        case BPF_ALU | BPF_ADD | BPF_K:
        case BPF_ALU | BPF_ADD | BPF_X:
            a += src;
            continue;
        case BPF_ALU | BPF_SUB | BPF_K:
        case BPF_ALU | BPF_SUB | BPF_X:
            a -= src;
            continue;
        case BPF_ALU | BPF_MUL | BPF_K:
        case BPF_ALU | BPF_MUL | BPF_X:
            a *= src;
            continue;
        case BPF_ALU | BPF_DIV | BPF_K:
        case BPF_ALU | BPF_DIV | BPF_X:
            if (src == 0)
                return BPF_SRC(i->code) == BPF_K ? UTIL_SECCOMP_INVALID : 0;
            a /= src;
            continue;
        case BPF_ALU | BPF_AND | BPF_K:
        case BPF_ALU | BPF_AND | BPF_X:
            a &= src;
            continue;
        case BPF_ALU | BPF_OR | BPF_K:
        case BPF_ALU | BPF_OR | BPF_X:
            a |= src;
            continue;
        case BPF_ALU | BPF_XOR | BPF_K:
        case BPF_ALU | BPF_XOR | BPF_X:
            a ^= src;
            continue;
        case BPF_ALU | BPF_LSH | BPF_K:
        case BPF_ALU | BPF_LSH | BPF_X:
        case BPF_ALU | BPF_RSH | BPF_K:
        case BPF_ALU | BPF_RSH | BPF_X:
            if (BPF_SRC(i->code) == BPF_K && k >= 32)
                return UTIL_SECCOMP_INVALID;
            a = BPF_OP(i->code) == BPF_LSH ? a << (src & 31) : a >> (src & 31);
            continue;
        case BPF_JMP | BPF_JA:
            if (k >= len - pc - 1)
                return UTIL_SECCOMP_INVALID;
            pc += k;
            continue;
        case BPF_JMP | BPF_JEQ | BPF_K:
        case BPF_JMP | BPF_JEQ | BPF_X:
        case BPF_JMP | BPF_JGT | BPF_K:
        case BPF_JMP | BPF_JGT | BPF_X:
        case BPF_JMP | BPF_JGE | BPF_K:
        case BPF_JMP | BPF_JGE | BPF_X:
        case BPF_JMP | BPF_JSET | BPF_K:
        case BPF_JMP | BPF_JSET | BPF_X:
            if (pc + i->jt + 1 >= len || pc + i->jf + 1 >= len)
                return UTIL_SECCOMP_INVALID;
            switch (BPF_OP(i->code)) {
            case BPF_JEQ:
                taken = a == src;
                break;
            case BPF_JGT:
                taken = a > src;
                break;
            case BPF_JGE:
                taken = a >= src;
                break;
            default:
                taken = (a & src) != 0;
                break;
            }
            pc += taken ? i->jt : i->jf;
            continue;
        case BPF_RET | BPF_K:
            return k;
        case BPF_RET | BPF_A:
            return a;
        default:
            return UTIL_SECCOMP_INVALID;
        }
    }
    return UTIL_SECCOMP_INVALID; /* not reached: the last instruction returns */
}

/* Of two filters' answers for one call, the one the kernel acts on: the
 * lowest action, compared as signed (SECCOMP_RET_KILL_PROCESS first). */
static inline uint32_t util_seccomp_first(uint32_t a, uint32_t b)
{
    return (int32_t)(a & SECCOMP_RET_ACTION_FULL) <= (int32_t)(b & SECCOMP_RET_ACTION_FULL) ? a : b;
}

/* NULL if a call the filter answers ret goes through (SECCOMP_RET_ALLOW,
 * _LOG), else what happens to it instead. An action the kernel does not
 * know kills the process (__seccomp_filter). */
static inline const char *util_seccomp_forbids(uint32_t ret)
{
    switch (ret & SECCOMP_RET_ACTION_FULL) {
    case SECCOMP_RET_ALLOW:
    case SECCOMP_RET_LOG:
        return NULL;
    case SECCOMP_RET_ERRNO:
        return "fails with an error (SECCOMP_RET_ERRNO)";
    case SECCOMP_RET_TRAP:
        return "raises SIGSYS (SECCOMP_RET_TRAP)";
    case SECCOMP_RET_TRACE:
        return "is left to a tracer (SECCOMP_RET_TRACE)";
    case SECCOMP_RET_USER_NOTIF:
        return "waits for a supervisor (SECCOMP_RET_USER_NOTIF)";
    case SECCOMP_RET_KILL_THREAD:
        return "kills the thread (SECCOMP_RET_KILL_THREAD)";
    default:
        return "kills the process (SECCOMP_RET_KILL_PROCESS)";
    }
}

#endif
