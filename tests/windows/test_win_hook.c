/* SPDX-License-Identifier: MIT */
/* The hook engine's decoder and trampoline builder on the first bytes of real
 * functions: Wine 8.0's ntdll and kernel32 (read from the installed DLLs) and
 * the Windows shapes the clarification names (MSVC register saves, sub rsp,
 * RIP-relative loads, a short jump in the first bytes, syscall thunks, the
 * x86 hot-patch prologue and SEH prologue). Lengths and bytes are exact. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "windows/win_hook_reloc.h"
#include "windows/win_x86_decode.h"

#define SRC64 0x7ffa12340000ull /* function */
#define DST64 0x7ffa10000000ull /* trampoline, 0x2340000 below */
#define SRC32 0x77001000ull
#define DST32 0x00010000ull

struct dcase {
    const char *what;
    uint8_t bytes[16];
    size_t n;
    int mode64;
    int rc;
    uint8_t len, kind, disp_off, ends;
};

static const struct dcase dcases[] = {
    {"mov [rsp+8],rbx", {0x48, 0x89, 0x5c, 0x24, 0x08}, 5, 1, 0, 5, WIN_INSN_PLAIN, 0, 0},
    {"push rdi", {0x57}, 1, 1, 0, 1, WIN_INSN_PLAIN, 0, 0},
    {"push r15", {0x41, 0x57}, 2, 1, 0, 2, WIN_INSN_PLAIN, 0, 0},
    {"sub rsp,0x20", {0x48, 0x83, 0xec, 0x20}, 4, 1, 0, 4, WIN_INSN_PLAIN, 0, 0},
    {"sub rsp,0x648", {0x48, 0x81, 0xec, 0x48, 0x06, 0, 0}, 7, 1, 0, 7, WIN_INSN_PLAIN, 0, 0},
    {"mov rax,[rip+d]", {0x48, 0x8b, 0x05, 0xf1, 0x2f, 0x01, 0}, 7, 1, 0, 7, WIN_INSN_RIPREL, 3, 0},
    {"test byte [rip+d],8",
     {0xf6, 0x05, 0x6a, 0xe5, 0x03, 0, 0x08},
     7,
     1,
     0,
     7,
     WIN_INSN_RIPREL,
     2,
     0},
    {"lea rsp,[rsp+0] (Wine)",
     {0x48, 0x8d, 0xa4, 0x24, 0, 0, 0, 0},
     8,
     1,
     0,
     8,
     WIN_INSN_PLAIN,
     0,
     0},
    {"mov r10,rcx", {0x4c, 0x8b, 0xd1}, 3, 1, 0, 3, WIN_INSN_PLAIN, 0, 0},
    {"mov eax,0xb", {0xb8, 0x0b, 0, 0, 0}, 5, 1, 0, 5, WIN_INSN_PLAIN, 0, 0},
    {"test byte [0x7ffe0308],1",
     {0xf6, 0x04, 0x25, 0x08, 0x03, 0xfe, 0x7f, 0x01},
     8,
     1,
     0,
     8,
     WIN_INSN_PLAIN,
     0,
     0},
    {"syscall", {0x0f, 0x05}, 2, 1, 0, 2, WIN_INSN_PLAIN, 0, 0},
    {"ret", {0xc3}, 1, 1, 0, 1, WIN_INSN_RET, 0, 1},
    {"jmp [rip+d]", {0x48, 0xff, 0x25, 0xc1, 0x0f, 0x06, 0}, 7, 1, 0, 7, WIN_INSN_RIPREL, 3, 1},
    {"call [rip+d]", {0xff, 0x15, 0x87, 0x88, 0x03, 0}, 6, 1, 0, 6, WIN_INSN_RIPREL, 2, 0},
    {"endbr64", {0xf3, 0x0f, 0x1e, 0xfa}, 4, 1, 0, 4, WIN_INSN_PLAIN, 0, 0},
    {"movups [rsp+0x80],xmm6",
     {0x0f, 0x11, 0xb4, 0x24, 0x80, 0, 0, 0},
     8,
     1,
     0,
     8,
     WIN_INSN_PLAIN,
     0,
     0},
    {"movabs rax,imm64", {0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8}, 10, 1, 0, 10, WIN_INSN_PLAIN, 0, 0},
    {"nopw 0(rax,rax)", {0x66, 0x0f, 0x1f, 0x44, 0, 0}, 6, 1, 0, 6, WIN_INSN_PLAIN, 0, 0},
    {"nopl 0(rax,rax) disp32", {0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0}, 8, 1, 0, 8, WIN_INSN_PLAIN, 0, 0},
    {"xchg ax,ax", {0x66, 0x90}, 2, 1, 0, 2, WIN_INSN_PLAIN, 0, 0},
    {"mov qword [rsp+0x28],0",
     {0x48, 0xc7, 0x44, 0x24, 0x28, 0, 0, 0, 0},
     9,
     1,
     0,
     9,
     WIN_INSN_PLAIN,
     0,
     0},
    {"mov rax,gs:[0x30]",
     {0x65, 0x48, 0x8b, 0x04, 0x25, 0x30, 0, 0, 0},
     9,
     1,
     0,
     9,
     WIN_INSN_PLAIN,
     0,
     0},
    {"test rcx,rcx", {0x48, 0x85, 0xc9}, 3, 1, 0, 3, WIN_INSN_PLAIN, 0, 0},
    {"je rel8", {0x74, 0x37}, 2, 1, 0, 2, WIN_INSN_JCC8, 1, 0},
    {"jne rel32", {0x0f, 0x85, 0x14, 0x02, 0, 0}, 6, 1, 0, 6, WIN_INSN_JCC32, 2, 0},
    {"jmp rel8", {0xeb, 0x01}, 2, 1, 0, 2, WIN_INSN_JMP8, 1, 1},
    {"call rel32", {0xe8, 0xe5, 0, 0, 0}, 5, 1, 0, 5, WIN_INSN_CALL32, 1, 0},
    {"vzeroupper (VEX)", {0xc5, 0xf8, 0x77}, 3, 1, -EINVAL, 0, 0, 0, 0},
    {"pshufb (0F 38)", {0x0f, 0x38, 0x00, 0xc1}, 4, 1, -EINVAL, 0, 0, 0, 0},
    {"addr32 prefix", {0x67, 0x8b, 0x00}, 3, 1, -EINVAL, 0, 0, 0, 0},
    {"mov cut short", {0x48, 0x89}, 2, 1, -ENODATA, 0, 0, 0, 0},
    {"mov [rsp+8], cut in disp", {0x48, 0x89, 0x5c, 0x24}, 4, 1, -ENODATA, 0, 0, 0, 0},
    {"x86 mov edi,edi", {0x8b, 0xff}, 2, 0, 0, 2, WIN_INSN_PLAIN, 0, 0},
    {"x86 push ebp", {0x55}, 1, 0, 0, 1, WIN_INSN_PLAIN, 0, 0},
    {"x86 inc eax", {0x40}, 1, 0, 0, 1, WIN_INSN_PLAIN, 0, 0},
    {"x86 sub esp,0x10", {0x83, 0xec, 0x10}, 3, 0, 0, 3, WIN_INSN_PLAIN, 0, 0},
    {"x86 push 0x14", {0x6a, 0x14}, 2, 0, 0, 2, WIN_INSN_PLAIN, 0, 0},
    {"x86 push imm32", {0x68, 0xb8, 0x2e, 0x81, 0x7c}, 5, 0, 0, 5, WIN_INSN_PLAIN, 0, 0},
    {"x86 mov eax,fs:[0]", {0x64, 0xa1, 0, 0, 0, 0}, 6, 0, 0, 6, WIN_INSN_PLAIN, 0, 0},
    {"x86 mov ecx,[abs32]", {0x8b, 0x0d, 0x34, 0x12, 0, 0x10}, 6, 0, 0, 6, WIN_INSN_PLAIN, 0, 0},
    {"x86 mov ax,imm16", {0x66, 0xb8, 0x34, 0x12}, 4, 0, 0, 4, WIN_INSN_PLAIN, 0, 0},
    {"x86 call edx", {0xff, 0xd2}, 2, 0, 0, 2, WIN_INSN_PLAIN, 0, 0},
    {"x86 ret 0x18", {0xc2, 0x18, 0}, 3, 0, 0, 3, WIN_INSN_RET, 0, 1},
    {"x86 jmp [abs32]", {0xff, 0x25, 0x10, 0x20, 0x30, 0x40}, 6, 0, 0, 6, WIN_INSN_PLAIN, 0, 1},
    {"x86 rep stosd", {0xf3, 0xab}, 2, 0, 0, 2, WIN_INSN_PLAIN, 0, 0},
    {"x86 push es (invalid on x86-64)", {0x06}, 1, 1, -EINVAL, 0, 0, 0, 0},
};

