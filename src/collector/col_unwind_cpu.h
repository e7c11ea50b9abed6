/* SPDX-License-Identifier: MIT */
/* What the own unwinder (col_unwind.c) knows of each CPU it walks: DWARF's
 * numbers for the three registers a walk follows, a signal context's
 * registers, how a return address is stripped of its signature, and the
 * signal trampoline that has no CFI. Everything else of a walk is the
 * CFI's, the same on both. */
#ifndef COL_UNWIND_CPU_H
#define COL_UNWIND_CPU_H

#include <signal.h>
#include <stdint.h>
#include <ucontext.h>

/* The registers of a signal context the walk starts from. */
struct col_cpu_context {
    uint64_t ip, sp, fp, lr;
};

#if defined(__x86_64__)

/* psABI figure 3.36: rbp, rsp, and the return address column (the return
 * address is on the stack, at CFA - 8 in every frame). */
#define COL_DW_FP 6
#define COL_DW_SP 7
#define COL_DW_RA 16
#define COL_CPU_LR 0 /* no link register */

static inline struct col_cpu_context col_cpu_context(const ucontext_t *u)
{
    return (struct col_cpu_context){(uint64_t)u->uc_mcontext.gregs[REG_RIP],
                                    (uint64_t)u->uc_mcontext.gregs[REG_RSP],
                                    (uint64_t)u->uc_mcontext.gregs[REG_RBP], 0};
}

/* No return address is signed here. */
static inline uint64_t col_cpu_ra_strip(uint64_t ra)
{
    return ra;
}

/* glibc's __restore_rt has CFI: no trampoline is found by its code. */
static inline int col_cpu_sigreturn_at(uint64_t ip)
{
    (void)ip;
    return 0;
}

static inline struct col_cpu_context col_cpu_sigframe(uint64_t sp)
{
    (void)sp;
    return (struct col_cpu_context){0, 0, 0, 0};
}

#elif defined(__aarch64__)

/* DWARF for the Arm 64-bit architecture (AADWARF64) 4.1: x29 the frame
 * pointer, sp, and x30, the link register, as the return address column.
 * A call puts the return address in x30, not on the stack: a function
 * that calls saves it (CFI: x30 at an offset from the CFA) before its
 * first call, so every frame but an interrupted one has it in memory; an
 * interrupted leaf may still hold it in x30 (the rule "same value"). */
#define COL_DW_FP 29
#define COL_DW_SP 31
#define COL_DW_RA 30
#define COL_CPU_LR 1

static inline struct col_cpu_context col_cpu_context(const ucontext_t *u)
{
    return (struct col_cpu_context){u->uc_mcontext.pc, u->uc_mcontext.sp, u->uc_mcontext.regs[29],
                                    u->uc_mcontext.regs[30]};
}

/* A return address signed by pointer authentication (code built with
 * -mbranch-protection; its CFI says DW_CFA_AARCH64_negate_ra_state), its
 * signature taken off by XPACLRI, which works on x30 only and is a no-op
 * (a hint) on a CPU without the extension. Debian 12's own binaries sign
 * none. */
static inline uint64_t col_cpu_ra_strip(uint64_t ra)
{
    register uint64_t x30 __asm__("x30") = ra;

    __asm__("hint 7" /* xpaclri */ : "+r"(x30));
    return x30;
}

/* Is ip the signal return trampoline, `mov x8, #139 (rt_sigreturn); svc
 * #0`? The kernel's vDSO has one, qemu-user's signal page another without
 * CFI; a handler returns to it. Found by its code, as libunwind and libgcc
 * find it (libunwind before the CFI, which in the vDSO describes only the
 * frame record). */
static inline int col_cpu_sigreturn_at(uint64_t ip)
{
    const uint32_t *code = (const uint32_t *)(uintptr_t)ip;

    return !(ip & 3) && code[0] == 0xd2801168u && code[1] == 0xd4000001u;
}

/* The registers a handler interrupted, from its frame at sp (the
 * trampoline's): the kernel's struct rt_sigframe, a siginfo_t and then the
 * ucontext_t. */
static inline struct col_cpu_context col_cpu_sigframe(uint64_t sp)
{
    const ucontext_t *u = (const ucontext_t *)(uintptr_t)(sp + sizeof(siginfo_t));

    return col_cpu_context(u);
}

#else
#error "the own unwinder walks x86-64 and AArch64 only (COL_UNWIND_LIBGCC elsewhere)"
#endif

#endif
