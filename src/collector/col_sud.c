/* SPDX-License-Identifier: MIT */
/* Precise capture of every mapping by Syscall User Dispatch: the mmap,
 * munmap, mremap, mprotect and brk that libc, ld.so and pthread_create issue
 * themselves, which no LD_PRELOAD wrapper sees (docs/record.md).
 *
 * With dispatch on, every syscall a thread makes from outside our allowed
 * code range while its selector byte reads BLOCK raises SIGSYS. The handler
 * re-issues it from the allowed range and records the virtual-memory ones.
 * Collector code runs with the selector on ALLOW, so the public hooks'
 * own real calls never trap twice (no double counting).
 *
 * Signals stay usable: rt_sigprocmask and rt_sigaction made by the program
 * trap too and are emulated so that SIGSYS is never blocked and the
 * program's own SIGSYS disposition is kept aside and served; a signal the
 * program sends itself stays pending until our handler has returned, so it
 * arrives where it would untraced. Syscalls that must run in the program's
 * own context (clone, fork, vfork, exec, sigreturn of its handlers, whose
 * restorer is glibc's and outside our range) run from a per-call-site
 * trampoline inside the allowed range that returns to the program's next
 * instruction: the selector stays armed throughout. docs/vmem.md. */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <ucontext.h>
#include <unistd.h>

#include "collector/col_internal.h"

#define COL_EXPORT __attribute__((visibility("default")))

#ifndef PR_SET_SYSCALL_USER_DISPATCH
#define PR_SET_SYSCALL_USER_DISPATCH 59
#define PR_SYS_DISPATCH_ON 1
#endif
#ifndef SYS_USER_DISPATCH
#define SYS_USER_DISPATCH 2 /* si_code of a dispatch trap */
#endif
#ifndef SA_RESTORER
#define SA_RESTORER 0x04000000
#endif

int col_sud_on;

#if defined(__x86_64__) || defined(__i386__)

#define COL_TRAMPS 64
#define COL_TRAMP_LIST                                                                             \
    "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33," \
    "34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50,51,52,53,54,55,56,57,58,59,60,61,62,63"

/* Return addresses of the trampolines, one per call site (col_sud_tramp). */
_Atomic uintptr_t col_sud_slots[COL_TRAMPS] __attribute__((visibility("hidden")));

/* The allowed range: a raw syscall stub, our rt_sigreturn restorer and
 * the trampolines.
 * The restorer's bytes are exactly glibc's, which is how libunwind and
 * libgcc recognise a signal frame. */
#if defined(__x86_64__)
__asm__(".pushsection col_sud_text,\"ax\",@progbits\n"
        ".globl col_sud_syscall6\n"
        ".hidden col_sud_syscall6\n"
        ".type col_sud_syscall6,@function\n"
        ".p2align 4\n"
        "col_sud_syscall6:\n"
        "  mov %rdi,%rax\n"
        "  mov %rsi,%rdi\n"
        "  mov %rdx,%rsi\n"
        "  mov %rcx,%rdx\n"
        "  mov %r8,%r10\n"
        "  mov %r9,%r8\n"
        "  mov 8(%rsp),%r9\n"
        "  syscall\n"
        "  ret\n"
        ".size col_sud_syscall6,.-col_sud_syscall6\n"
        /* The restorer's unwind information says where the interrupted
         * context is (the ucontext at the stack pointer, as glibc's
         * __restore_rt says it), so that unw_backtrace from the handler
         * walks on into the program; the nop makes the return address
         * minus one fall inside it. */
        ".p2align 4\n"
        "  .cfi_startproc simple\n"
        "  .cfi_signal_frame\n"
        "  .cfi_escape 0x0f,0x4,0x77,0xa0,0x1,0x6\n"
        "  .cfi_escape 0x10,0x8,0x2,0x77,0x28\n"
        "  .cfi_escape 0x10,0x9,0x2,0x77,0x30\n"
        "  .cfi_escape 0x10,0xa,0x2,0x77,0x38\n"
        "  .cfi_escape 0x10,0xb,0x3,0x77,0xc0,0x0\n"
        "  .cfi_escape 0x10,0xc,0x3,0x77,0xc8,0x0\n"
        "  .cfi_escape 0x10,0xd,0x3,0x77,0xd0,0x0\n"
        "  .cfi_escape 0x10,0xe,0x3,0x77,0xd8,0x0\n"
        "  .cfi_escape 0x10,0xf,0x3,0x77,0xe0,0x0\n"
        "  .cfi_escape 0x10,0x5,0x3,0x77,0xe8,0x0\n"
        "  .cfi_escape 0x10,0x4,0x3,0x77,0xf0,0x0\n"
        "  .cfi_escape 0x10,0x6,0x3,0x77,0xf8,0x0\n"
        "  .cfi_escape 0x10,0x3,0x3,0x77,0x80,0x1\n"
        "  .cfi_escape 0x10,0x1,0x3,0x77,0x88,0x1\n"
        "  .cfi_escape 0x10,0x0,0x3,0x77,0x90,0x1\n"
        "  .cfi_escape 0x10,0x2,0x3,0x77,0x98,0x1\n"
        "  .cfi_escape 0x10,0x7,0x3,0x77,0xa0,0x1\n"
        "  .cfi_escape 0x10,0x10,0x3,0x77,0xa8,0x1\n"
        "  nop\n"
        ".globl col_sud_restorer\n"
        ".hidden col_sud_restorer\n"
        ".type col_sud_restorer,@function\n"
        "col_sud_restorer:\n"
        "  .byte 0x48,0xc7,0xc0,0x0f,0x00,0x00,0x00\n" /* mov $15,%rax (rt_sigreturn) */
        "  .byte 0x0f,0x05\n"                          /* syscall */
        "  hlt\n"
        "  .cfi_endproc\n"
        ".size col_sud_restorer,.-col_sud_restorer\n"
        /* Trampoline k: the program's syscall, then back to the address in
         * slot k (r11 is the syscall's to clobber; memory is not read
         * before the syscall, so a new thread or a forked child returns
         * the same way). */
        ".p2align 4\n"
        ".globl col_sud_tramps\n"
        ".hidden col_sud_tramps\n"
        "col_sud_tramps:\n"
        ".irp k," COL_TRAMP_LIST "\n"
        "  .p2align 4\n"
        "  syscall\n"
        "  jmp *col_sud_slots+8*\\k(%rip)\n"
        ".endr\n"
        ".popsection\n");