static void test_decode_table(void **state)
{
    for (size_t i = 0; i < sizeof(dcases) / sizeof(dcases[0]); i++) {
        const struct dcase *c = &dcases[i];
        struct win_insn in;
        int rc = win_x86_decode(c->bytes, c->n, c->mode64, &in);

        print_message("%s\n", c->what);
        assert_int_equal(rc, c->rc);
        if (rc)
            continue;
        assert_int_equal(in.len, c->len);
        assert_int_equal(in.kind, c->kind);
        assert_int_equal(in.ends, c->ends);
        if (c->kind != WIN_INSN_PLAIN && c->kind != WIN_INSN_RET)
            assert_int_equal(in.disp_off, c->disp_off);
    }
}

/* Relocate code at src into a trampoline at dst and compare with want. */
static void expect_tramp(const uint8_t *code, size_t n, uint64_t src, int mode64, size_t min_len,
                         uint64_t dst, size_t stolen, const uint8_t *want, size_t want_len)
{
    uint8_t out[WIN_HOOK_TRAMP_MAX];
    struct win_reloc r;

    memset(out, 0xaa, sizeof(out));
    assert_int_equal(win_hook_relocate(code, n, src, mode64, min_len, out, sizeof(out), dst, &r),
                     0);
    assert_int_equal(r.stolen_len, stolen);
    assert_int_equal(r.tramp_len, want_len);
    assert_memory_equal(out, want, want_len);
    assert_int_equal(out[want_len], 0xaa);
}

