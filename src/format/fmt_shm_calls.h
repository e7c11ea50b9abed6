/* SPDX-License-Identifier: MIT */
/* The system calls the collector makes in a traced process, and those
 * `record -p` makes it make to load the collector, each with its
 * arguments as made: what a seccomp filter must let through
 * (docs/record-collector.md, "System calls the collector makes"). Checked against a
 * filter with util_seccomp.h: by `record -p` against each thread's filters
 * before it touches the process (src/recorder/rec_seccomp.c), and by the
 * collector against a filter the program installs (col_hooks_sys.c).
 * Observed with a SECCOMP_RET_USER_NOTIF logger on x86's two ABIs and
 * held on AArch64's by tests/e2e/record_seccomp.sh's whitelist (run on an
 * arm64 kernel: scripts/cross-check.sh arm64 --vm); a change of what the
 * collector calls belongs here and in that table. Header-only. */
#ifndef FMT_SHM_CALLS_H
#define FMT_SHM_CALLS_H

#include <linux/audit.h>
#include <linux/seccomp.h>
#include <stdint.h>
#include <string.h>

/* When a call is made. */
enum fmt_call_when {
    /* record -p: ld.so loading the attach collector (dlopen), and a new
     * attach waiting for hooks still under way, in the thread it stops. */
    FMT_CALL_INJECT = 1,
    /* A stream's start: the collector's first call in a process image, a
     * forked child's first call, an attach. */
    FMT_CALL_START = 2,
    /* Any traced thread, any time: its first event, a new ring segment
     * (the 2nd, 3rd, 5th, 9th, 17th thread alive at once, then every
     * 16th), a full ring, tables that grow, module events, the exit. */
    FMT_CALL_THREAD = 4,
    /* The attach build, any thread: GOT entries written (patched after a
     * dlopen, put back at the detach). */
    FMT_CALL_ATTACH = 8,
    /* --vm-precise (Syscall User Dispatch), any thread. */
    FMT_CALL_PRECISE = 16,
    /* record -p: a thread it stops (to read its filter, to load the
     * collector) that was in a sleep with a timeout resumes it with
     * restart_syscall. */
    FMT_CALL_STOP = 32,
};

/* The system call ABIs a process may have: an x86-64 recorder traces
 * i386 programs too. */
enum fmt_call_abi {
    FMT_ABI_X86_64,
    FMT_ABI_I386,
    FMT_ABI_AARCH64,
    FMT_ABI_NR,
};

/* The ABI of 64-bit programs on this machine (a 32-bit one's on x86-64 is
 * FMT_ABI_I386); FMT_ABI_NR on another CPU, where no call is known. */
#if defined(__x86_64__)
#define FMT_ABI_NATIVE FMT_ABI_X86_64
#elif defined(__i386__)
#define FMT_ABI_NATIVE FMT_ABI_I386
#elif defined(__aarch64__)
#define FMT_ABI_NATIVE FMT_ABI_AARCH64
#else
#define FMT_ABI_NATIVE FMT_ABI_NR
#endif

/* Each ABI's AUDIT_ARCH_*, as seccomp_data.arch shows it. */
static const uint32_t fmt_call_arch[FMT_ABI_NR]
    __attribute__((unused)) = {AUDIT_ARCH_X86_64, AUDIT_ARCH_I386, AUDIT_ARCH_AARCH64};

struct fmt_shm_call {
    const char *name;       /* the system call's name on that ABI */
    const char *why;        /* what it is made for */
    int16_t nr[FMT_ABI_NR]; /* its number on each ABI, -1: not made there */
    uint8_t when;           /* enum fmt_call_when */
    /* As made (an i386 process passes the low 32 bits); a pointer, a
     * length, a descriptor stands in as FMT_CALL_P, _L, _FD. */
    uint64_t args[6];
};

/* i386 maps with mmap2 (its offset in pages), which mmap's rows give
 * with their i386 number: the one call whose name differs alone. */
#define FMT_CALL_NR32_MMAP2 192

/* The call's name on the ABI. */
static inline const char *fmt_shm_call_name(const struct fmt_shm_call *c, enum fmt_call_abi abi)
{
    return abi == FMT_ABI_I386 && c->nr[FMT_ABI_I386] == FMT_CALL_NR32_MMAP2 ? "mmap2" : c->name;
}