#define COL_TRAMP_STRIDE 16

#define COL_REG_NR REG_RAX
#define COL_REG_IP REG_RIP
#define COL_REG_SP REG_RSP
static const int col_arg_regs[6] = {REG_RDI, REG_RSI, REG_RDX, REG_R10, REG_R8, REG_R9};
#else
__asm__(".pushsection col_sud_text,\"ax\",@progbits\n"
        ".globl col_sud_syscall6\n"
        ".hidden col_sud_syscall6\n"
        ".type col_sud_syscall6,@function\n"
        ".p2align 4\n"
        "col_sud_syscall6:\n"
        "  push %ebx\n"
        "  push %esi\n"
        "  push %edi\n"
        "  push %ebp\n"
        "  mov 20(%esp),%eax\n"
        "  mov 24(%esp),%ebx\n"
        "  mov 28(%esp),%ecx\n"
        "  mov 32(%esp),%edx\n"
        "  mov 36(%esp),%esi\n"
        "  mov 40(%esp),%edi\n"
        "  mov 44(%esp),%ebp\n"
        "  int $0x80\n"
        "  pop %ebp\n"
        "  pop %edi\n"
        "  pop %esi\n"
        "  pop %ebx\n"
        "  ret\n"
        ".size col_sud_syscall6,.-col_sud_syscall6\n"
        ".globl col_sud_restorer\n"
        ".hidden col_sud_restorer\n"
        ".type col_sud_restorer,@function\n"
        ".p2align 4\n"
        "col_sud_restorer:\n"
        "  .byte 0xb8,0xad,0x00,0x00,0x00\n" /* mov $173,%eax (rt_sigreturn) */
        "  .byte 0xcd,0x80\n"                /* int $0x80 */
        "  hlt\n"
        ".size col_sud_restorer,.-col_sud_restorer\n"
        /* Trampoline k: the program's syscall, then back to the address in
         * slot k without touching any register but eax's result: the
         * target goes through the stack (i386 has no red zone), found
         * position-independently from a call's return address. */
        ".p2align 5\n"
        ".globl col_sud_tramps\n"
        ".hidden col_sud_tramps\n"
        "col_sud_tramps:\n"
        ".irp k," COL_TRAMP_LIST "\n"
        "  .p2align 5\n"
        "  int $0x80\n"
        "  push %eax\n"
        "  call 1f\n"
        "1:pop %eax\n"
        "  mov col_sud_slots+4*\\k-1b(%eax),%eax\n"
        "  xchg %eax,(%esp)\n"
        "  ret\n"
        ".endr\n"
        ".popsection\n");
#define COL_TRAMP_STRIDE 32