/* The usual case: code at SRC64 (x86-64) or SRC32 (x86) hooked with the
 * 5-byte jmp, its trampoline at DST64 or DST32. */
#define TRAMP64(code, stolen, want)                                                                \
    expect_tramp(code, sizeof(code), SRC64, 1, WIN_HOOK_JMP_LEN, DST64, stolen, want, sizeof(want))
#define TRAMP32(code, stolen, want)                                                                \
    expect_tramp(code, sizeof(code), SRC32, 0, WIN_HOOK_JMP_LEN, DST32, stolen, want, sizeof(want))

/* Wine 8.0 ntdll!NtAllocateVirtualMemory: a Windows-style syscall thunk. */
static void test_wine_syscall_thunk(void **state)
{
    static const uint8_t code[] = {0x4c, 0x8b, 0xd1, 0xb8, 0x0b, 0,    0,    0,    0xf6, 0x04, 0x25,
                                   0x08, 0x03, 0xfe, 0x7f, 0x01, 0x75, 0x03, 0x0f, 0x05, 0xc3};
    static const uint8_t want[] = {0x4c, 0x8b, 0xd1, 0xb8, 0x0b, 0,   0,
                                   0,    0xe9, 0xfb, 0xff, 0x33, 0x02};

    TRAMP64(code, 8, want);
}

/* Wine's ntdll!RtlAllocateHeap opens with an 8-byte no-op (lea rsp,[rsp+0]);
 * RtlReAllocateHeap with pushes of r15, r14, r13. */
