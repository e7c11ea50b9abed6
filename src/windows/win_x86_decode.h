/* SPDX-License-Identifier: MIT */
/* Length decoder for the x86-64 and x86 instructions that open functions:
 * enough to move a function's first bytes into a trampoline, nothing more.
 * Pure code (no Windows API), so it is unit-tested on the Linux host. */
#ifndef WIN_X86_DECODE_H
#define WIN_X86_DECODE_H

#include <stddef.h>
#include <stdint.h>

/* What relocating an instruction needs to know about it. */
enum win_insn_kind {
    WIN_INSN_PLAIN,  /* position-independent: copied as is */
    WIN_INSN_RIPREL, /* x86-64 ModRM operand [rip+disp32] at disp_off */
    WIN_INSN_JMP8,   /* EB rel8 */
    WIN_INSN_JCC8,   /* 70..7F rel8 */
    WIN_INSN_JMP32,  /* E9 rel32 */
    WIN_INSN_JCC32,  /* 0F 80..8F rel32 */
    WIN_INSN_CALL32, /* E8 rel32 */
    WIN_INSN_RET,    /* C3, C2 imm16: control does not fall through */
};

struct win_insn {
    uint8_t len;      /* bytes, prefixes included */
    uint8_t kind;     /* enum win_insn_kind */
    uint8_t disp_off; /* WIN_INSN_RIPREL: offset of the disp32; branches: of the rel */
    uint8_t opcode;   /* last opcode byte (the condition of a JCC8/JCC32 in its low 4 bits) */
    uint8_t ends;     /* 1: control never falls through (ret, jmp, jmp [mem]) */
};

/* Decode the instruction at code[0..avail). mode64: 1 for x86-64, 0 for x86
 * (32-bit addressing). Returns 0 and fills *in, -EINVAL for an opcode outside
 * the supported set (VEX/EVEX, 3-byte 0F 38/3A maps, 16-bit addressing, far
 * branches, loop/jrcxz, x87), -ENODATA when the instruction runs past avail. */
int win_x86_decode(const uint8_t *code, size_t avail, int mode64, struct win_insn *in);

#endif