#define COL_REG_NR REG_EAX
#define COL_REG_IP REG_EIP
#define COL_REG_SP REG_ESP
static const int col_arg_regs[6] = {REG_EBX, REG_ECX, REG_EDX, REG_ESI, REG_EDI, REG_EBP};
#endif

long col_sud_syscall6(long nr, long a1, long a2, long a3, long a4, long a5, long a6);
void col_sud_restorer(void);
extern const char col_sud_tramps[] __attribute__((visibility("hidden")));

/* The trampoline that runs the program's syscall from the allowed range
 * and returns to ret (the instruction after the program's own syscall),
 * or 0 if every slot is taken by other call sites. */
static uintptr_t col_sud_tramp(uintptr_t ret)
{
    for (unsigned k = 0; k < COL_TRAMPS; k++) {
        uintptr_t v = atomic_load_explicit(&col_sud_slots[k], memory_order_acquire);

        if (!v) {
            uintptr_t expect = 0;

            if (atomic_compare_exchange_strong(&col_sud_slots[k], &expect, ret))
                v = ret;
            else
                v = expect; /* another thread took it meanwhile */
        }
        if (v == ret)
            return (uintptr_t)col_sud_tramps + (uintptr_t)k * COL_TRAMP_STRIDE;
    }
    return 0;
}
extern const char __start_col_sud_text[] __attribute__((visibility("hidden")));
extern const char __stop_col_sud_text[] __attribute__((visibility("hidden")));

/* The kernel's struct sigaction (arch/x86/include/uapi/asm/signal.h). */
struct col_ksigaction {
    void *handler;
    unsigned long flags;
    void *restorer;
    uint64_t mask;
};

#define COL_SIGBIT(s) (1ull << ((s)-1))

/* The program's SIGSYS disposition, served to it while ours stays installed. */
static struct col_ksigaction col_app_sigsys;
static uintptr_t col_libc_lo, col_libc_hi, col_ld_lo, col_ld_hi, col_syscall_fn;
static uintptr_t col_vdso_lo, col_vdso_hi;
static COL_TLS uint8_t col_sud_armed;

static uintptr_t col_sud_caller(const ucontext_t *uc);

static long col_raw(long nr, const unsigned long *a)
{
    return col_sud_syscall6(nr, (long)a[0], (long)a[1], (long)a[2], (long)a[3], (long)a[4],
                            (long)a[5]);
}

/* Which part of the process issued a syscall, from its instruction address:
 * ld.so (loading libraries), libc (malloc, stdio, ...), or the program
 * itself, counting libc's syscall(2) wrapper as the program's call. */
static uint8_t col_sud_origin(uintptr_t ip)
{
    if (ip >= col_ld_lo && ip < col_ld_hi)
        return FMT_ORIGIN_LOADER;
    if (col_syscall_fn && ip - col_syscall_fn < 64)
        return FMT_ORIGIN_CALL;
    if (ip >= col_libc_lo && ip < col_libc_hi)
        return FMT_ORIGIN_LIBC;
    return FMT_ORIGIN_CALL;
}

/* The time for an event recorded inside a hook's real call: a free or
 * realloc has already stamped the ring (pending holds its time), and its
 * own record follows ours, so ours takes that time to keep the ring sorted. */
static uint64_t col_sud_stamp(struct col_thread *t, int *own)
{
    uint64_t p = atomic_load_explicit(&t->ring->ctl->pending, memory_order_relaxed);

    if (p > FMT_SHM_PENDING_MARKER) {
        *own = 0;
        return p;
    }
    *own = 1;
    return col_stamp(t);
}

static int col_failed(long r)
{
    return r < 0 && r > -4096;
}

