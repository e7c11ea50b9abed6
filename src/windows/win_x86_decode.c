/* SPDX-License-Identifier: MIT */
/* Length decoder for function-prologue instructions (Intel SDM vol. 2, ch. 2:
 * prefixes, REX, opcode, ModRM, SIB, displacement, immediate). */
#include "win_x86_decode.h"

#include <errno.h>
#include <stdbool.h>

/* Immediate of a one-byte opcode: bytes, or IMM_Z (2 with 66h, else 4). */
enum { IMM_NONE = 0, IMM_B = 1, IMM_W = 2, IMM_Z = 5, IMM_BAD = 0xff };

struct win_decode_state {
    const uint8_t *code;
    size_t avail;
    size_t pos;
    bool mode64;
    bool opsize16; /* 66h */
    bool rex_w;
};

static bool need(const struct win_decode_state *s, size_t n)
{
    return s->pos + n <= s->avail;
}

/* Skip a ModRM (and SIB and displacement). Sets *riprel_off when the operand
 * is [rip+disp32] in 64-bit mode. Returns 0, -ENODATA. */
static int skip_modrm(struct win_decode_state *s, int *riprel_off)
{
    if (!need(s, 1))
        return -ENODATA;
    uint8_t modrm = s->code[s->pos++];
    unsigned mod = modrm >> 6, rm = modrm & 7;
    size_t disp = 0;

    if (mod == 3)
        return 0;
    if (rm == 4) {
        if (!need(s, 1))
            return -ENODATA;
        uint8_t sib = s->code[s->pos++];
        if (mod == 0 && (sib & 7) == 5)
            disp = 4;
    }
    if (mod == 0 && rm == 5) {
        if (s->mode64)
            *riprel_off = (int)s->pos;
        disp = 4;
    } else if (mod == 1) {
        disp = 1;
    } else if (mod == 2) {
        disp = 4;
    }
    if (!need(s, disp))
        return -ENODATA;
    s->pos += disp;
    return 0;
}

/* ModRM reg field of the next byte (for F6/F7 whose immediate depends on it). */
static int modrm_reg(const struct win_decode_state *s)
{
    return need(s, 1) ? (s->code[s->pos] >> 3) & 7 : -1;
}

/* One-byte opcodes with a ModRM byte (the map of SDM vol. 2 table A-2, minus
 * what a prologue never holds). */
static bool one_byte_has_modrm(uint8_t op)
{
    if (op < 0x40)
        return (op & 7) < 4; /* ALU r/m forms: 00-03, 08-0B, ... 38-3B */
    if ((op >= 0x84 && op <= 0x8f) || (op >= 0xd0 && op <= 0xd3))
        return true; /* test, xchg, mov, lea, pop r/m; shifts */
    switch (op) {
    case 0x63: /* movsxd */
    case 0x69:
    case 0x6b:
    case 0x80:
    case 0x81:
    case 0x83:
    case 0xc0:
    case 0xc1:
    case 0xc6:
    case 0xc7:
    case 0xf6:
    case 0xf7:
    case 0xfe:
    case 0xff:
        return true;
    default:
        return false;
    }
}

