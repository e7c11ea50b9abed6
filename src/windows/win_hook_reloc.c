/* SPDX-License-Identifier: MIT */
/* Trampoline builder: moves a function's first instructions elsewhere. */
#include "win_hook_reloc.h"

#include "win_x86_decode.h"

#include <errno.h>
#include <string.h>

static void put32(uint8_t *p, uint32_t v)
{
    memcpy(p, &v, 4);
}

static int32_t get32(const uint8_t *p)
{
    int32_t v;
    memcpy(&v, p, 4);
    return v;
}

static int fits32(int64_t v)
{
    return v >= INT32_MIN && v <= INT32_MAX;
}

int win_hook_jmp32(uint8_t *out, uint64_t from, uint64_t to)
{
    int64_t rel = (int64_t)(to - (from + WIN_HOOK_JMP_LEN));

    /* Written even when out of range: on x86 the 32-bit sum wraps and the
     * jump is right anyway; x86-64 callers check the result. */
    out[0] = 0xe9;
    put32(out + 1, (uint32_t)rel);
    return fits32(rel) ? 0 : -ERANGE;
}

void win_hook_jmpabs(uint8_t *out, uint64_t to)
{
    static const uint8_t head[6] = {0xff, 0x25, 0, 0, 0, 0};

    memcpy(out, head, sizeof(head));
    memcpy(out + 6, &to, 8);
}

/* Bytes the relocated form of in takes. */
static size_t relocated_len(const struct win_insn *in)
{
    switch (in->kind) {
    case WIN_INSN_JMP8:
        return 5;
    case WIN_INSN_JCC8:
        return 6;
    default:
        return in->len;
    }
}

/* Where a branch at src offset so with target t lands in the trampoline:
 * inside the moved bytes, the moved copy; elsewhere, t itself. */
static uint64_t map_target(uint64_t t, uint64_t src, uint64_t dst, const size_t *src_off,
                           const size_t *dst_off, unsigned n, size_t stolen)
{
    if (t < src || t >= src + stolen)
        return t;
    for (unsigned i = 0; i < n; i++)
        if (src + src_off[i] == t)
            return dst + dst_off[i];
    return UINT64_MAX; /* into the middle of a moved instruction */
}

static int is_padding(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != 0xcc && p[i] != 0x90)
            return 0;
    return 1;
}

int win_hook_relocate(const uint8_t *code, size_t code_len, uint64_t src, int mode64,
                      size_t min_len, uint8_t *out, size_t out_cap, uint64_t dst,
                      struct win_reloc *res)
{
    struct win_insn ins[WIN_HOOK_MAX_INSNS];
    size_t src_off[WIN_HOOK_MAX_INSNS], dst_off[WIN_HOOK_MAX_INSNS];
    size_t pos = 0, opos = 0;
    unsigned n = 0;
    int ended = 0, rc;

    /* Pass 1: decode and lay out. */
    while (pos < min_len) {
        if (ended) {
            if (!is_padding(code + pos, min_len - pos))
                return -EINVAL;
            pos = min_len;
            break;
        }
        if (n == WIN_HOOK_MAX_INSNS)
            return -EINVAL;
        rc = win_x86_decode(code + pos, code_len - pos, mode64, &ins[n]);
        if (rc)
            return rc;
        src_off[n] = pos;
        dst_off[n] = opos;
        pos += ins[n].len;
        opos += relocated_len(&ins[n]);
        ended = ins[n].ends;
        n++;
    }
    size_t back_len = ended ? 0 : WIN_HOOK_JMP_LEN;
    uint64_t back_at = dst + opos;
    int back_abs = 0;
    if (!ended && mode64 && !fits32((int64_t)(src + pos - (back_at + WIN_HOOK_JMP_LEN)))) {
        back_abs = 1;
        back_len = WIN_HOOK_JMPABS_LEN;
    }
    if (opos + back_len > out_cap)
        return -ENOSPC;

    /* Pass 2: emit. */
    for (unsigned i = 0; i < n; i++) {
        const struct win_insn *in = &ins[i];
        const uint8_t *s = code + src_off[i];
        uint8_t *o = out + dst_off[i];
        uint64_t s_end = src + src_off[i] + in->len;
        uint64_t o_at = dst + dst_off[i];
        int64_t rel;
        uint64_t t;

        switch (in->kind) {
        case WIN_INSN_RIPREL:
            memcpy(o, s, in->len);
            t = s_end + (uint64_t)(int64_t)get32(s + in->disp_off);
            rel = (int64_t)(t - (o_at + in->len));
            if (!fits32(rel))
                return -ERANGE;
            put32(o + in->disp_off, (uint32_t)(int32_t)rel);
            break;
        case WIN_INSN_JMP8:
        case WIN_INSN_JCC8:
        case WIN_INSN_JMP32:
        case WIN_INSN_JCC32:
        case WIN_INSN_CALL32: {
            int short_form = in->kind == WIN_INSN_JMP8 || in->kind == WIN_INSN_JCC8;
            int64_t old = short_form ? (int8_t)s[in->disp_off] : get32(s + in->disp_off);
            size_t olen = relocated_len(in);

            t = map_target(s_end + (uint64_t)old, src, dst, src_off, dst_off, n, pos);
            if (t == UINT64_MAX)
                return -EINVAL;
            if (in->kind == WIN_INSN_JMP8) {
                o[0] = 0xe9;
            } else if (in->kind == WIN_INSN_JCC8) {
                o[0] = 0x0f;
                o[1] = (uint8_t)(0x80 | (in->opcode & 0x0f));
            } else {
                memcpy(o, s, in->len);
            }
            rel = (int64_t)(t - (o_at + olen));
            if (!mode64)
                rel = (int32_t)(uint32_t)rel; /* 32-bit addresses wrap */
            if (!fits32(rel))
                return -ERANGE;
            put32(o + olen - 4, (uint32_t)(int32_t)rel);
            break;
        }
        default:
            memcpy(o, s, in->len);
            break;
        }
    }
    if (!ended) {
        if (back_abs)
            win_hook_jmpabs(out + opos, src + pos);
        else if (win_hook_jmp32(out + opos, back_at, src + pos) != 0 && mode64)
            return -ERANGE;
    }
    res->stolen_len = pos;
    res->tramp_len = opos + back_len;
    res->nr_insns = n;
    return 0;
}