/* Issue a virtual-memory syscall and record it. */
static long col_sud_vm(struct col_thread *t, long nr, const unsigned long *a, ucontext_t *uc)
{
    uint64_t extra[4];
    uint8_t origin, evf = 0;
    uint32_t stack;
    uint64_t ts, ts1;
    int entered = 0, own;
    long r;

    if (t->busy) {
        /* Only a heap hook's real call is recorded; anything else busy is
         * the collector itself (ring segments, libunwind). */
        if (!t->sud_in_real || !t->ring || !col_proc || t->gen != col_proc->gen)
            return col_raw(nr, a);
        origin = t->sud_scope ? t->sud_scope : FMT_ORIGIN_LIBC;
    } else {
        if (!col_enter())
            return col_raw(nr, a);
        entered = 1;
        origin = t->sud_scope ? t->sud_scope : col_sud_origin(col_sud_caller(uc));
    }
    stack = col_stack_from_context(t, uc);
    switch (nr) {
    case COL_SYS_MMAP: /* i386: mmap2, the offset in pages */
        r = col_raw(nr, a);
        ts = col_sud_stamp(t, &own);
        extra[0] = (uint64_t)a[2], extra[1] = (uint64_t)a[3];
        extra[2] = (uint64_t)(int64_t)(int)a[4];
        extra[3] = COL_SYS_MMAP == SYS_mmap ? (uint64_t)a[5] : (uint64_t)a[5] << 12;
        col_emit_event(t, FMT_SHM_REC_EVENT, FMT_EV_MMAP, col_failed(r) ? FMT_EVF_FAILED : 0,
                       origin, stack, ts, col_failed(r) ? 0 : (uint64_t)(unsigned long)r,
                       (uint64_t)a[1], extra, 4);
        break;
    case SYS_munmap:
        ts = col_sud_stamp(t, &own); /* before: the range may be mapped again at once */
        r = col_raw(nr, a);
        col_emit_event(t, FMT_SHM_REC_EVENT, FMT_EV_MUNMAP, r ? FMT_EVF_FAILED : 0, origin, stack,
                       ts, (uint64_t)a[0], (uint64_t)a[1], NULL, 0);
        break;
    case SYS_mremap:
        ts = col_sud_stamp(t, &own);
        r = col_raw(nr, a);
        ts1 = own ? col_now() : ts;
        if ((unsigned long)r == a[0])
            evf = FMT_EVF_IN_PLACE;
        else if (!col_failed(r))
            col_emit_event(t, FMT_SHM_REC_RELEASE, FMT_EV_MREMAP, 0, origin, stack, ts,
                           (uint64_t)a[0], 0, NULL, 0);
        extra[0] = (uint64_t)a[0], extra[1] = (uint64_t)a[1], extra[2] = (uint64_t)a[3];
        col_emit_event(t, FMT_SHM_REC_EVENT, FMT_EV_MREMAP,
                       (uint8_t)(evf | (col_failed(r) ? FMT_EVF_FAILED : 0)), origin, stack, ts1,
                       col_failed(r) ? 0 : (uint64_t)(unsigned long)r, (uint64_t)a[2], extra, 3);
        break;
    case SYS_mprotect:
        r = col_raw(nr, a);
        ts = col_sud_stamp(t, &own);
        extra[0] = (uint64_t)a[2];
        col_emit_event(t, FMT_SHM_REC_EVENT, FMT_EV_MPROTECT, r ? FMT_EVF_FAILED : 0, origin, stack,
                       ts, (uint64_t)a[0], (uint64_t)a[1], extra, 1);
        break;
    default: /* brk: returns the break, unchanged when it failed */
        r = col_raw(nr, a);
        ts = col_sud_stamp(t, &own);
        extra[0] = (uint64_t)a[0];
        col_emit_event(t, FMT_SHM_REC_EVENT, FMT_EV_BRK,
                       a[0] && (unsigned long)r != a[0] ? FMT_EVF_FAILED : 0, origin, stack, ts,
                       (uint64_t)(unsigned long)r, 0, extra, 1);
        break;
    }
    if (own)
        col_stamp_done(t);
    if (entered)
        col_leave(t);
    return r;
}

/* Copy from or to the program's memory without trusting its pointer: the
 * kernel's own calls return EFAULT where a plain access would crash us.
 * process_vm_readv/writev on ourselves do the same check; where a sandbox
 * forbids them, the pointer is used as it is. */
static long col_sud_copy(long nr, void *local, void *remote, size_t n)
{
    struct iovec l = {local, n}, r = {remote, n};
    long got = col_sud_syscall6(nr, col_sud_syscall6(SYS_getpid, 0, 0, 0, 0, 0, 0), (long)&l, 1,
                                (long)&r, 1, 0);

    if (got == (long)n)
        return 0;
    if (got == -ENOSYS || got == -EPERM || got == -EACCES) {
        if (nr == SYS_process_vm_readv)
            memcpy(local, remote, n);
        else
            memcpy(remote, local, n);
        return 0;
    }
    return -EFAULT;
}

static long col_sud_peek(void *dst, unsigned long src, size_t n)
{
    return col_sud_copy(SYS_process_vm_readv, dst, (void *)src, n);
}

static long col_sud_poke(unsigned long dst, const void *src, size_t n)
{
    return col_sud_copy(SYS_process_vm_writev, (void *)src, (void *)dst, n);
}

/* Whether the program believes it blocked SIGSYS: it is never blocked for
 * real (a trap would kill the thread), but reading the mask back shows
 * what the program set. */