#define FMT_CALL_P 0x10000ull            /* an address */
#define FMT_CALL_L 0x400000ull           /* a length */
#define FMT_CALL_FD 3ull                 /* a descriptor */
#define FMT_CALL_NOFD UINT64_MAX         /* -1 as a raw syscall passes it */
#define FMT_CALL_NOFD32 0xffffffffu      /* -1 as glibc's wrappers pass an int */
#define FMT_CALL_CWD 0xffffff9cull       /* AT_FDCWD as glibc's wrappers pass it */
#define FMT_CALL_CWD64 (UINT64_MAX - 99) /* AT_FDCWD as a raw syscall passes it */

/* PROT_*, MAP_*, O_*, ... spelled out: this header needs no system
 * headers beyond linux/, whose values are the ABI. */
#define FMT_CALL_PROT_R 1
#define FMT_CALL_PROT_RW 3
#define FMT_CALL_PROT_RX 5
#define FMT_CALL_MAP_ANON_NORESERVE 0x4022 /* MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE */
#define FMT_CALL_MAP_DENYWRITE 0x802       /* MAP_PRIVATE | MAP_DENYWRITE */
#define FMT_CALL_MAP_FIXED_DENYWRITE 0x812 /* ... | MAP_FIXED */
#define FMT_CALL_O_RDONLY_CLOEXEC 0x80000

