/* SPDX-License-Identifier: MIT */
/* Building a trampoline: the first instructions of a function moved to
 * another address with their relative operands fixed, then a jump back.
 * Pure code on byte buffers and addresses, unit-tested on the Linux host. */
#ifndef WIN_HOOK_RELOC_H
#define WIN_HOOK_RELOC_H

#include <stddef.h>
#include <stdint.h>

/* Bytes of the jump a hook writes over a function: E9 rel32. */
#define WIN_HOOK_JMP_LEN 5
/* Most instructions the relocator moves, and the longest trampoline it writes
 * (each instruction may grow from 2 to 6 bytes, plus a 14-byte jump back). */
#define WIN_HOOK_MAX_INSNS 8
#define WIN_HOOK_TRAMP_MAX 128

struct win_reloc {
    size_t stolen_len; /* bytes of the function the trampoline replaces (>= min_len) */
    size_t tramp_len;  /* bytes written to out */
    unsigned nr_insns;
};

/* Relocate whole instructions from code (which lives at address src) until at
 * least min_len bytes are covered, writing the trampoline that will live at
 * address dst into out[0..out_cap), ending with a jump to src + stolen_len.
 * mode64: 1 for x86-64, 0 for x86. Short branches become near ones; branches
 * into the moved bytes are redirected into the trampoline; [rip+disp32]
 * operands are re-aimed. Bytes past a ret or jmp count as covered only when
 * they are int3 or nop padding. Returns 0, -EINVAL (an instruction the decoder
 * does not know, or a function shorter than min_len), -ERANGE (a relocated
 * operand does not reach from dst: put the trampoline within +-2 GiB),
 * -ENOSPC (out_cap too small), -ENODATA (code ends too early). */
int win_hook_relocate(const uint8_t *code, size_t code_len, uint64_t src, int mode64,
                      size_t min_len, uint8_t *out, size_t out_cap, uint64_t dst,
                      struct win_reloc *res);

/* Write the WIN_HOOK_JMP_LEN-byte E9 rel32 jump placed at from to to.
 * Returns 0, or -ERANGE when to is beyond +-2 GiB of from (the bytes are
 * written anyway: with 32-bit addresses the sum wraps and they are right). */
int win_hook_jmp32(uint8_t *out, uint64_t from, uint64_t to);

/* x86-64 absolute jump: FF 25 00000000 followed by the 8-byte target. */
#define WIN_HOOK_JMPABS_LEN 14
void win_hook_jmpabs(uint8_t *out, uint64_t to);

#endif