static void test_wine_heap_prologues(void **state)
{
    static const uint8_t alloc[] = {0x48, 0x8d, 0xa4, 0x24, 0,    0,    0,    0,
                                    0x41, 0x57, 0x41, 0x56, 0x41, 0x55, 0x41, 0x54};
    static const uint8_t want_alloc[] = {0x48, 0x8d, 0xa4, 0x24, 0,    0,   0,
                                         0,    0xe9, 0xfb, 0xff, 0x33, 0x02};
    static const uint8_t realloc_[] = {0x41, 0x57, 0x41, 0x56, 0x41, 0x55, 0x41, 0x54, 0x55};
    static const uint8_t want_realloc[] = {0x41, 0x57, 0x41, 0x56, 0x41, 0x55,
                                           0xe9, 0xfb, 0xff, 0x33, 0x02};

    TRAMP64(alloc, 8, want_alloc);
    TRAMP64(realloc_, 6, want_realloc);
}

/* A trampoline beyond +-2 GiB of the function: the jump back is absolute. */
static void test_far_trampoline_jumps_back_absolute(void **state)
{
    static const uint8_t code[] = {0x41, 0x57, 0x41, 0x56, 0x41, 0x55, 0x41, 0x54};
    uint8_t want[20] = {0x41, 0x57, 0x41, 0x56, 0x41, 0x55, 0xff, 0x25, 0, 0, 0, 0};
    uint64_t back = SRC64 + 6;

    memcpy(want + 12, &back, 8);
    expect_tramp(code, sizeof(code), SRC64, 1, WIN_HOOK_JMP_LEN, SRC64 + 0x100000000ull, 6, want,
                 sizeof(want));
}

/* Wine's ntdll!RtlDestroyHeap from its 16th byte: test byte [rip+d],8 (the
 * displacement counts from after the immediate), then jne rel32. */
static void test_riprel_with_immediate_and_jcc32(void **state)
{
    static const uint8_t code[] = {0xf6, 0x05, 0x6a, 0xe5, 0x03, 0,    0x08, 0x0f, 0x85,
                                   0x14, 0x02, 0,    0,    0x4c, 0x8d, 0x44, 0x24, 0x3c};
    static const uint8_t want7[] = {0xf6, 0x05, 0x6a, 0xe5, 0x37, 0x02,
                                    0x08, 0xe9, 0xfb, 0xff, 0x33, 0x02};
    static const uint8_t want13[] = {0xf6, 0x05, 0x6a, 0xe5, 0x37, 0x02, 0x08, 0x0f, 0x85,
                                     0x14, 0x02, 0x34, 0x02, 0xe9, 0xfb, 0xff, 0x33, 0x02};

    TRAMP64(code, 7, want7);
    expect_tramp(code, sizeof(code), SRC64, 1, 13, DST64, 13, want13, sizeof(want13));
}

/* MSVC /GS prologue on Windows x64: register save, push, sub rsp, and the
 * security cookie loaded RIP-relative. */
static void test_msvc_prologue_with_rip_load(void **state)
{
    static const uint8_t code[] = {0x48, 0x89, 0x5c, 0x24, 0x08, 0x57, 0x48, 0x83, 0xec, 0x20,
                                   0x48, 0x8b, 0x05, 0xf1, 0x2f, 0x01, 0,    0x48, 0x33, 0xc4};
    static const uint8_t want5[] = {0x48, 0x89, 0x5c, 0x24, 0x08, 0xe9, 0xfb, 0xff, 0x33, 0x02};
    uint8_t want12[22];

    memcpy(want12, code, 17);
    memcpy(want12 + 13, (const uint8_t[]){0xf1, 0x2f, 0x35, 0x02}, 4);
    memcpy(want12 + 17, (const uint8_t[]){0xe9, 0xfb, 0xff, 0x33, 0x02}, 5);
    TRAMP64(code, 5, want5);
    expect_tramp(code, sizeof(code), SRC64, 1, 12, DST64, 17, want12, sizeof(want12));
}

/* ucrtbase!free's shape: test rcx,rcx; je rel8 in the first five bytes. The
 * short jump becomes a near one aimed at the same target. */
static void test_short_jcc_in_first_bytes(void **state)
{
    static const uint8_t code[] = {0x48, 0x85, 0xc9, 0x74, 0x37, 0x53, 0x48, 0x83, 0xec, 0x20};
    static const uint8_t want[] = {0x48, 0x85, 0xc9, 0x0f, 0x84, 0x33, 0x00,
                                   0x34, 0x02, 0xe9, 0xf7, 0xff, 0x33, 0x02};

    TRAMP64(code, 5, want);
}