static unsigned one_byte_imm(uint8_t op, int reg, bool mode64)
{
    if (op < 0x40) {
        switch (op & 7) {
        case 4:
            return IMM_B;
        case 5:
            return IMM_Z;
        case 6:
        case 7:
            /* push/pop es..ds, daa/das/aaa/aas; 26/2E/36/3E are prefixes */
            return mode64 ? IMM_BAD : IMM_NONE;
        default:
            return IMM_NONE;
        }
    }
    if (op >= 0x40 && op <= 0x5f)
        return IMM_NONE; /* inc/dec (x86; REX on x86-64), push, pop */
    if (op >= 0x90 && op <= 0x99)
        return IMM_NONE; /* nop, xchg, cwde, cdq */
    if ((op >= 0xa4 && op <= 0xa7) || (op >= 0xaa && op <= 0xaf))
        return IMM_NONE; /* string ops (rep stos in debug prologues) */
    if (op >= 0xb0 && op <= 0xb7)
        return IMM_B;
    if ((op >= 0x84 && op <= 0x8f) || (op >= 0xd0 && op <= 0xd3))
        return IMM_NONE;
    switch (op) {
    case 0x63:
        return mode64 ? IMM_NONE : IMM_BAD; /* arpl on x86 */
    case 0x68:
    case 0x69:
    case 0x81:
    case 0xa9:
    case 0xc7:
        return IMM_Z;
    case 0x6a:
    case 0x6b:
    case 0x80:
    case 0x83:
    case 0xa8:
    case 0xc0:
    case 0xc1:
    case 0xc6:
    case 0xcd:
        return IMM_B;
    case 0xf6:
        return reg < 2 ? IMM_B : IMM_NONE;
    case 0xf7:
        return reg < 2 ? IMM_Z : IMM_NONE;
    case 0xc8:
        return 3; /* enter imm16, imm8 */
    case 0x9c:
    case 0x9d:
    case 0xc9:
    case 0xcc:
    case 0xf4:
    case 0xfc:
    case 0xfd:
    case 0xfe:
    case 0xff:
        return IMM_NONE;
    default:
        return IMM_BAD;
    }
}

static int take_imm(struct win_decode_state *s, unsigned imm)
{
    size_t n = imm == IMM_Z ? (s->opsize16 ? 2 : 4) : imm;

    if (!need(s, n))
        return -ENODATA;
    s->pos += n;
    return 0;
}

/* 0F xx: the two-byte map. */
static int decode_0f(struct win_decode_state *s, struct win_insn *in)
{
    if (!need(s, 1))
        return -ENODATA;
    uint8_t op = s->code[s->pos++];
    int rip = -1, rc;

    in->opcode = op;
    if (op >= 0x80 && op <= 0x8f) {
        in->kind = WIN_INSN_JCC32;
        in->disp_off = (uint8_t)s->pos;
        return take_imm(s, 4);
    }
    switch (op) {
    case 0x05: /* syscall */
    case 0x0b: /* ud2 */
    case 0x31: /* rdtsc */
    case 0xa2: /* cpuid */
        return 0;
    case 0x38: /* three-byte maps */
    case 0x3a:
        return -EINVAL;
    }
    bool modrm = op == 0x1e || op == 0x1f                    /* endbr (F3 0F 1E FA), nop r/m */
                 || (op >= 0x10 && op <= 0x17)               /* movups.. */
                 || (op >= 0x28 && op <= 0x2f)               /* movaps.. */
                 || (op >= 0x40 && op <= 0x4f)               /* cmovcc */
                 || (op >= 0x50 && op <= 0x7f && op != 0x77) /* SSE/MMX (emms: none) */
                 || (op >= 0x90 && op <= 0x9f)               /* setcc */
                 || op == 0xa3 || op == 0xab || op == 0xaf || op == 0xb0 || op == 0xb1 ||
                 op == 0xb3 || op == 0xb6 || op == 0xb7 || op == 0xbb || op == 0xbc || op == 0xbd ||
                 op == 0xbe || op == 0xbf || op == 0xc0 || op == 0xc1 || (op >= 0xd0 && op <= 0xfe);
    if (!modrm)
        return -EINVAL;
    rc = skip_modrm(s, &rip);
    if (rc)
        return rc;
    if (op == 0x70 || op == 0x71 || op == 0x72 || op == 0x73 || op == 0xc2 || op == 0xc4 ||
        op == 0xc5 || op == 0xc6) {
        rc = take_imm(s, IMM_B);
        if (rc)
            return rc;
    }
    if (rip >= 0) {
        in->kind = WIN_INSN_RIPREL;
        in->disp_off = (uint8_t)rip;
    }
    return 0;
}