static COL_TLS uint8_t col_sud_sigsys_blocked;

/* rt_sigprocmask, emulated on the mask our sigreturn will restore: SIGSYS
 * is never blocked, though the program reads back what it asked for.
 * Errors come in the kernel's order: EFAULT for the new set, EINVAL, the
 * change, then EFAULT for the old set. */
static long col_sud_sigprocmask(ucontext_t *uc, const unsigned long *a)
{
    uint64_t cur, set, next = 0;

    if (a[3] != 8)
        return -EINVAL;
    memcpy(&cur, &uc->uc_sigmask, 8);
    if (col_sud_sigsys_blocked)
        cur |= COL_SIGBIT(SIGSYS);
    if (a[1]) {
        if (col_sud_peek(&set, a[1], 8))
            return -EFAULT;
        switch ((int)a[0]) {
        case SIG_BLOCK:
            next = cur | set;
            break;
        case SIG_UNBLOCK:
            next = cur & ~set;
            break;
        case SIG_SETMASK:
            next = set;
            break;
        default:
            return -EINVAL;
        }
        col_sud_sigsys_blocked = (next & COL_SIGBIT(SIGSYS)) != 0;
        next &= ~(COL_SIGBIT(SIGSYS) | COL_SIGBIT(SIGKILL) | COL_SIGBIT(SIGSTOP));
        memcpy(&uc->uc_sigmask, &next, 8);
    }
    if (a[2] && col_sud_poke(a[2], &cur, 8))
        return -EFAULT;
    return 0;
}

/* Handlers the program installed with SA_ONSTACK, which run from ours. */
static struct col_ksigaction col_sud_onstack[65];

/* A handler on the program's alternate stack, often a few KiB: nothing it
 * does traps (a SIGSYS frame would not fit), so its own mappings go
 * unrecorded; we return through our restorer, inside the allowed range.
 * A handler that leaves by longjmp (or siglongjmp) does not come back
 * here: the first hook entered off the alternate stack re-arms instead
 * (col_sud_onstack_left), so the thread is not left without dispatch. */
static void col_sud_onstack_run(int sig, siginfo_t *si, void *uc)
{
    struct col_thread *t = &col_thread;
    uint8_t sel = t->sud_sel, rearm = t->sud_rearm, outer = !t->sud_onstack;
    struct col_ksigaction a = col_sud_onstack[sig];

    t->sud_rearm = COL_SUD_ALLOW; /* hooks in the handler must not re-arm */
    t->sud_sel = COL_SUD_ALLOW;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (outer) {
        stack_t ss;

        if (col_sud_syscall6(SYS_sigaltstack, 0, (long)&ss, 0, 0, 0, 0) == 0 &&
            (ss.ss_flags & SS_ONSTACK)) {
            t->sud_alt_lo = (uintptr_t)ss.ss_sp;
            t->sud_alt_hi = (uintptr_t)ss.ss_sp + ss.ss_size;
            t->sud_onstack_rearm = rearm;
            t->sud_onstack = 1;
        }
    }
    if (a.handler != (void *)SIG_DFL && a.handler != (void *)SIG_IGN) {
        if (a.flags & SA_SIGINFO)
            ((void (*)(int, siginfo_t *, void *))a.handler)(sig, si, uc);
        else
            ((void (*)(int))a.handler)(sig);
    }
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (outer)
        t->sud_onstack = 0;
    t->sud_rearm = rearm;
    t->sud_sel = sel;
}

void col_sud_onstack_left(struct col_thread *t)
{
    uintptr_t sp = (uintptr_t)__builtin_frame_address(0);

    if (sp >= t->sud_alt_lo && sp < t->sud_alt_hi)
        return; /* still in the handler (or one it interrupted) */
    t->sud_onstack = 0;
    t->sud_rearm = t->sud_onstack_rearm;
}

/* rt_sigaction: the program's SIGSYS disposition is kept aside (ours stays
 * installed); other handlers get SIGSYS taken out of their blocked set,
 * and those for the alternate stack run from col_sud_onstack_run. The
 * program reads back what it set. */