/* A branch into the moved bytes lands on their copy in the trampoline; a
 * ret ends the function, so no jump back, and int3 padding past it counts. */
static void test_branch_into_moved_bytes(void **state)
{
    static const uint8_t code[] = {0x74, 0x02, 0x31, 0xc0, 0xc3, 0xcc, 0xcc};
    static const uint8_t want[] = {0x0f, 0x84, 0x02, 0, 0, 0, 0x31, 0xc0, 0xc3};
    static const uint8_t ret_pad[] = {0xc3, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc};
    static const uint8_t want_ret[] = {0xc3};

    TRAMP64(code, 5, want);
    TRAMP64(ret_pad, 5, want_ret);
}

/* Import forwarders: Windows kernel32's jmp [rip+d] stub, and Wine's
 * kernel32!VirtualAlloc (8-byte no-op, then jmp [rip+d]). */
static void test_forwarder_stubs(void **state)
{
    static const uint8_t win[] = {0x48, 0xff, 0x25, 0xc1, 0x0f, 0x06, 0, 0xcc, 0xcc};
    static const uint8_t want_win[] = {0x48, 0xff, 0x25, 0xc1, 0x0f, 0x3a, 0x02};
    static const uint8_t wine[] = {0x48, 0x8d, 0xa4, 0x24, 0,    0, 0,    0,
                                   0xff, 0x25, 0x5e, 0xd3, 0x03, 0, 0x66, 0x90};
    static const uint8_t want_wine[] = {0x48, 0x8d, 0xa4, 0x24, 0,    0,    0,
                                        0,    0xff, 0x25, 0x5e, 0xd3, 0x37, 0x02};

    TRAMP64(win, 7, want_win);
    expect_tramp(wine, sizeof(wine), SRC64, 1, WIN_HOOK_JMPABS_LEN, DST64, 14, want_wine,
                 sizeof(want_wine));
}

/* x86: the hot-patch prologue (mov edi,edi; push ebp; mov ebp,esp) is
 * exactly 5 bytes; a trampoline anywhere in 4 GiB reaches (the sum wraps). */
static void test_x86_hotpatch_prologue(void **state)
{
    static const uint8_t code[] = {0x8b, 0xff, 0x55, 0x8b, 0xec, 0x83, 0xec, 0x10};
    static const uint8_t want[] = {0x8b, 0xff, 0x55, 0x8b, 0xec, 0xe9, 0xfb, 0x0f, 0xff, 0x76};
    static const uint8_t want_hi[] = {0x8b, 0xff, 0x55, 0x8b, 0xec, 0xe9, 0xfb, 0x0f, 0x01, 0x77};

    TRAMP32(code, 5, want);
    expect_tramp(code, sizeof(code), SRC32, 0, WIN_HOOK_JMP_LEN, 0xffff0000ull, 5, want_hi,
                 sizeof(want_hi));
}

/* x86 MSVC SEH prologue: push 0x14; push offset; call __SEH_prolog4. */
static void test_x86_seh_prologue_call(void **state)
{
    static const uint8_t code[] = {0x6a, 0x14, 0x68, 0xb8, 0x2e, 0x81, 0x7c,
                                   0xe8, 0x61, 0,    0,    0,    0x33, 0xdb};
    static const uint8_t want[] = {0x6a, 0x14, 0x68, 0xb8, 0x2e, 0x81, 0x7c, 0xe8, 0x61,
                                   0x10, 0x7f, 0x7c, 0xe9, 0xfb, 0x0f, 0x7f, 0x7c};

    expect_tramp(code, sizeof(code), 0x7c801000ull, 0, 8, DST32, 12, want, sizeof(want));
}

