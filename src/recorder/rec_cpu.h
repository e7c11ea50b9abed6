/* SPDX-License-Identifier: MIT */
/* A thread stopped by ptrace, as each CPU holds it: its general registers
 * (read and written whole), the state beyond them that a call of ours may
 * change (x86's XSAVE area; AArch64's FP/SIMD and SVE registers), and the
 * registers of a call of fn(a0, a1) that returns to address 0, whose fault
 * ends it. record -p (rec_attach.c), its seccomp check (rec_seccomp.c) and
 * --reach's roots (rec_reach.c) use it; everything else of theirs is the
 * same on every CPU. */
#ifndef REC_CPU_H
#define REC_CPU_H

#include <elf.h>
#include <stdint.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/user.h>

/* The extended state's largest size: x86's XSAVE area with AVX-512 is
 * under 3 KiB, AMX's 11 KiB; AArch64's SVE regset at the largest vector
 * length (2048 bits) under 9 KiB. */
#define REC_CPU_EXT_MAX 16384

struct rec_cpu_ext {
    unsigned char buf[REC_CPU_EXT_MAX];
    struct iovec iov;
    int have;
#if defined(__aarch64__)
    struct user_fpsimd_struct fp; /* NT_PRFPREG: v0-v31, fpsr, fpcr */
    struct iovec fp_iov;
    int have_fp;
#endif
};

/* The general registers of a stopped thread, in this recorder's layout
 * (an i386 thread's too, widened: x86-64's PTRACE_GETREGS, where
 * NT_PRSTATUS would give the tracee's own layout): 0, or -1 with errno. */
static inline int rec_cpu_get(pid_t tid, struct user_regs_struct *r)
{
#if defined(__x86_64__)
    return ptrace(PTRACE_GETREGS, tid, 0L, r) == 0 ? 0 : -1;
#else
    struct iovec iov = {r, sizeof(*r)};

    return ptrace(PTRACE_GETREGSET, tid, (void *)NT_PRSTATUS, &iov) == 0 ? 0 : -1;
#endif
}

static inline int rec_cpu_set(pid_t tid, const struct user_regs_struct *r)
{
#if defined(__x86_64__)
    return ptrace(PTRACE_SETREGS, tid, 0L, r) == 0 ? 0 : -1;
#else
    struct iovec iov = {(void *)r, sizeof(*r)};

    return ptrace(PTRACE_SETREGSET, tid, (void *)NT_PRSTATUS, &iov) == 0 ? 0 : -1;
#endif
}

#if defined(__x86_64__)

#define REC_CPU_ATTACH 1 /* record -p, --reach: built for this CPU */

static inline uint64_t rec_cpu_sp(const struct user_regs_struct *r)
{
    return r->rsp;
}
static inline uint64_t rec_cpu_pc(const struct user_regs_struct *r)
{
    return r->rip;
}
static inline uint64_t rec_cpu_result(const struct user_regs_struct *r)
{
    return r->rax;
}

/* A call of fn(a0, a1) on a stack whose top is sp, the return address
 * (0) already there: rdi and rsi (i386's arguments are on the stack: the
 * caller writes them), and no system call to restart under it. */
static inline void rec_cpu_call(struct user_regs_struct *r, uint64_t fn, uint64_t sp, uint64_t a0,
                                uint64_t a1)
{
    r->rsp = sp;
    r->rip = fn;
    r->rdi = a0;
    r->rsi = a1;
    r->rax = 0;
    r->orig_rax = (uint64_t)-1;
}

/* Bytes of the return address a call pushes (x86-64's: the caller writes
 * a 0 there); 0 where it goes in a register. */
#define REC_CPU_RA_ON_STACK 8

static inline void rec_cpu_ext_save(pid_t tid, struct rec_cpu_ext *x)
{
    x->iov = (struct iovec){x->buf, sizeof(x->buf)};
    x->have = ptrace(PTRACE_GETREGSET, tid, (void *)NT_X86_XSTATE, &x->iov) == 0;
}

static inline void rec_cpu_ext_restore(pid_t tid, struct rec_cpu_ext *x)
{
    if (x->have)
        ptrace(PTRACE_SETREGSET, tid, (void *)NT_X86_XSTATE, &x->iov);
}

#elif defined(__aarch64__)

#define REC_CPU_ATTACH 1

#ifndef NT_ARM_SVE
#define NT_ARM_SVE 0x405
#endif

static inline uint64_t rec_cpu_sp(const struct user_regs_struct *r)
{
    return r->sp;
}
static inline uint64_t rec_cpu_pc(const struct user_regs_struct *r)
{
    return r->pc;
}
static inline uint64_t rec_cpu_result(const struct user_regs_struct *r)
{
    return r->regs[0];
}

/* x0 and x1, and x30 (the link register) 0: the return faults at pc 0.
 * A system call the thread was stopped in needs no care here: the kernel
 * rewound it (pc back on its svc, x0 its first argument) before the stop,
 * and restarts nothing at a pc that is not that svc's. */
static inline void rec_cpu_call(struct user_regs_struct *r, uint64_t fn, uint64_t sp, uint64_t a0,
                                uint64_t a1)
{
    r->sp = sp;
    r->pc = fn;
    r->regs[0] = a0;
    r->regs[1] = a1;
    r->regs[30] = 0;
}

#define REC_CPU_RA_ON_STACK 0

/* The FP/SIMD registers, and the SVE registers where the CPU has them: a
 * thread stopped anywhere may be in the middle of vector code, and the C
 * library's string functions our calls run use the vector registers.
 * Written back FP/SIMD first, then SVE, whose regset holds the FP/SIMD
 * registers too when SVE is in use. (SME's streaming state is not kept:
 * a thread in streaming mode is not expected in Debian 12's programs.) */
static inline void rec_cpu_ext_save(pid_t tid, struct rec_cpu_ext *x)
{
    x->fp_iov = (struct iovec){&x->fp, sizeof(x->fp)};
    x->have_fp = ptrace(PTRACE_GETREGSET, tid, (void *)NT_PRFPREG, &x->fp_iov) == 0;
    x->iov = (struct iovec){x->buf, sizeof(x->buf)};
    x->have = ptrace(PTRACE_GETREGSET, tid, (void *)NT_ARM_SVE, &x->iov) == 0;
}

static inline void rec_cpu_ext_restore(pid_t tid, struct rec_cpu_ext *x)
{
    if (x->have_fp)
        ptrace(PTRACE_SETREGSET, tid, (void *)NT_PRFPREG, &x->fp_iov);
    if (x->have)
        ptrace(PTRACE_SETREGSET, tid, (void *)NT_ARM_SVE, &x->iov);
}

#endif /* another CPU: no REC_CPU_ATTACH, record -p and --reach say so */

#endif