static long col_sud_sigaction(const unsigned long *a)
{
    struct col_ksigaction act, prev, was;
    int sig = (int)a[0], wrap;
    long r;

    if (a[3] != 8)
        return -EINVAL;
    if (a[1] && col_sud_peek(&act, a[1], sizeof(act)))
        return -EFAULT;
    if (sig == SIGSYS) {
        prev = col_app_sigsys;
        if (a[1])
            col_app_sigsys = act;
        return a[2] && col_sud_poke(a[2], &prev, sizeof(prev)) ? -EFAULT : 0;
    }
    if (sig < 1 || sig > 64)
        return col_raw(SYS_rt_sigaction, a);
    was = col_sud_onstack[sig];
    if (a[1]) {
        struct col_ksigaction k = act;

        k.mask &= ~COL_SIGBIT(SIGSYS);
        wrap = (act.flags & SA_ONSTACK) && act.handler != (void *)SIG_DFL &&
               act.handler != (void *)SIG_IGN;
        if (wrap) {
            col_sud_onstack[sig] = act;
            k.handler = (void *)col_sud_onstack_run;
            k.flags |= SA_SIGINFO | SA_RESTORER;
            k.restorer = (void *)col_sud_restorer;
        }
        r = col_sud_syscall6(SYS_rt_sigaction, sig, (long)&k, (long)&prev, 8, 0, 0);
    } else {
        r = col_sud_syscall6(SYS_rt_sigaction, sig, 0, (long)&prev, 8, 0, 0);
    }
    if (r)
        return r;
    if (prev.handler == (void *)col_sud_onstack_run)
        prev = was;
    return a[2] && col_sud_poke(a[2], &prev, sizeof(prev)) ? -EFAULT : 0;
}

/* A SIGSYS that is not ours (kill, raise, seccomp): the program's. */
static void col_sud_forward(int sig, siginfo_t *si, void *uc)
{
    struct col_ksigaction a = col_app_sigsys;

    if (a.handler == (void *)SIG_IGN)
        return;
    if (a.handler == (void *)SIG_DFL) {
        /* Default action: die as the program would. Unblocked by our
         * sigreturn, the re-raised signal then meets no handler. */
        struct col_ksigaction dfl = {.handler = (void *)SIG_DFL};

        col_sud_syscall6(SYS_rt_sigaction, SIGSYS, (long)&dfl, 0, 8, 0, 0);
        col_sud_syscall6(SYS_tgkill, getpid(), col_gettid(), SIGSYS, 0, 0, 0);
        return;
    }
    if (a.flags & SA_RESETHAND)
        col_app_sigsys.handler = (void *)SIG_DFL;
    if (a.flags & SA_SIGINFO)
        ((void (*)(int, siginfo_t *, void *))a.handler)(sig, si, uc);
    else
        ((void (*)(int))a.handler)(sig);
}

/* A signal the program sends (perhaps to itself): blocked in our handler
 * while the syscall runs, so that it stays pending and arrives once our
 * sigreturn has restored the program's context and mask, at the
 * instruction after its syscall, as it would untraced (not on top of our
 * handler). */
static long col_sud_signal(long nr, const unsigned long *a, unsigned long sig)
{
    uint64_t set = sig >= 1 && sig <= 64 ? COL_SIGBIT(sig) : 0;

    if (set)
        col_sud_syscall6(SYS_rt_sigprocmask, SIG_BLOCK, (long)&set, 0, 8, 0, 0);
    return col_raw(nr, a);
}

/* The instruction that made the syscall, for its origin. On i386 libc
 * goes through the vDSO's __kernel_vsyscall, which has pushed ecx, edx and
 * ebp above its return address by the time the kernel returns. */
static uintptr_t col_sud_caller(const ucontext_t *uc)
{
    uintptr_t ip = (uintptr_t)uc->uc_mcontext.gregs[COL_REG_IP];

#if defined(__i386__)
    if (ip >= col_vdso_lo && ip < col_vdso_hi)
        ip = *(const uint32_t *)((uintptr_t)uc->uc_mcontext.gregs[COL_REG_SP] + 12);
#endif
    return ip;
}