static bool is_legacy_prefix(uint8_t b)
{
    return b == 0x66 || b == 0x67 || b == 0xf0 || b == 0xf2 || b == 0xf3 || b == 0x2e ||
           b == 0x36 || b == 0x3e || b == 0x26 || b == 0x64 || b == 0x65;
}

int win_x86_decode(const uint8_t *code, size_t avail, int mode64, struct win_insn *in)
{
    struct win_decode_state s = {.code = code, .avail = avail, .mode64 = mode64 != 0};
    int rip = -1, rc, reg_of_ff = -1;
    uint8_t op;

    *in = (struct win_insn){0};
    for (;;) {
        if (!need(&s, 1))
            return -ENODATA;
        op = code[s.pos];
        if (!is_legacy_prefix(op))
            break;
        if (op == 0x67)
            return -EINVAL; /* address-size override: 16-bit or eip-relative forms */
        if (op == 0x66)
            s.opsize16 = true;
        if (s.pos == 14)
            return -EINVAL;
        s.pos++;
    }
    if (s.mode64 && (op & 0xf0) == 0x40) { /* REX: last prefix */
        s.rex_w = (op & 8) != 0;
        s.pos++;
        if (!need(&s, 1))
            return -ENODATA;
        op = code[s.pos];
        if ((op & 0xf0) == 0x40)
            return -EINVAL;
    }
    s.pos++;
    in->opcode = op;
    in->kind = WIN_INSN_PLAIN;

    if (op == 0x0f) {
        rc = decode_0f(&s, in);
    } else if (op == 0xeb || (op >= 0x70 && op <= 0x7f)) {
        in->kind = op == 0xeb ? WIN_INSN_JMP8 : WIN_INSN_JCC8;
        in->disp_off = (uint8_t)s.pos;
        rc = take_imm(&s, IMM_B);
    } else if (op == 0xe8 || op == 0xe9) {
        if (s.opsize16)
            return -EINVAL;
        in->kind = op == 0xe8 ? WIN_INSN_CALL32 : WIN_INSN_JMP32;
        in->disp_off = (uint8_t)s.pos;
        rc = take_imm(&s, 4);
    } else if (op == 0xc3) {
        in->kind = WIN_INSN_RET;
        rc = 0;
    } else if (op == 0xc2) {
        in->kind = WIN_INSN_RET;
        rc = take_imm(&s, IMM_W);
    } else if (op >= 0xb8 && op <= 0xbf) {
        /* mov r, imm32 (imm64 with REX.W: movabs) */
        rc = take_imm(&s, s.rex_w ? 8 : IMM_Z);
    } else if (op >= 0xa0 && op <= 0xa3) {
        /* mov al/eax <-> moffs: a full-width address */
        rc = take_imm(&s, s.mode64 ? 8 : 4);
    } else {
        int reg = one_byte_has_modrm(op) ? modrm_reg(&s) : 0;
        if (op == 0xff)
            reg_of_ff = reg;
        unsigned imm = one_byte_imm(op, reg, s.mode64);

        if (imm == IMM_BAD)
            return -EINVAL;
        rc = 0;
        if (one_byte_has_modrm(op))
            rc = skip_modrm(&s, &rip);
        if (!rc)
            rc = take_imm(&s, imm);
        if (!rc && rip >= 0) {
            in->kind = WIN_INSN_RIPREL;
            in->disp_off = (uint8_t)rip;
        }
    }
    if (rc)
        return rc;
    in->ends = in->kind == WIN_INSN_RET || in->kind == WIN_INSN_JMP8 ||
               in->kind == WIN_INSN_JMP32 || (op == 0xff && (reg_of_ff == 4 || reg_of_ff == 5));
    if (s.pos > 15)
        return -EINVAL;
    in->len = (uint8_t)s.pos;
    return 0;
}