/* x86: WOW64 syscall thunk; and je rel8 grown to je rel32. */
static void test_x86_thunk_and_jcc(void **state)
{
    static const uint8_t thunk[] = {0xb8, 0x18, 0,    0x05, 0,    0xba, 0xe0, 0x6f,
                                    0x2f, 0x77, 0xff, 0xd2, 0xc2, 0x18, 0};
    static const uint8_t want_thunk[] = {0xb8, 0x18, 0, 0x05, 0, 0xe9, 0xfb, 0x0f, 0xff, 0x76};
    static const uint8_t jcc[] = {0x33, 0xc0, 0x85, 0xc9, 0x74, 0x0a, 0x56, 0x57};
    static const uint8_t want_jcc[] = {0x33, 0xc0, 0x85, 0xc9, 0x0f, 0x84, 0x06, 0x10,
                                       0xff, 0x76, 0xe9, 0xf7, 0x0f, 0xff, 0x76};

    TRAMP32(thunk, 5, want_thunk);
    TRAMP32(jcc, 6, want_jcc);
}

static void test_refusals(void **state)
{
    static const uint8_t rip[] = {0x48, 0x8b, 0x05, 0xf1, 0x2f, 0x01, 0};
    static const uint8_t ret_then_code[] = {0xc3, 0x55, 0x48, 0x89, 0xe5};
    static const uint8_t vex[] = {0xc5, 0xf8, 0x77, 0x90, 0x90};
    static const uint8_t into_middle[] = {0xeb, 0xff, 0x90, 0x90, 0x90, 0x90};
    static const uint8_t plain[] = {0x41, 0x57, 0x41, 0x56, 0x41, 0x55};
    uint8_t out[WIN_HOOK_TRAMP_MAX];
    struct win_reloc r;

    /* [rip+d] cannot reach its target from 3 GiB away */
    assert_int_equal(win_hook_relocate(rip, sizeof(rip), SRC64, 1, 5, out, sizeof(out),
                                       SRC64 + 0xc0000000ull, &r),
                     -ERANGE);
    /* a ret, then another function's bytes */
    assert_int_equal(win_hook_relocate(ret_then_code, sizeof(ret_then_code), SRC64, 1, 5, out,
                                       sizeof(out), DST64, &r),
                     -EINVAL);
    assert_int_equal(win_hook_relocate(vex, sizeof(vex), SRC64, 1, 5, out, sizeof(out), DST64, &r),
                     -EINVAL);
    /* jmp into its own second byte */
    assert_int_equal(win_hook_relocate(into_middle, sizeof(into_middle), SRC64, 1, 5, out,
                                       sizeof(out), DST64, &r),
                     -EINVAL);
    assert_int_equal(win_hook_relocate(plain, 4, SRC64, 1, 5, out, sizeof(out), DST64, &r),
                     -ENODATA);
    assert_int_equal(win_hook_relocate(plain, sizeof(plain), SRC64, 1, 5, out, 10, DST64, &r),
                     -ENOSPC);
}

static void test_jmp32(void **state)
{
    uint8_t out[WIN_HOOK_JMP_LEN];
    static const uint8_t fwd[] = {0xe9, 0xfb, 0xff, 0xff, 0x0f};
    static const uint8_t back[] = {0xe9, 0xfb, 0xff, 0xff, 0xef};

    assert_int_equal(win_hook_jmp32(out, SRC64, SRC64 + 0x10000000), 0);
    assert_memory_equal(out, fwd, sizeof(fwd));
    assert_int_equal(win_hook_jmp32(out, SRC64, SRC64 - 0x10000000), 0);
    assert_memory_equal(out, back, sizeof(back));
    assert_int_equal(win_hook_jmp32(out, SRC64, SRC64 + 0x80000005ull), -ERANGE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decode_table),
        cmocka_unit_test(test_wine_syscall_thunk),
        cmocka_unit_test(test_wine_heap_prologues),
        cmocka_unit_test(test_far_trampoline_jumps_back_absolute),
        cmocka_unit_test(test_riprel_with_immediate_and_jcc32),
        cmocka_unit_test(test_msvc_prologue_with_rip_load),
        cmocka_unit_test(test_short_jcc_in_first_bytes),
        cmocka_unit_test(test_branch_into_moved_bytes),
        cmocka_unit_test(test_forwarder_stubs),
        cmocka_unit_test(test_x86_hotpatch_prologue),
        cmocka_unit_test(test_x86_seh_prologue_call),
        cmocka_unit_test(test_x86_thunk_and_jcc),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_jmp32),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