static void col_sud_handler(int sig, siginfo_t *si, void *ucv)
{
    ucontext_t *uc = ucv;
    greg_t *g = uc->uc_mcontext.gregs;
    struct col_thread *t = &col_thread;
    uint8_t sel = t->sud_sel, rearm = t->sud_rearm;
    int saved_errno = errno;
    unsigned long a[6];
    long nr;

    t->sud_sel = COL_SUD_ALLOW;
    t->sud_rearm = COL_SUD_ALLOW; /* a col_leave in here must not re-arm */
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (si->si_code != SYS_USER_DISPATCH) {
        col_sud_forward(sig, si, ucv);
        goto out;
    }
    nr = (long)g[COL_REG_NR];
    for (int i = 0; i < 6; i++)
        a[i] = (unsigned long)g[col_arg_regs[i]];
    switch (nr) {
    case SYS_clone:
    case SYS_clone3:
    case SYS_fork:
    case SYS_vfork:
    case SYS_execve:
    case SYS_execveat:
    case SYS_rt_sigreturn:
#ifdef SYS_sigreturn
    case SYS_sigreturn:
#endif
    {
        /* A new task must not start inside our handler, exec must see the
         * program's signal mask, and a sigreturn must find its frame at
         * the program's stack pointer: the syscall runs in the program's
         * own context, from a trampoline in the allowed range that returns
         * to the instruction after the program's syscall. */
        uintptr_t tr = col_sud_tramp((uintptr_t)g[COL_REG_IP]);

        if (tr) {
            g[COL_REG_IP] = (greg_t)tr;
        } else {
            /* No slot left: run the program's own instruction again (2
             * bytes back: syscall, int $0x80, or the vDSO's int $0x80
             * before its landing pad) unarmed; the next hook re-arms. */
            g[COL_REG_IP] -= 2;
            sel = COL_SUD_ALLOW;
        }
        break;
    }
    case SYS_kill:
    case SYS_tkill:
        g[COL_REG_NR] = (greg_t)col_sud_signal(nr, a, a[1]);
        break;
    case SYS_tgkill:
    case SYS_rt_tgsigqueueinfo:
        g[COL_REG_NR] = (greg_t)col_sud_signal(nr, a, a[2]);
        break;
    case SYS_rt_sigqueueinfo:
        g[COL_REG_NR] = (greg_t)col_sud_signal(nr, a, a[1]);
        break;
    case SYS_rt_sigprocmask:
        g[COL_REG_NR] = (greg_t)col_sud_sigprocmask(uc, a);
        break;
    case SYS_rt_sigaction:
        g[COL_REG_NR] = (greg_t)col_sud_sigaction(a);
        break;
    case COL_SYS_MMAP:
    case SYS_munmap:
    case SYS_mremap:
    case SYS_mprotect:
    case SYS_brk:
        g[COL_REG_NR] = (greg_t)col_sud_vm(t, nr, a, uc);
        break;
    default:
        g[COL_REG_NR] = (greg_t)col_raw(nr, a);
        break;
    }
out:
    errno = saved_errno;
    t->sud_rearm = rearm;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    t->sud_sel = sel;
}

static int col_sud_find_libs(struct dl_phdr_info *info, size_t size, void *arg)
{
    const char *name = info->dlpi_name, *base;
    uintptr_t lo = UINTPTR_MAX, hi = 0;

    (void)size, (void)arg;
    if (!name || !*name)
        return 0;
    base = strrchr(name, '/');
    base = base ? base + 1 : name;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        if (info->dlpi_addr + ph->p_vaddr < lo)
            lo = info->dlpi_addr + ph->p_vaddr;
        if (info->dlpi_addr + ph->p_vaddr + ph->p_memsz > hi)
            hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
    }
    if (!strncmp(base, "libc.so", 7))
        col_libc_lo = lo, col_libc_hi = hi;
    else if (!strncmp(base, "ld-linux", 8) || !strncmp(base, "ld.so", 5))
        col_ld_lo = lo, col_ld_hi = hi;
    else if (!strncmp(base, "linux-gate", 10) || !strncmp(base, "linux-vdso", 10))
        col_vdso_lo = lo, col_vdso_hi = hi;
    return 0;
}

/* SIGSYS must never be blocked while dispatch is armed: a trap would kill
 * the thread. */
static void col_sud_unblock(void)
{
    uint64_t unblock = COL_SIGBIT(SIGSYS);

    col_sud_syscall6(SYS_rt_sigprocmask, SIG_UNBLOCK, (long)&unblock, 0, 8, 0, 0);
}

/* Turn dispatch on for the calling thread, once. */
static void col_sud_arm(struct col_thread *t)
{
    if (col_sud_armed)
        return;
    col_sud_unblock();
    if (prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_ON, (unsigned long)__start_col_sud_text,
              (unsigned long)(__stop_col_sud_text - __start_col_sud_text),
              (unsigned long)&t->sud_sel) != 0) {
        col_say("cannot turn on syscall user dispatch; library-internal mappings are not recorded",
                errno);
        col_sud_on = 0;
        return;
    }
    col_sud_armed = 1;
    t->sud_rearm = COL_SUD_BLOCK;
}

void col_sud_thread_start(struct col_thread *t)
{
    if (col_sud_on)
        col_sud_arm(t); /* runs busy: col_leave sets the selector */
}

static void col_sud_atfork_parent(void)
{
    col_sud_unblock();
    col_thread.sud_sel = col_thread.sud_rearm; /* the clone left it on ALLOW */
}