static const struct fmt_shm_call fmt_shm_calls[] __attribute__((unused)) = {
    {"restart_syscall",
     "a thread stopped by record -p resuming its sleep",
     {219, 0, 128},
     FMT_CALL_STOP,
     {0}},
    /* ld.so loads libmemscribe-attach.so and libgcc_s.so.1 (dlopen). */
    {"openat",
     "loading the attach collector (dlopen)",
     {257, -1, 56},
     FMT_CALL_INJECT,
     {FMT_CALL_CWD, FMT_CALL_P, FMT_CALL_O_RDONLY_CLOEXEC}},
    {"openat",
     "loading the attach collector (dlopen)",
     {-1, 295, -1},
     FMT_CALL_INJECT,
     {FMT_CALL_CWD, FMT_CALL_P, FMT_CALL_O_RDONLY_CLOEXEC | 0x8000 /* O_LARGEFILE */}},
    {"read",
     "loading the attach collector (dlopen)",
     {0, -1, 63},
     FMT_CALL_INJECT,
     {FMT_CALL_FD, FMT_CALL_P, 832}},
    {"read",
     "loading the attach collector (dlopen)",
     {-1, 3, -1},
     FMT_CALL_INJECT,
     {FMT_CALL_FD, FMT_CALL_P, 512}},
    {"newfstatat",
     "loading the attach collector (dlopen)",
     {262, -1, 79},
     FMT_CALL_INJECT,
     {FMT_CALL_FD, FMT_CALL_P, FMT_CALL_P, 0x1000 /* AT_EMPTY_PATH */}},
    {"statx",
     "loading the attach collector (dlopen)",
     {-1, 383, -1},
     FMT_CALL_INJECT,
     {FMT_CALL_FD, FMT_CALL_P, 0x1800 /* AT_EMPTY_PATH | AT_STATX_... */, 0x7ff, FMT_CALL_P}},
    {"mmap",
     "loading the attach collector (dlopen)",
     {9, 192, 222},
     FMT_CALL_INJECT,
     {0, FMT_CALL_L, FMT_CALL_PROT_R, FMT_CALL_MAP_DENYWRITE, FMT_CALL_FD, 0}},
    {"mmap",
     "loading the attach collector (dlopen): its code",
     {9, 192, 222},
     FMT_CALL_INJECT,
     {FMT_CALL_P, FMT_CALL_L, FMT_CALL_PROT_RX, FMT_CALL_MAP_FIXED_DENYWRITE, FMT_CALL_FD, 1}},
    {"mmap",
     "loading the attach collector (dlopen)",
     {9, 192, 222},
     FMT_CALL_INJECT,
     {FMT_CALL_P, FMT_CALL_L, FMT_CALL_PROT_R, FMT_CALL_MAP_FIXED_DENYWRITE, FMT_CALL_FD, 1}},
    {"mmap",
     "loading the attach collector (dlopen): its data",
     {9, 192, 222},
     FMT_CALL_INJECT,
     {FMT_CALL_P, FMT_CALL_L, FMT_CALL_PROT_RW, FMT_CALL_MAP_FIXED_DENYWRITE, FMT_CALL_FD, 1}},
    {"mmap",
     "loading the attach collector (dlopen): its bss",
     {9, 192, 222},
     FMT_CALL_INJECT,
     {FMT_CALL_P, FMT_CALL_L, FMT_CALL_PROT_RW, 0x32 /* MAP_PRIVATE|MAP_FIXED|MAP_ANON */,
      FMT_CALL_NOFD32, 0}},
    {"mmap",
     "loading the attach collector (dlopen): ld.so.cache",
     {9, 192, 222},
     FMT_CALL_INJECT,
     {0, FMT_CALL_L, FMT_CALL_PROT_R, 2 /* MAP_PRIVATE */, FMT_CALL_FD, 0}},
    {"mprotect",
     "loading the attach collector (dlopen): RELRO",
     {10, 125, 226},
     FMT_CALL_INJECT,
     {FMT_CALL_P, FMT_CALL_L, FMT_CALL_PROT_R}},
    {"close", "loading the attach collector (dlopen)", {3, 6, 57}, FMT_CALL_INJECT, {FMT_CALL_FD}},
    {"munmap",
     "loading the attach collector (dlopen)",
     {11, 91, 215},
     FMT_CALL_INJECT,
     {FMT_CALL_P, FMT_CALL_L}},
    {"clock_nanosleep",
     "waiting for the hooks of a recorder that was killed",
     {230, 407, 115},
     FMT_CALL_INJECT,
     {0 /* CLOCK_REALTIME */, 0, FMT_CALL_P, 0}},

    /* A stream starts. */
    {"madvise",
     "the process page (MADV_WIPEONFORK)",
     {28, 219, 233},
     FMT_CALL_START,
     {FMT_CALL_P, 4096, 18 /* MADV_WIPEONFORK */}},
    {"getrandom",
     "the stream id",
     {318, 355, 278},
     FMT_CALL_START,
     {FMT_CALL_P, 8, 1 /* NONBLOCK */}},
    {"readlink", "/proc/self/exe", {89, 85, -1}, FMT_CALL_START, {FMT_CALL_P, FMT_CALL_P, 4095}},
    {"readlinkat",
     "/proc/self/exe",
     {-1, -1, 78},
     FMT_CALL_START,
     {FMT_CALL_CWD64, FMT_CALL_P, FMT_CALL_P, 4095}},
    {"openat",
     "/proc/self/cmdline",
     {257, 295, 56},
     FMT_CALL_START,
     {FMT_CALL_CWD, FMT_CALL_P, FMT_CALL_O_RDONLY_CLOEXEC}},
    {"openat",
     "/proc/self/maps",
     {257, 295, 56},
     FMT_CALL_START,
     {FMT_CALL_CWD64, FMT_CALL_P, FMT_CALL_O_RDONLY_CLOEXEC}},
    {"read",
     "/proc/self/cmdline and /proc/self/maps",
     {0, 3, 63},
     FMT_CALL_START,
     {FMT_CALL_FD, FMT_CALL_P, FMT_CALL_L}},
    {"close", "/proc/self/cmdline and /proc/self/maps", {3, 6, 57}, FMT_CALL_START, {FMT_CALL_FD}},
    {"mmap",
     "the buffer /proc/self/maps is read into",
     {9, 192, 222},
     FMT_CALL_START,
     {0, 0x10000, FMT_CALL_PROT_RW, 0x22 /* MAP_PRIVATE | MAP_ANONYMOUS */, FMT_CALL_NOFD, 0}},
    {"mmap",
     "a forked child's fresh tables",
     {9, 192, 222},
     FMT_CALL_START,
     {FMT_CALL_P, FMT_CALL_L, FMT_CALL_PROT_RW, FMT_CALL_MAP_ANON_NORESERVE | 0x10 /* FIXED */,
      FMT_CALL_NOFD, 0}},

    /* Any thread, any time. */
    {"gettid", "a thread's first event", {186, 224, 178}, FMT_CALL_THREAD, {0}},
    {"getpid", "a thread's first event, the exit", {39, 20, 172}, FMT_CALL_THREAD, {0}},
    {"prctl",
     "a thread's name (PR_GET_NAME)",
     {157, 172, 167},
     FMT_CALL_THREAD,
     {16 /* PR_GET_NAME */, FMT_CALL_P}},
    {"prctl",
     "whether a thread may read the TSC (PR_GET_TSC)",
     {157, 172, 167},
     FMT_CALL_THREAD,
     {25 /* PR_GET_TSC */, FMT_CALL_P}},
    {"tgkill",
     "taking over the ring of a thread that is gone",
     {234, 270, 131},
     FMT_CALL_THREAD,
     {1000, 1001, 0}},
    {"prlimit64",
     "a new ring segment: the file size limit",
     {302, -1, 261},
     FMT_CALL_THREAD,
     {0, 1 /* RLIMIT_FSIZE */, 0, FMT_CALL_P}},
    {"ugetrlimit",
     "a new ring segment: the file size limit",
     {-1, 191, -1},
     FMT_CALL_THREAD,
     {1 /* RLIMIT_FSIZE */, FMT_CALL_P}},
    {"memfd_create",
     "a new ring segment",
     {319, 356, 279},
     FMT_CALL_THREAD,
     {FMT_CALL_P, 3 /* MFD_CLOEXEC | MFD_ALLOW_SEALING */}},
    {"ftruncate", "a new ring segment", {77, 93, 46}, FMT_CALL_THREAD, {FMT_CALL_FD, FMT_CALL_L}},
    {"fcntl",
     "a new ring segment: its seals (F_ADD_SEALS)",
     {72, -1, 25},
     FMT_CALL_THREAD,
     {FMT_CALL_FD, 1033 /* F_ADD_SEALS */, 7}},
    {"fcntl64",
     "a new ring segment: its seals (F_ADD_SEALS)",
     {-1, 221, -1},
     FMT_CALL_THREAD,
     {FMT_CALL_FD, 1033 /* F_ADD_SEALS */, 7}},
    {"mmap",
     "a new ring segment",
     {9, 192, 222},
     FMT_CALL_THREAD,
     {0, FMT_CALL_L, FMT_CALL_PROT_RW, 1 /* MAP_SHARED */, FMT_CALL_FD, 0}},
    {"getppid", "a new ring segment: its hello", {110, 64, 173}, FMT_CALL_THREAD, {0}},
    {"socket",
     "a new ring segment: its hello",
     {41, -1, 198},
     FMT_CALL_THREAD,
     {1 /* AF_UNIX */, 0x80005 /* SOCK_SEQPACKET | SOCK_CLOEXEC */, 0}},
    {"connect",
     "a new ring segment: its hello",
     {42, -1, 203},
     FMT_CALL_THREAD,
     {FMT_CALL_FD, FMT_CALL_P, 35}},
    {"sendmsg",
     "a new ring segment: its hello",
     {46, -1, 211},
     FMT_CALL_THREAD,
     {FMT_CALL_FD, FMT_CALL_P, 0x4000 /* MSG_NOSIGNAL */}},
    {"socketcall",
     "a new ring segment: its hello (socket)",
     {-1, 102, -1},
     FMT_CALL_THREAD,
     {1 /* SYS_SOCKET */, FMT_CALL_P}},
    {"socketcall",
     "a new ring segment: its hello (connect)",
     {-1, 102, -1},
     FMT_CALL_THREAD,
     {3 /* SYS_CONNECT */, FMT_CALL_P}},
    {"socketcall",
     "a new ring segment: its hello (sendmsg)",
     {-1, 102, -1},
     FMT_CALL_THREAD,
     {16 /* SYS_SENDMSG */, FMT_CALL_P}},
    {"close", "a new ring segment", {3, 6, 57}, FMT_CALL_THREAD, {FMT_CALL_FD}},
    {"mmap",
     "the stack tables as they grow",
     {9, 192, 222},
     FMT_CALL_THREAD,
     {0, FMT_CALL_L, FMT_CALL_PROT_RW, FMT_CALL_MAP_ANON_NORESERVE, FMT_CALL_NOFD, 0}},
    {"munmap",
     "the stack tables as they grow",
     {11, 91, 215},
     FMT_CALL_THREAD,
     {FMT_CALL_P, FMT_CALL_L}},
    {"madvise",
     "the stack tables as they grow (MADV_HUGEPAGE)",
     {28, 219, 233},
     FMT_CALL_THREAD,
     {FMT_CALL_P, FMT_CALL_L, 14 /* MADV_HUGEPAGE */}},
    {"futex",
     "a full ring: waiting for the recorder",
     {202, 240, 98},
     FMT_CALL_THREAD,
     {FMT_CALL_P, 0 /* FUTEX_WAIT */, 0, FMT_CALL_P}},
    {"futex",
     "the loader's and the unwinder's locks",
     {202, 240, 98},
     FMT_CALL_THREAD,
     {FMT_CALL_P, 0x81 /* FUTEX_WAKE_PRIVATE */, 0x7fffffff}},
    {"kill", "a full ring: is the recorder alive", {62, 37, 129}, FMT_CALL_THREAD, {1000, 0}},
    {"sched_yield", "the collector's spin locks", {24, 158, 124}, FMT_CALL_THREAD, {0}},
    {"readlink",
     "module events: the program's path",
     {89, 85, -1},
     FMT_CALL_THREAD,
     {FMT_CALL_P, FMT_CALL_P, 4095}},
    {"readlinkat",
     "module events: the program's path",
     {-1, -1, 78},
     FMT_CALL_THREAD,
     {FMT_CALL_CWD64, FMT_CALL_P, FMT_CALL_P, 4095}},
    {"getcwd",
     "module events: a library dlopen'ed by a relative path",
     {79, 183, 17},
     FMT_CALL_THREAD,
     {FMT_CALL_P, 4096}},
    {"clock_gettime",
     "the time stamps of a thread that may not read the TSC",
     {228, 265, 113},
     FMT_CALL_THREAD,
     {1 /* CLOCK_MONOTONIC */, FMT_CALL_P}},

    /* The attach build. */
    {"mprotect",
     "record -p: writing a GOT entry under RELRO",
     {10, 125, 226},
     FMT_CALL_ATTACH,
     {FMT_CALL_P, 4096, FMT_CALL_PROT_RW}},
    {"mprotect",
     "record -p: a GOT entry written, RELRO again",
     {10, 125, 226},
     FMT_CALL_ATTACH,
     {FMT_CALL_P, 4096, FMT_CALL_PROT_R}},

    /* --vm-precise. */
    {"prctl",
     "--vm-precise: Syscall User Dispatch",
     {157, 172, 167},
     FMT_CALL_PRECISE,
     {59 /* PR_SET_SYSCALL_USER_DISPATCH */, 1, FMT_CALL_P, FMT_CALL_L, FMT_CALL_P}},
    {"rt_sigaction",
     "--vm-precise: the SIGSYS handler",
     {13, 174, 134},
     FMT_CALL_PRECISE,
     {31 /* SIGSYS */, FMT_CALL_P, FMT_CALL_P, 8}},
    {"rt_sigprocmask",
     "--vm-precise: SIGSYS unblocked",
     {14, 175, 135},
     FMT_CALL_PRECISE,
     {1 /* SIG_UNBLOCK */, FMT_CALL_P, 0, 8}},
    {"sigaltstack",
     "--vm-precise: handlers on an alternate stack",
     {131, 186, 132},
     FMT_CALL_PRECISE,
     {0, FMT_CALL_P}},
    {"process_vm_readv",
     "--vm-precise: the program's signal masks and actions",
     {310, 347, 270},
     FMT_CALL_PRECISE,
     {1000, FMT_CALL_P, 1, FMT_CALL_P, 1, 0}},
    {"process_vm_writev",
     "--vm-precise: the program's signal masks and actions",
     {311, 348, 271},
     FMT_CALL_PRECISE,
     {1000, FMT_CALL_P, 1, FMT_CALL_P, 1, 0}},
    {"rt_sigreturn",
     "--vm-precise: every trapped system call",
     {15, 173, 139},
     FMT_CALL_PRECISE,
     {0}},
};

#define FMT_SHM_NR_CALLS (sizeof(fmt_shm_calls) / sizeof(fmt_shm_calls[0]))

/* The seccomp_data of call c on the ABI, as the kernel shows it to a
 * filter (instruction address 0: unknown). 0 if the call is not made on
 * that ABI, else 1. */
static inline int fmt_shm_call_data(const struct fmt_shm_call *c, enum fmt_call_abi abi,
                                    struct seccomp_data *d)
{
    int nr = abi < FMT_ABI_NR ? c->nr[abi] : -1;

    if (nr < 0)
        return 0;
    memset(d, 0, sizeof(*d));
    d->nr = nr;
    d->arch = fmt_call_arch[abi];
    for (int i = 0; i < 6; i++) /* an i386 process passes the low 32 bits */
        d->args[i] = abi == FMT_ABI_I386 ? (uint32_t)c->args[i] : c->args[i];
    return 1;
}

#endif
