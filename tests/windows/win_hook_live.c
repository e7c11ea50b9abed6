/* SPDX-License-Identifier: MIT */
/* The hook engine in a live x86-64 process: functions written in assembly
 * with the prologues of Windows code (a short jcc in the first bytes, a
 * RIP-relative load, MSVC register saves, a short jmp over padding, and a
 * 7-byte prologue that straddles an 8-byte word so the patch takes the
 * self-jump path) are hooked with win_hook_install; each detour calls the
 * original through its trampoline. Exit 0 when every result is right. */
#include <stdio.h>
#include <windows.h>

#include "win_hook.h"

long g_val = 1000;

long f_jcc(long x);
long f_rip(long x);
long f_save(long x);
long f_jmp8(long x);
long f_straddle(long x);

__asm__(".text\n"
        ".p2align 4\n"
        ".globl f_jcc\n"
        "f_jcc:\n"
        "  test %rcx, %rcx\n" /* 48 85 c9 */
        "  je 1f\n"           /* 74 xx: moved, becomes 0f 84 rel32 */
        "  mov g_val(%rip), %rax\n"
        "  add %rcx, %rax\n"
        "  ret\n"
        "1:\n"
        "  mov $-1, %rax\n"
        "  ret\n"
        ".p2align 4\n"
        ".globl f_rip\n"
        "f_rip:\n"
        "  mov g_val(%rip), %rax\n" /* 48 8b 05 disp32: re-aimed */
        "  add %rcx, %rax\n"
        "  ret\n"
        ".p2align 4\n"
        ".globl f_save\n"
        "f_save:\n"
        "  mov %rbx, 8(%rsp)\n" /* 48 89 5c 24 08 */
        "  push %rdi\n"
        "  sub $0x20, %rsp\n"
        "  lea 3(%rcx), %rax\n"
        "  add $0x20, %rsp\n"
        "  pop %rdi\n"
        "  mov 8(%rsp), %rbx\n"
        "  ret\n"
        ".p2align 4\n"
        ".globl f_jmp8\n"
        "f_jmp8:\n"
        "  jmp 1f\n" /* eb 03 over int3 padding */
        "  int3\n"
        "  int3\n"
        "  int3\n"
        "1:\n"
        "  lea 2(%rcx), %rax\n"
        "  ret\n"
        ".p2align 4\n"
        "  int3\n"
        "  int3\n"
        "  int3\n"
        "  int3\n"
        ".globl f_straddle\n"
        "f_straddle:\n"             /* at 4 mod 16: bytes 4..10 cross a word */
        "  mov g_val(%rip), %rax\n" /* 7 bytes */
        "  sub %rcx, %rax\n"
        "  ret\n");

static long (*orig_jcc)(long), (*orig_rip)(long), (*orig_save)(long), (*orig_jmp8)(long),
    (*orig_straddle)(long);
static int calls;

/* Each detour counts its call and scales what the original returns. */
#define DETOUR(name)                                                                               \
    static long det_##name(long x)                                                                 \
    {                                                                                              \
        calls++;                                                                                   \
        return orig_##name(x) * 10;                                                                \
    }
DETOUR(jcc)
DETOUR(rip)
DETOUR(save)
DETOUR(jmp8)
DETOUR(straddle)

static int failures;

static void check(const char *what, long got, long want)
{
    printf("%s %s: %ld (want %ld)\n", got == want ? "ok" : "FAIL", what, got, want);
    failures += got != want;
}

/* Calls through a volatile pointer: the compiler must not use what it
 * knows of the asm (it knows nothing, but keep it honest). */
static long call(long (*volatile fn)(long), long x)
{
    return fn(x);
}

int main(void)
{
    struct {
        const char *name;
        void *target, *detour, **orig;
    } hooks[] = {
        {"f_jcc", (void *)f_jcc, (void *)det_jcc, (void **)&orig_jcc},
        {"f_rip", (void *)f_rip, (void *)det_rip, (void **)&orig_rip},
        {"f_save", (void *)f_save, (void *)det_save, (void **)&orig_save},
        {"f_jmp8", (void *)f_jmp8, (void *)det_jmp8, (void **)&orig_jmp8},
        {"f_straddle", (void *)f_straddle, (void *)det_straddle, (void **)&orig_straddle},
    };

    check("f_straddle at 4 mod 8", (long)((ULONG_PTR)f_straddle & 7), 4);
    for (unsigned i = 0; i < sizeof(hooks) / sizeof(hooks[0]); i++)
        check(hooks[i].name, win_hook_install(hooks[i].target, hooks[i].detour, hooks[i].orig), 0);
    check("f_jcc(5)", call(f_jcc, 5), 10050);
    check("f_jcc(0) (the moved je taken)", call(f_jcc, 0), -10);
    check("f_rip(7)", call(f_rip, 7), 10070);
    g_val = 2000; /* the trampoline's load reads the variable, not a copy */
    check("f_rip(7) after g_val changed", call(f_rip, 7), 20070);
    check("f_save(4)", call(f_save, 4), 70);
    check("f_jmp8(1)", call(f_jmp8, 1), 30);
    check("f_straddle(1)", call(f_straddle, 1), 19990);
    check("detour calls", calls, 7);
    return failures ? 1 : 0;
}