static void col_sud_atfork_child(void)
{
    /* Dispatch is not inherited by fork (measured: the child runs with it off). */
    col_sud_armed = 0;
    col_thread.sud_rearm = COL_SUD_ALLOW;
    if (!col_sud_on)
        return;
    col_sud_arm(&col_thread);
    if (!col_thread.busy)
        col_thread.sud_sel = col_thread.sud_rearm;
}

void col_sud_process_init(void)
{
    const char *s = getenv("MEMSCRIBE_VM_PRECISE");
    /* Every signal is blocked while our handler runs: one arriving there
     * would run the program's handler with SIGSYS blocked, and its first
     * trap (its sigreturn at the latest) would kill the program. Held
     * back, it arrives after the syscall, where it would untraced. */
    struct col_ksigaction act = {
        .handler = (void *)col_sud_handler,
        .flags = SA_SIGINFO | SA_RESTORER,
        .restorer = (void *)col_sud_restorer,
        .mask = ~0ull,
    };
    if (!s || *s != '1')
        return;
    /* Under valgrind the program's code is translated and valgrind's own
     * syscalls would trap: no dispatch there. */
    s = getenv("LD_PRELOAD");
    if (s && strstr(s, "vgpreload")) {
        col_say("precise mapping capture is off under valgrind", 0);
        return;
    }
    if (col_sud_syscall6(SYS_rt_sigaction, SIGSYS, (long)&act, (long)&col_app_sigsys, 8, 0, 0)) {
        col_say("cannot install the SIGSYS handler; library-internal mappings are not recorded", 0);
        return;
    }
    col_dl_iterate_phdr(col_sud_find_libs, NULL);
    col_syscall_fn = (uintptr_t)dlsym(RTLD_DEFAULT, "syscall");
    pthread_atfork(NULL, col_sud_atfork_parent, col_sud_atfork_child);
    col_sud_on = 1;
}

/* Threads: dispatch is per thread, so a new thread turns it on before it
 * runs the program's start routine; the stack pthread_create maps for it
 * is recorded with origin THREAD. */
struct col_sud_start {
    void *(*fn)(void *);
    void *arg;
};

static void *col_sud_thread_main(void *p)
{
    struct col_sud_start s = *(struct col_sud_start *)p;
    uint64_t all = ~COL_SIGBIT(SIGSYS), mask = 0;

    col_sud_arm(&col_thread);
    col_thread.sud_sel = col_thread.sud_rearm;
    /* This free is the thread's first heap call: glibc sets up its tcache
     * and arena in it (a new arena maps, trims and mprotects its heap),
     * under the arena's lock and with those calls trapped and recorded.
     * No signal may land meanwhile: a handler that mallocs would wait for
     * that lock for good. Armed first, so the arena's mappings are in the
     * trace; the program's mask is back before its start routine runs. */
    col_sud_syscall6(SYS_rt_sigprocmask, SIG_BLOCK, (long)&all, (long)&mask, 8, 0, 0);
    col_real.free(p);
    col_sud_syscall6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&mask, 0, 8, 0, 0);
    return s.fn(s.arg);
}

COL_EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *),
                              void *arg)
{
    static int (*real)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
    struct col_thread *t = &col_thread;
    struct col_sud_start *s;
    int rc;

    if (COL_UNLIKELY(!real))
        *(void **)&real = dlsym(COL_RTLD_NEXT, "pthread_create");
    col_count_threads(); /* before the thread exists: the heap's count goes atomic */
    if (!col_sud_on || t->busy || !col_real.malloc || !(s = col_real.malloc(sizeof(*s))))
        return real(th, attr, fn, arg);
    s->fn = fn;
    s->arg = arg;
    t->sud_scope = FMT_ORIGIN_THREAD;
    rc = real(th, attr, col_sud_thread_main, s);
    t->sud_scope = 0;
    col_sud_unblock();
    t->sud_sel = t->sud_rearm; /* the clone left it on ALLOW */
    if (rc)
        col_real.free(s);
    return rc;
}

#else /* no dispatch support for this architecture: public calls only */

void col_sud_process_init(void)
{
    const char *s = getenv("MEMSCRIBE_VM_PRECISE");

    if (s && *s == '1')
        col_say("precise mapping capture is not available on this architecture", 0);
}

void col_sud_thread_start(struct col_thread *t)
{
    (void)t;
}

void col_sud_onstack_left(struct col_thread *t)
{
    t->sud_onstack = 0; /* never set without dispatch */
}

#endif
