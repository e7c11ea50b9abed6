/* SPDX-License-Identifier: MIT */
/* Call stacks on x86-64 and AArch64 from the program's own .eh_frame, with
 * a rule per return address cached process-wide: no descriptor, no
 * syscall on the way (glibc's _dl_find_object, through libgcc's
 * _Unwind_Find_FDE, finds the FDE), and a step costs a table probe and one
 * or two loads. What differs between the two CPUs is in col_unwind_cpu.h.
 *
 * Why not libunwind: its memory validation keeps a pipe on two of the
 * program's descriptors (3 and 4 when it starts), reads and writes them on
 * later unwinds even after the program closed and reused those numbers,
 * and calls mincore and rt_sigprocmask, which seccomp sandboxes forbid.
 * libunwind stays the reference of MEMSCRIBE_UNWIND=verify only.
 *
 * A frame's rule (DWARF CFI, the row for its address) is kept in its
 * short form when it has the shapes compilers emit: CFA = sp or fp (rbp,
 * x29) plus an offset, the return address and fp saved at offsets from the
 * CFA. Anything else (signal trampolines, realigned stacks' CFA
 * expressions, a return address still in x30 or signed) is interpreted
 * again at each step, which is exact but slower. */
#ifndef COL_UNWIND_LIBGCC

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "collector/col_internal.h"
#include "collector/col_unwind_cpu.h"
#include "collector/col_unwind_internal.h"
#include "util/util_leb128.h"

/* libgcc's lookup (unwind-dw2-fde.h): the FDE covering pc, and the
 * function's start in bases->func. */
struct col_eh_bases {
    void *tbase, *dbase, *func;
};
extern const void *_Unwind_Find_FDE(void *pc, struct col_eh_bases *bases);

/* How a register is recovered (DWARF 6.4.1). */
enum {
    COL_HOW_SAME,
    COL_HOW_UNDEF,
    COL_HOW_OFFSET,
    COL_HOW_VAL_OFFSET,
    COL_HOW_EXPR,
    COL_HOW_VAL_EXPR,
    COL_HOW_OTHER
};

struct col_reg_rule {
    uint8_t how;
    int64_t off;
    const uint8_t *expr; /* length-prefixed block (uleb length, then ops) */
};

struct col_row {
    uint8_t cfa_reg; /* 0xff: cfa_expr */
    int64_t cfa_off;
    const uint8_t *cfa_expr;
    struct col_reg_rule fp, sp, ra;
    uint8_t ra_signed; /* AArch64: the return address is signed (col_cpu_ra_strip) */
};

/* A parsed FDE: its instructions and its CIE's, up to the target. */
struct col_cfi {
    const uint8_t *cie_ins, *cie_end, *fde_ins, *fde_end;
    uint64_t code_align, start;
    int64_t data_align;
    uint8_t fde_enc, signal;
};

/* The registers a walk knows: the ones the CFI of the frames compilers
 * write read. */
struct col_regs {
    uint64_t ip, sp;
    /* 0: not known (the CFI said so). A known fp of 0 (the outermost
     * frame's) is as good as none: no CFA is found from it. */
    uint64_t fp;
    /* COL_UF_EXACT: ip is the interrupted instruction, not a return
     * address; else 0. */
    uint64_t exact;
    /* AArch64: x30 where ip is exact and x30 known (a signal context's),
     * else 0; x86-64 has no such register. A step by the short rule never
     * reads it: only an interrupted leaf's frame, whose return address is
     * still in x30, and that is a slow step. */
    uint64_t lr;
};

/* LEB128 in CFI: a truncated one yields the bits read, and the parse
 * after it finds the end. */
static inline uint64_t col_uleb(const uint8_t **pp, const uint8_t *end)
{
    uint64_t v;

    (void)util_uleb128(pp, end, &v);
    return v;
}

static inline int64_t col_sleb(const uint8_t **pp, const uint8_t *end)
{
    int64_t v;

    (void)util_sleb128(pp, end, &v);
    return v;
}

/* The size of a value in pointer encoding enc (LSB 3.0 10.5.1), or -1. */
static int col_enc_size(uint8_t enc)
{
    switch (enc & 0x0f) {
    case 0x00:
        return 8; /* absptr */
    case 0x02:
    case 0x0a:
        return 2;
    case 0x03:
    case 0x0b:
        return 4;
    case 0x04:
    case 0x0c:
        return 8;
    default:
        return -1; /* uleb/sleb here: never seen, not handled */
    }
}

/* Find and parse the FDE covering pc. Returns 0, or -1. */
static int col_cfi_find(uint64_t pc, struct col_cfi *cfi)
{
    struct col_eh_bases bases;
    const uint8_t *fde = _Unwind_Find_FDE((void *)pc, &bases), *p, *cie, *end;
    uint32_t len;
    int32_t cie_off;
    int psize, has_z = 0;

    if (!fde)
        return -1;
    memcpy(&len, fde, 4);
    if (len == 0xffffffffu || len < 8)
        return -1;
    cfi->fde_end = fde + 4 + len;
    memcpy(&cie_off, fde + 4, 4);
    cie = fde + 4 - cie_off;
    memcpy(&len, cie, 4);
    if (len == 0xffffffffu)
        return -1;
    end = cie + 4 + len;
    p = cie + 8; /* past length and CIE id */
    if (*p != 1 && *p != 3)
        return -1;
    {
        uint8_t version = *p++;
        const char *aug = (const char *)p;

        p += strlen(aug) + 1;
        cfi->code_align = col_uleb(&p, end);
        cfi->data_align = col_sleb(&p, end);
        if (version == 1)
            p++;
        else
            (void)col_uleb(&p, end);
        cfi->fde_enc = 0;
        cfi->signal = 0;
        if (aug[0] == 'z') {
            uint64_t alen = col_uleb(&p, end);
            const uint8_t *aend = p + alen, *q = p;

            has_z = 1;
            for (const char *a = aug + 1; *a; a++) {
                if (*a == 'R') {
                    cfi->fde_enc = *q++;
                } else if (*a == 'L') {
                    q++;
                } else if (*a == 'P') {
                    uint8_t penc = *q++;
                    int s = col_enc_size(penc);

                    if (s < 0)
                        return -1;
                    q += s;
                } else if (*a == 'S') {
                    cfi->signal = 1;
                } else if (*a == 'B') {
                    /* AArch64: signed with the B key; XPACLRI strips either */
                } else {
                    return -1;
                }
            }
            p = aend;
        } else if (aug[0]) {
            return -1;
        }
    }
    cfi->cie_ins = p;
    cfi->cie_end = end;
    psize = col_enc_size(cfi->fde_enc);
    if (psize < 0)
        return -1;
    p = fde + 8 + 2 * psize;
    if (has_z) {
        uint64_t alen = col_uleb(&p, cfi->fde_end);

        p += alen;
    }
    cfi->fde_ins = p;
    cfi->start = (uint64_t)(uintptr_t)bases.func;
    return 0;
}

static struct col_reg_rule *col_row_reg(struct col_row *r, uint64_t reg)
{
    return reg == COL_DW_FP ? &r->fp : reg == COL_DW_SP ? &r->sp : reg == COL_DW_RA ? &r->ra : NULL;
}

/* DW_CFA_restore of reg: its rule back to the CIE's (init). Returns 0, or
 * -1 where there is no CIE row to go back to. */
static int col_row_restore(struct col_row *row, const struct col_row *init, uint64_t reg)
{
    struct col_reg_rule *rr = col_row_reg(row, reg);

    if (!rr)
        return 0;
    if (!init)
        return -1;
    *rr = *col_row_reg((struct col_row *)init, reg);
    return 0;
}

#define COL_CFI_STATES 8

/* Run CFA instructions [p, end) while the location stays <= pc. init is
 * the CIE's row, for DW_CFA_restore. Returns 0, 1 once past pc, or -1 on
 * an instruction we do not know. */
static int col_cfi_run(const struct col_cfi *cfi, const uint8_t *p, const uint8_t *end,
                       uint64_t *loc, uint64_t pc, struct col_row *row, const struct col_row *init)
{
    struct col_row stack[COL_CFI_STATES];
    int depth = 0;

    while (p < end) {
        uint8_t op = *p++, low = op & 0x3f;
        uint64_t reg, delta = 0;
        struct col_reg_rule *rr;

        switch (op >> 6) {
        case 1: /* advance_loc */
            delta = low;
            goto advance;
        case 2: /* offset */
            rr = col_row_reg(row, low);
            if (rr) {
                rr->how = COL_HOW_OFFSET;
                rr->off = (int64_t)col_uleb(&p, end) * cfi->data_align;
            } else {
                (void)col_uleb(&p, end);
            }
            continue;
        case 3: /* restore */
            if (col_row_restore(row, init, low))
                return -1;
            continue;
        }
        switch (op) {
        case 0x00: /* nop */
            continue;
        case 0x02:   /* advance_loc1 */
        case 0x03:   /* advance_loc2 */
        case 0x04: { /* advance_loc4, all little-endian */
            unsigned width = op == 0x02 ? 1 : op == 0x03 ? 2 : 4;

            for (unsigned b = 0; b < width; b++)
                delta |= (uint64_t)p[b] << (8 * b);
            p += width;
            goto advance;
        }
        case 0x05:   /* offset_extended */
        case 0x11:   /* offset_extended_sf */
        case 0x14:   /* val_offset */
        case 0x15: { /* val_offset_sf */
            int64_t off;

            reg = col_uleb(&p, end);
            off = op == 0x05 || op == 0x14 ? (int64_t)col_uleb(&p, end) : col_sleb(&p, end);
            rr = col_row_reg(row, reg);
            if (rr) {
                rr->how = op == 0x05 || op == 0x11 ? COL_HOW_OFFSET : COL_HOW_VAL_OFFSET;
                rr->off = off * cfi->data_align;
            }
            continue;
        }
        case 0x06: /* restore_extended */
            if (col_row_restore(row, init, col_uleb(&p, end)))
                return -1;
            continue;
        case 0x07: /* undefined */
        case 0x08: /* same_value */
            reg = col_uleb(&p, end);
            rr = col_row_reg(row, reg);
            if (rr) {
                rr->how = op == 0x07 ? COL_HOW_UNDEF : COL_HOW_SAME;
                rr->off = 0;
            }
            continue;
        case 0x09: /* register */
            reg = col_uleb(&p, end);
            (void)col_uleb(&p, end);
            rr = col_row_reg(row, reg);
            if (rr)
                rr->how = COL_HOW_OTHER;
            continue;
        case 0x0a: /* remember_state */
            if (depth == COL_CFI_STATES)
                return -1;
            stack[depth++] = *row;
            continue;
        case 0x0b: /* restore_state */
            if (!depth)
                return -1;
            *row = stack[--depth];
            continue;
        case 0x0c: /* def_cfa */
            row->cfa_reg = (uint8_t)col_uleb(&p, end);
            row->cfa_off = (int64_t)col_uleb(&p, end);
            continue;
        case 0x12: /* def_cfa_sf */
            row->cfa_reg = (uint8_t)col_uleb(&p, end);
            row->cfa_off = col_sleb(&p, end) * cfi->data_align;
            continue;
        case 0x0d: /* def_cfa_register */
            row->cfa_reg = (uint8_t)col_uleb(&p, end);
            continue;
        case 0x0e: /* def_cfa_offset */
            row->cfa_off = (int64_t)col_uleb(&p, end);
            continue;
        case 0x13: /* def_cfa_offset_sf */
            row->cfa_off = col_sleb(&p, end) * cfi->data_align;
            continue;
        case 0x0f: /* def_cfa_expression */
            row->cfa_reg = 0xff;
            row->cfa_expr = p;
            p += col_uleb(&p, end);
            continue;
        case 0x10:   /* expression */
        case 0x16: { /* val_expression */
            const uint8_t *e;

            reg = col_uleb(&p, end);
            e = p;
            p += col_uleb(&p, end);
            rr = col_row_reg(row, reg);
            if (rr) {
                rr->how = op == 0x10 ? COL_HOW_EXPR : COL_HOW_VAL_EXPR;
                rr->expr = e;
            }
            continue;
        }
        case 0x2d: /* AARCH64_negate_ra_state (GNU_window_save, SPARC's, elsewhere) */
            row->ra_signed ^= 1;
            continue;
        case 0x2e: /* GNU_args_size */
            (void)col_uleb(&p, end);
            continue;
        case 0x2f: /* GNU_negative_offset_extended */
            reg = col_uleb(&p, end);
            rr = col_row_reg(row, reg);
            if (rr) {
                rr->how = COL_HOW_OFFSET;
                rr->off = -(int64_t)col_uleb(&p, end) * cfi->data_align;
            } else {
                (void)col_uleb(&p, end);
            }
            continue;
        default:
            return -1; /* set_loc and the rest: never emitted on x86-64 */
        }
    advance:
        *loc += delta * cfi->code_align;
        if (*loc > pc)
            return 1;
    }
    return 0;
}

/* The row for pc. Returns 0, or -1 (no FDE, or CFI we do not read). */
static int col_cfi_row(uint64_t pc, struct col_row *row, uint8_t *signal)
{
    struct col_cfi cfi;
    struct col_row init;
    uint64_t loc;

    if (col_cfi_find(pc, &cfi) != 0)
        return -1;
    memset(row, 0, sizeof(*row));
    row->cfa_reg = COL_DW_SP;
    loc = cfi.start;
    if (col_cfi_run(&cfi, cfi.cie_ins, cfi.cie_end, &loc, ~0ull, row, NULL) < 0)
        return -1;
    init = *row;
    loc = cfi.start;
    if (col_cfi_run(&cfi, cfi.fde_ins, cfi.fde_end, &loc, pc, row, &init) < 0)
        return -1;
    *signal = cfi.signal;
    return 0;
}

/* A DWARF expression of the kinds CFI uses (register plus offset,
 * dereference, constants, arithmetic) over the registers we know. */
static int col_expr_eval(const uint8_t *e, const struct col_regs *r, uint64_t *out)
{
    const uint8_t *p = e, *end;
    uint64_t st[8], len = col_uleb(&p, e + 8);
    int n = 0;

    end = p + len;
    while (p < end) {
        uint8_t op = *p++;

        if (n >= 7)
            return -1;
        if (op >= 0x70 && op <= 0x8f) { /* breg0..31 */
            unsigned reg = op - 0x70;
            int64_t off = col_sleb(&p, end);

            if (reg == COL_DW_SP)
                st[n++] = r->sp + (uint64_t)off;
            else if (reg == COL_DW_FP && r->fp)
                st[n++] = r->fp + (uint64_t)off;
            else
                return -1;
        } else if (op >= 0x30 && op <= 0x4f) { /* lit0..31 */
            st[n++] = op - 0x30;
        } else if (op == 0x06) { /* deref */
            if (!n || !st[n - 1])
                return -1;
            st[n - 1] = *(const uint64_t *)(uintptr_t)st[n - 1];
        } else if (op == 0x23) { /* plus_uconst */
            if (!n)
                return -1;
            st[n - 1] += col_uleb(&p, end);
        } else if (op == 0x11) { /* consts */
            st[n++] = (uint64_t)col_sleb(&p, end);
        } else if (op == 0x10) { /* constu */
            st[n++] = col_uleb(&p, end);
        } else if (op == 0x22 || op == 0x1c) { /* plus, minus */
            if (n < 2)
                return -1;
            st[n - 2] = op == 0x22 ? st[n - 2] + st[n - 1] : st[n - 2] - st[n - 1];
            n--;
        } else {
            return -1;
        }
    }
    if (!n)
        return -1;
    *out = st[n - 1];
    return 0;
}

/* The cached short form of a row. The bits a memo entry has too are the
 * same (COL_UF_*), so that they move over as they are. */
#define COL_R_FP_LOST 0x01            /* fp undefined in the caller */
#define COL_R_SIGNAL COL_UF_EXACT     /* a signal trampoline: the caller's ip is exact */
#define COL_R_STEPPED COL_UF_STEPPED  /* set in every rule a step can follow */
#define COL_R_CFA_FP COL_UF_CFA_FP    /* CFA = fp + cfa_off, else sp + cfa_off */
#define COL_R_FP_SAVED COL_UF_FP_SLOT /* fp restored from CFA + 8 * fp_off8 */
#define COL_R_END 0x20                /* return address undefined: the outermost frame */
#define COL_R_SLOW 0x40               /* interpret the CFI at each step */
#define COL_R_NOINFO 0x80             /* no FDE, or CFI we do not read: the walk ends */

/* CFA = sp or fp plus cfa_off; the return address and fp at CFA plus 8
 * times their offsets. */
struct col_unwind_rule {
    int32_t cfa_off;
    int8_t fp_off8;
    int8_t ra_off8;
    uint8_t flags; /* COL_R_* */
    uint8_t pad;
};
/* Its last 4 bytes are a fresh frame's from fp_off8 on (col_step). */
_Static_assert(
    offsetof(struct col_unwind_fresh, fp_off8) - offsetof(struct col_unwind_fresh, node) ==
            offsetof(struct col_unwind_rule, fp_off8) &&
        offsetof(struct col_unwind_fresh, ra_off8) - offsetof(struct col_unwind_fresh, node) ==
            offsetof(struct col_unwind_rule, ra_off8) &&
        offsetof(struct col_unwind_fresh, rule) - offsetof(struct col_unwind_fresh, node) ==
            offsetof(struct col_unwind_rule, flags) &&
        offsetof(struct col_unwind_fresh, exact) - offsetof(struct col_unwind_fresh, node) == 7 &&
        sizeof(struct col_unwind_rule) == 8,
    "col_unwind_rule, col_unwind_fresh");

/* The rule of the frame at ip, by the row of pc (col_frame_pc). */
static struct col_unwind_rule col_rule_make(uint64_t pc, uint64_t ip)
{
    struct col_unwind_rule r = {0, 0, 0, 0, 0};
    struct col_row row;
    uint8_t signal = 0;
    int found = col_cfi_row(pc, &row, &signal) == 0;

    /* A signal trampoline known by its code (col_cpu_sigreturn_at): where
     * no FDE covers it, or one that says it is a signal frame. */
    if ((!found || signal) && col_cpu_sigreturn_at(ip)) {
        r.flags |= COL_R_SLOW;
        return r;
    }
    if (!found) {
        r.flags |= COL_R_NOINFO;
        return r;
    }
    if (signal)
        r.flags |= COL_R_SIGNAL;
    if ((row.cfa_reg != COL_DW_SP && row.cfa_reg != COL_DW_FP) ||
        row.cfa_off != (int32_t)row.cfa_off || row.sp.how != COL_HOW_SAME || row.ra_signed ||
        (row.ra.how != COL_HOW_UNDEF && (row.ra.how != COL_HOW_OFFSET || row.ra.off % 8 ||
                                         row.ra.off / 8 != (int8_t)(row.ra.off / 8))) ||
        (row.fp.how != COL_HOW_SAME && row.fp.how != COL_HOW_UNDEF &&
         (row.fp.how != COL_HOW_OFFSET || row.fp.off % 8 ||
          row.fp.off / 8 != (int8_t)(row.fp.off / 8)))) {
        r.flags |= COL_R_SLOW;
        return r;
    }
    r.cfa_off = (int32_t)row.cfa_off;
    r.flags |= COL_R_STEPPED;
    if (row.cfa_reg == COL_DW_FP)
        r.flags |= COL_R_CFA_FP;
    if (row.ra.how == COL_HOW_UNDEF)
        r.flags |= COL_R_END;
    else
        r.ra_off8 = (int8_t)(row.ra.off / 8);
    if (row.fp.how == COL_HOW_OFFSET) {
        r.flags |= COL_R_FP_SAVED;
        r.fp_off8 = (int8_t)(row.fp.off / 8);
    } else if (row.fp.how == COL_HOW_UNDEF) {
        r.flags |= COL_R_FP_LOST;
    }
    return r;
}

/* One register's value in the caller by its full rule. */
static int col_reg_recover(const struct col_reg_rule *rr, uint64_t cfa, const struct col_regs *r,
                           uint64_t cur, uint64_t *out)
{
    uint64_t a;

    switch (rr->how) {
    case COL_HOW_SAME:
        *out = cur;
        return 0;
    case COL_HOW_OFFSET:
        *out = *(const uint64_t *)(uintptr_t)(cfa + (uint64_t)rr->off);
        return 0;
    case COL_HOW_VAL_OFFSET:
        *out = cfa + (uint64_t)rr->off;
        return 0;
    case COL_HOW_EXPR:
        if (col_expr_eval(rr->expr, r, &a) != 0 || !a)
            return -1;
        *out = *(const uint64_t *)(uintptr_t)a;
        return 0;
    case COL_HOW_VAL_EXPR:
        return col_expr_eval(rr->expr, r, out);
    default:
        return -1;
    }
}

/* A step by the full rule (COL_R_SLOW). Returns 1 stepped, 0 at the end,
 * -1 when the rule needs what we do not know. */
static int col_step_slow(struct col_regs *r, uint64_t pc)
{
    struct col_row row;
    uint8_t signal = 0;
    uint64_t cfa, ra, sp, fp = r->fp;

    if (col_cpu_sigreturn_at(r->ip)) {
        /* The trampoline a handler returned to: the interrupted state is
         * in the frame the kernel wrote, all of it. */
        struct col_cpu_context c = col_cpu_sigframe(r->sp);

        *r = (struct col_regs){c.ip, c.sp, c.fp, COL_UF_EXACT, c.lr};
        return c.ip ? 1 : 0;
    }
    if (col_cfi_row(pc, &row, &signal) != 0)
        return -1;
    if (row.cfa_reg == 0xff) {
        if (col_expr_eval(row.cfa_expr, r, &cfa) != 0)
            return -1;
    } else if (row.cfa_reg == COL_DW_SP) {
        cfa = r->sp + (uint64_t)row.cfa_off;
    } else if (row.cfa_reg == COL_DW_FP && r->fp) {
        cfa = r->fp + (uint64_t)row.cfa_off;
    } else {
        return -1;
    }
    if (row.ra.how == COL_HOW_UNDEF)
        return 0;
    /* The return address "same value": still in its register, which only
     * an interrupted frame's context tells (AArch64's x30). */
    if (row.ra.how == COL_HOW_SAME ? !COL_CPU_LR || !r->exact || !r->lr
                                   : col_reg_recover(&row.ra, cfa, r, r->ip, &ra) != 0)
        return -1;
    if (row.ra.how == COL_HOW_SAME)
        ra = r->lr;
    if (row.ra_signed)
        ra = col_cpu_ra_strip(ra);
    sp = cfa;
    if (row.sp.how != COL_HOW_SAME && col_reg_recover(&row.sp, cfa, r, r->sp, &sp) != 0)
        return -1;
    if (row.fp.how == COL_HOW_UNDEF)
        fp = 0;
    else if (col_reg_recover(&row.fp, cfa, r, r->fp, &fp) != 0)
        return -1;
    r->fp = fp;
    r->sp = sp;
    r->ip = ra;
    r->exact = signal ? COL_UF_EXACT : 0;
    r->lr = 0; /* a frame the CFI steps into has its x30 in no context */
    return 1;
}

/* The process-wide rule table: open addressing, insert-only, key = pc
 * (top bit set for an exact pc) with its rule published after it. A full
 * table only means rules are made again. 2 MiB, one huge page where the
 * kernel gives them (col_sys_mmap_table): the hash spreads even a short
 * program's few hundred rules over every page of it, a page fault each
 * (a traced `python3 -c 'print(1)'` took 270 of them in a 1 MiB table). */
#define COL_RULE_SLOTS (1u << 17) /* col_rule_get's index: 17 bits of a hash */
#define COL_RULE_PROBES 16
#define COL_RULE_BUSY 1ull

struct col_rule_slot {
    _Atomic uint64_t key;
    struct col_unwind_rule rule;
};

#define COL_RULE_BYTES ((size_t)COL_RULE_SLOTS * sizeof(struct col_rule_slot))

static struct col_rule_slot *_Atomic col_rules;
static _Atomic uint32_t col_rules_gen = 1; /* walks' memos hold for one generation */

/* The key of a frame in the rule table: its ip, the top bit set when the
 * ip is exact (exact: COL_UF_EXACT; the rule is then the ip's own, else
 * the call's, ip - 1). */
static inline uint64_t col_rule_key(uint64_t ip, uint64_t exact)
{
    _Static_assert(COL_UF_EXACT == 2, "COL_UF_EXACT");
    return ip | exact << 62;
}

/* The pc whose rule a frame follows. */
static inline uint64_t col_frame_pc(uint64_t ip, uint64_t exact)
{
    return ip - 1 + (exact >> 1);
}

/* The rule of key past the first probe: in the table, made and put there,
 * or, the table being full, made into *spare. */
static __attribute__((noinline)) const struct col_unwind_rule *
col_rule_probe(struct col_rule_slot *tab, uint64_t key, uint32_t i, struct col_unwind_rule *spare)
{
    uint64_t pc = col_frame_pc(key << 1 >> 1, key >> 63 << 1);

    for (int probe = 0; tab && probe < COL_RULE_PROBES; probe++) {
        struct col_rule_slot *s = &tab[(i + (uint32_t)probe) & (COL_RULE_SLOTS - 1)];
        uint64_t k = atomic_load_explicit(&s->key, memory_order_acquire);

        if (k == key)
            return &s->rule;
        if (k == 0) {
            uint64_t expect = 0;

            *spare = col_rule_make(pc, key << 1 >> 1);
            if (atomic_compare_exchange_strong(&s->key, &expect, COL_RULE_BUSY)) {
                s->rule = *spare;
                atomic_store_explicit(&s->key, key, memory_order_release);
            }
            return spare;
        }
    }
    *spare = col_rule_make(pc, key << 1 >> 1);
    return spare;
}

/* The rule of key (col_rule_key) from tab (mapped before the collector
 * starts: never NULL in a walk): the first probe inline, the rest out of
 * line. A rule in the table never changes. */
static inline const struct col_unwind_rule *col_rule_get(struct col_rule_slot *tab, uint64_t key,
                                                         struct col_unwind_rule *spare)
{
    uint32_t i = (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 47); /* < COL_RULE_SLOTS */
    struct col_rule_slot *s = &tab[i];

    if (COL_LIKELY(atomic_load_explicit(&s->key, memory_order_acquire) == key))
        return &s->rule;
    return col_rule_probe(tab, key, i, spare);
}

/* A thread's near cache (struct col_unwind_memo): direct-mapped by the
 * top bits of the same hash, so that the few hundred rules a program's hot
 * paths step through share a few KiB instead of a line each. Only its
 * thread reads or writes it. */
struct col_rule_near {
    uint64_t key; /* 0: empty */
    struct col_unwind_rule rule;
};

/* The cache, one for all of a ring's memos (their near). */
struct col_rule_near_cache {
    uint32_t gen; /* the rule table's generation its rules are of */
    uint32_t pad[15];
    struct col_rule_near e[1u << COL_RULE_NEAR_BITS];
};
_Static_assert(sizeof(struct col_rule_near_cache) == COL_RULE_NEAR_BYTES, "COL_RULE_NEAR_BYTES");

/* The rule of key: from near when it has it, else from tab, and kept in
 * near. The rule is copied: one in the table never changes, and near is
 * emptied when the table is replaced (col_near_check). */
static inline const struct col_unwind_rule *col_rule_near_get(struct col_rule_near_cache *near,
                                                              struct col_rule_slot *tab,
                                                              uint64_t key,
                                                              struct col_unwind_rule *spare)
{
    struct col_rule_near *n =
        &near->e[(uint32_t)((key * 0x9e3779b97f4a7c15ull) >> (64 - COL_RULE_NEAR_BITS))];
    const struct col_unwind_rule *ru;

    if (COL_LIKELY(n->key == key))
        return &n->rule;
    ru = col_rule_get(tab, key, spare);
    n->key = key;
    n->rule = *ru;
    return ru;
}

/* Empty the near cache if it holds rules of an older table. */
static inline void col_near_check(struct col_rule_near_cache *near, uint32_t gen)
{
    if (COL_UNLIKELY(near->gen != gen)) {
        memset(near->e, 0, sizeof(near->e));
        near->gen = gen;
    }
}

/* Tables, one in use: an unload moves to the next (mapped the first time,
 * wiped when it comes round again), so that address space stays bounded
 * however often a program loads and unloads objects. A walk may still
 * hold the table it started with; reused only COL_RULE_TABLES unloads
 * later, it is long done with it. Even then a slot it reads as the wipe
 * passes holds zeros or its old rule, and a zero rule (CFA = sp + 0)
 * only ends that walk (col_step). */
#define COL_RULE_TABLES 8

static struct col_rule_slot *col_rule_tabs[COL_RULE_TABLES];
static uint32_t col_rule_cur; /* changed under col_module_lock only */

int col_unwind_init(void)
{
    struct col_rule_slot *tab = col_sys_mmap_table(COL_RULE_BYTES);

    if (!tab)
        return -1;
    col_rule_tabs[0] = tab;
    atomic_store(&col_rules, tab);
    return 0;
}

void col_unwind_forget(void)
{
    /* An object was unloaded: its addresses may come back as another's,
     * so no rule made before may be used again. */
    uint32_t k = (col_rule_cur + 1) % COL_RULE_TABLES;
    struct col_rule_slot *tab = col_rule_tabs[k];

    if (!tab)
        tab = col_rule_tabs[k] = col_sys_mmap_table(COL_RULE_BYTES);
    else
        madvise(tab, COL_RULE_BYTES, MADV_DONTNEED); /* zero pages again */
    if (!tab) {
        /* No room for a new one: wipe the one in use. */
        k = col_rule_cur;
        tab = col_rule_tabs[k];
        madvise(tab, COL_RULE_BYTES, MADV_DONTNEED);
    }
    col_rule_cur = k;
    atomic_store(&col_rules, tab);
    atomic_fetch_add(&col_rules_gen, 1); /* and memos of walks are void */
}

/* What col_step did. */
enum { COL_STEP_SLOW = -1, COL_STEP_END = 0, COL_STEP_END_FP, COL_STEP_DONE };

/* One step of a walk from *r by its frame's cached rule: COL_STEP_DONE
 * (*r is the caller's state; with e, *e is the frame and its rule),
 * COL_STEP_END or COL_STEP_END_FP (the walk ends at this frame, the
 * second for a reason that depends on fp), COL_STEP_SLOW (the frame's
 * rule must be read again at each step: col_step_slow). Inlined into both
 * walks, whose state then stays in registers. */
static inline __attribute__((always_inline)) int col_step(struct col_rule_slot *tab,
                                                          struct col_rule_near_cache *near,
                                                          struct col_regs *r,
                                                          struct col_unwind_fresh *e)
{
    struct col_unwind_rule spare;
    uint64_t key = col_rule_key(r->ip, r->exact);
    const struct col_unwind_rule *ru =
        near ? col_rule_near_get(near, tab, key, &spare) : col_rule_get(tab, key, &spare);
    uint8_t rf = ru->flags;
    uint64_t cfa;

    if (COL_UNLIKELY(rf & (COL_R_END | COL_R_NOINFO | COL_R_SLOW)))
        return (rf & COL_R_SLOW) ? COL_STEP_SLOW : COL_STEP_END;
    cfa = ((rf & COL_R_CFA_FP) ? r->fp : r->sp) + (uint64_t)(int64_t)ru->cfa_off;
    if (COL_UNLIKELY(((rf & COL_R_CFA_FP) && !r->fp) || cfa <= r->sp || (cfa & 7)))
        return (rf & COL_R_CFA_FP) ? COL_STEP_END_FP : COL_STEP_END;
    if (e) {
        uint64_t word;

        /* node 0, the rule's offsets and flags, exact: one store */
        memcpy(&word, ru, sizeof(word));
        word = (word & 0x00ffffff00000000ull) | r->exact << 56;
        e->ip = r->ip;
        e->sp = r->sp;
        e->fp = r->fp;
        memcpy(&e->node, &word, sizeof(word));
    }
    r->ip = *(const uint64_t *)(uintptr_t)(cfa + (uint64_t)(int64_t)ru->ra_off8 * 8);
    if (rf & (COL_R_FP_SAVED | COL_R_FP_LOST))
        r->fp = (rf & COL_R_FP_SAVED)
                    ? *(const uint64_t *)(uintptr_t)(cfa + (uint64_t)(int64_t)ru->fp_off8 * 8)
                    : 0;
    r->exact = rf & COL_R_SIGNAL;
    r->sp = cfa;
    if (COL_CPU_LR)
        r->lr = 0;
    return COL_STEP_DONE;
}

/* A walk without a memo: the frames' ips into buf. */
static int col_walk(struct col_regs r, void **buf, int max)
{
    struct col_rule_slot *tab = atomic_load_explicit(&col_rules, memory_order_acquire);
    int n = 0;

    while (n < max && r.ip) {
        uint64_t ip = r.ip;
        int rc = col_step(tab, NULL, &r, NULL);

        buf[n++] = (void *)(uintptr_t)ip;
        if (rc == COL_STEP_DONE)
            continue;
        if (rc != COL_STEP_SLOW || col_step_slow(&r, col_frame_pc(r.ip, r.exact)) <= 0)
            break;
    }
    return n;
}

/* The end of a walk whose own frames are m->s_next[0..nr): f[] becomes
 * its last entry r alone (the frame where it ended, or the state after its
 * last step), with flags fl; need: the walk from there depends on its
 * fp. */
static __attribute__((noinline)) int col_memo_end(struct col_unwind_memo *m, struct col_regs r,
                                                  uint32_t fl, uint32_t need, uint32_t nr,
                                                  uint32_t s_stop, int is_frame, uint32_t gen)
{
    struct col_unwind_fresh *s = m->s_next;

    fl |= (need ? COL_UF_NEED_FP : 0) | (uint32_t)r.exact;
    m->f[1] = (struct col_unwind_frame){r.ip, r.sp, r.fp, 0, 0, (uint8_t)fl, 0};
    m->n = 1;
    m->base = !is_frame;
    m->stop = 1;
    m->nr_s = nr;
    m->s_stop = s_stop;
    m->s_next = m->s;
    m->s = s;
    m->gen = gen;
    return (int)col_unwind_memo_nr(m);
}

/* A walk with n frames of its own takes entries i - take + 1..i of f[] and
 * stops at its maximum there (take = max - n): those entries move down to
 * 1..take, behind a last entry marked COL_UF_CUT, which a later walk
 * cannot go on from; it can take them only if it reaches its maximum too.
 * Their marks stay: a walk that never goes on past the cut depends on no
 * more than the old walk did. */
static __attribute__((noinline)) void col_memo_cut(struct col_unwind_memo *m, uint32_t i,
                                                   uint32_t take)
{
    struct col_unwind_frame *f = m->f + 1;
    uint32_t lo = i - take, c0 = f[lo].nchk, c1 = f[i].nchk;

    memmove(m->chk, m->chk + c0, (c1 - c0) * sizeof(*m->chk));
    memmove(f, f + lo, (take + 1) * sizeof(*f));
    f[0].flags = (uint8_t)((f[0].flags & COL_UF_EXACT) | COL_UF_CUT);
    f[0].nchk = 0;
    for (uint32_t k = 0; k <= take; k++) {
        f[k].node = 0;
        if (k)
            f[k].nchk = (uint16_t)(f[k].nchk - c0);
    }
    m->base = 1;
}

/* What a walk learnt of the last one's slots: chk[0..ok) hold what they
 * held, chk[bad] not; only the last walk's own frames from s_from out can
 * be taken. */
struct col_memo_seen {
    uint32_t ok, bad;
    const struct col_unwind_fresh *s_from;
};

/* Do chk[0..nc) hold what they held? */
static inline __attribute__((always_inline)) int
col_memo_valid(const struct col_unwind_memo *m, uint32_t nc, struct col_memo_seen *seen)
{
    const struct col_unwind_check *c, *end = m->chk + nc;

    if (nc > seen->bad)
        return 0;
    /* This runs for every frame a walk takes: four slots a round, their
     * differences or-ed, one branch; the first that differs is looked for
     * only when one does. */
    for (c = m->chk + seen->ok; c + 4 <= end; c += 4)
        if (COL_UNLIKELY((*c[0].at ^ c[0].val) | (*c[1].at ^ c[1].val) | (*c[2].at ^ c[2].val) |
                         (*c[3].at ^ c[3].val)))
            goto differs;
    for (; c < end; c++)
        if (COL_UNLIKELY(*c->at != c->val))
            goto differs;
    if (nc > seen->ok)
        seen->ok = nc;
    return 1;
differs:
    while (*c->at == c->val)
        c++;
    seen->ok = seen->bad = (uint32_t)(c - m->chk);
    return 0;
}

/* Can the last walk's own frames t..end (s[] from t out) be taken, with
 * the entries of f[] outside them (already checked)? The slots each one's
 * step read, found from the frame outside it, still hold what that frame
 * holds (fp's only where the rest of the walk depends on it), and t's fp
 * is fp if the rest depends on it. They are written behind f[]'s entries,
 * outermost first, with their checks, as they are checked; the memo takes
 * them only if they pass. Returns 1 if they do, else 0. */
static inline __attribute__((always_inline)) int
col_memo_keep(struct col_unwind_memo *m, const struct col_unwind_fresh *t,
              const struct col_unwind_fresh *end, uint64_t fp, struct col_memo_seen *seen)
{
    struct col_unwind_frame *e = m->f + 1 + m->n;
    uint64_t need = e[-1].flags & COL_UF_NEED_FP, nc = e[-1].nchk;
    uint64_t ip = e[-1].ip, cfa = e[-1].sp, nfp = e[-1].fp;

    for (const struct col_unwind_fresh *u = end; u-- > t; e++) {
        uint64_t rf = u->rule;
        const uint64_t *at = (const uint64_t *)(uintptr_t)(cfa + (uint64_t)(int64_t)u->ra_off8 * 8);

        if (*at != ip)
            goto bad;
        m->chk[nc++] = (struct col_unwind_check){at, ip};
        if (rf & COL_R_CFA_FP) {
            need = COL_UF_NEED_FP;
        } else if (rf & COL_R_FP_SAVED) {
            if (need) {
                at = (const uint64_t *)(uintptr_t)(cfa + (uint64_t)(int64_t)u->fp_off8 * 8);
                if (*at != nfp)
                    goto bad;
                m->chk[nc++] = (struct col_unwind_check){at, nfp};
            }
            need = 0;
        }
        ip = u->ip;
        cfa = u->sp;
        nfp = u->fp;
        *e = (struct col_unwind_frame){
            ip,
            cfa,
            nfp,
            u->node,
            (uint16_t)nc,
            (uint8_t)((rf & (COL_R_STEPPED | COL_R_CFA_FP | COL_R_FP_SAVED)) | u->exact | need),
            0};
        continue;
    bad:
        seen->s_from = u + 1;
        return 0;
    }
    if (need && nfp != fp)
        return 0;
    m->n += (uint32_t)(end - t);
    return 1;
}

/* A walk with nr frames of its own (in m->s_next) has taken f[0..i]:
 * stop at its maximum if that is past it, give f[i] this walk's fp, and
 * make the walk the memo's. Returns the walk's number of frames. */
static inline __attribute__((always_inline)) int col_memo_took(struct col_unwind_memo *m,
                                                               uint32_t i, uint64_t fp, uint32_t nr,
                                                               uint32_t s_stop, uint32_t max)
{
    struct col_unwind_fresh *s = m->s_next;

    if (COL_UNLIKELY(nr + i + 1 - m->base > max)) {
        col_memo_cut(m, i, max - nr);
        i = max - nr;
    }
    /* The entry keeps the fp the old walk had where nothing depends on
     * it: make it this walk's. */
    m->f[1 + i].fp = fp;
    m->n = i + 1;
    m->stop = m->n;
    m->nr_s = nr;
    m->s_stop = s_stop;
    m->s_next = m->s;
    m->s = s;
    return (int)col_unwind_memo_nr(m);
}

/* Walk from r with the ring's memo: a frame of the last walk that is still
 * there is found by its sp (the sp of the last walk's own frames rises from
 * the innermost out, the sp of its entries falls from the outermost in),
 * and the walk takes it and every frame outside it: if it can (the same
 * exactness, the same fp if the rest depends on it, the slots of the
 * steps from it out as they were). The frames are left in the memo. */
static int col_walk_memo(struct col_regs r, int max, struct col_unwind_memo *m)
{
    uint32_t gen = atomic_load_explicit(&col_rules_gen, memory_order_relaxed), s_stop = 0;
    struct col_rule_slot *tab = atomic_load_explicit(&col_rules, memory_order_acquire);
    struct col_unwind_frame *f = m->f + 1, *top = f - 1, *o;
    struct col_unwind_fresh *old = m->s, *s = m->s_next, *s_max, *so;
    struct col_memo_seen seen = {0, UINT32_MAX, NULL};
    int rc;

    col_near_check(m->near, gen);
    s_max = s + max;
    so = old;
    if (m->n && m->gen == gen) {
        so = old + m->s_stop;
        seen.s_from = so;
        top = f + m->stop - 1;
        old[m->nr_s].sp = UINT64_MAX;
    } else {
        old[0].sp = UINT64_MAX;
        f[-1].sp = UINT64_MAX; /* the sentinel, on the memo's first walk */
    }
    o = top;
    for (;;) {
        while (so->sp < r.sp)
            so++;
        if (COL_UNLIKELY(so->sp == r.sp)) {
            /* All of f[] and the last walk's own frames from so out would
             * be taken. */
            if (so->ip == r.ip && so->exact == r.exact && so >= seen.s_from && m->stop == m->n &&
                (!(m->f[1].flags & COL_UF_CUT) ||
                 (uint64_t)(s - m->s_next) + m->n - m->base + (uint64_t)(old + m->nr_s - so) >=
                     (uint64_t)max) &&
                col_memo_valid(m, f[m->n - 1].nchk, &seen) &&
                col_memo_keep(m, so, old + m->nr_s, r.fp, &seen))
                return col_memo_took(m, m->n - 1, r.fp, (uint32_t)(s - m->s_next), s_stop,
                                     (uint32_t)max);
        } else if (so->sp == UINT64_MAX) {
            while (o->sp < r.sp)
                o--;
            if (COL_UNLIKELY(o->sp == r.sp) && o->ip == r.ip &&
                (o->flags & COL_UF_EXACT) == r.exact && o >= f + m->base &&
                (!(m->f[1].flags & COL_UF_CUT) ||
                 (uint64_t)(s - m->s_next) + (uint64_t)(o - f) + 1 - m->base >= (uint64_t)max) &&
                (!(o->flags & COL_UF_NEED_FP) || o->fp == r.fp) &&
                col_memo_valid(m, o->nchk, &seen))
                return col_memo_took(m, (uint32_t)(o - f), r.fp, (uint32_t)(s - m->s_next), s_stop,
                                     (uint32_t)max);
        }
        if (COL_UNLIKELY(s == s_max))
            return col_memo_end(m, r, COL_UF_CUT, 0, (uint32_t)max, s_stop, 0, gen);
        rc = col_step(tab, m->near, &r, s);
        if (COL_LIKELY(rc == COL_STEP_DONE)) {
            s++;
            if (COL_LIKELY(r.ip))
                continue;
            /* The end: the state after the last step, ip 0. */
            return col_memo_end(m, r, 0, 0, (uint32_t)(s - m->s_next), s_stop, 0, gen);
        }
        if (rc != COL_STEP_SLOW)
            /* Ends at this frame, for a reason that depends on its fp or not. */
            return col_memo_end(m, r, 0, rc == COL_STEP_END_FP, (uint32_t)(s - m->s_next), s_stop,
                                1, gen);
        {
            struct col_regs next = r;
            uint32_t nr = (uint32_t)(s - m->s_next);

            if (col_step_slow(&next, col_frame_pc(r.ip, r.exact)) <= 0) {
                /* A slow step that ends the walk: no frame of it can be
                 * taken. */
                rc = col_memo_end(m, r, 0, 1, nr, nr, 1, gen);
                m->stop = 0;
                return rc;
            }
            /* Neither it nor the frames inside it can be taken. */
            *s++ =
                (struct col_unwind_fresh){r.ip, r.sp, r.fp, 0, 0, 0, COL_R_SLOW, (uint8_t)r.exact};
            s_stop = nr + 1;
            r = next;
        }
        /* The walk may have changed stacks. */
        so = old + (m->n && m->gen == gen ? m->s_stop : 0);
        o = top;
    }
}

/* The memo of the ring's memos for a walk that starts at r. */
static inline struct col_unwind_memo *col_memo_pick(struct col_unwind_memo *memos,
                                                    const struct col_regs *r)
{
    uint64_t h = (r->ip ^ r->sp << 20) * 0x9e3779b97f4a7c15ull;

    return memos + (h >> (64 - COL_UNWIND_MEMO_BITS));
}

__attribute__((noinline)) int col_unwind_backtrace(void **buf, int max,
                                                   struct col_unwind_memo **memos)
{
#if defined(__x86_64__)
    /* Start in our caller's caller: the collector is built with frame
     * pointers, so our caller's frame starts at the rbp we saved
     * (frame[0]), its CFA is that + 16, and it saved its caller's rbp
     * there: the state its CFI step would give, without the rule lookup,
     * the memo entry and the slot check of a frame that is ours (a hook's,
     * dropped from every stack) and new on every walk whose stack changed. */
    const uint64_t *frame = __builtin_frame_address(0),
                   *caller = (const uint64_t *)(uintptr_t)frame[0];
    struct col_regs r = {caller[1], (uint64_t)(uintptr_t)(caller + 2), caller[0], 0, 0};
#else
    /* AArch64: a frame record (x29, x30) does not say where its frame
     * ends (GCC puts it below the frame's saved registers and locals), so
     * our caller's frame is stepped by its CFI from our CFA and return
     * address, outside the memo for the same reason as above; by the slow
     * step of the walk if it must be (its ip is then dropped as ours). */
    const uint64_t *frame = __builtin_frame_address(0);
    struct col_regs r = {col_cpu_ra_strip((uint64_t)(uintptr_t)__builtin_return_address(0)),
                         (uint64_t)(uintptr_t)__builtin_dwarf_cfa(), frame[0], 0, 0},
                    next = r;

    if (col_step(atomic_load_explicit(&col_rules, memory_order_acquire), NULL, &next, NULL) ==
        COL_STEP_DONE)
        r = next;
#endif
    struct col_unwind_memo *memo = memos && *memos ? col_memo_pick(*memos, &r) : NULL;
    int n = memo ? col_walk_memo(r, max, memo) : col_walk(r, buf, max);

    if (COL_UNLIKELY(col_unwind_verify)) {
        if (memo)
            col_unwind_memo_frames(memo, buf, n);
        col_unwind_check(buf, n, max);
    }
    if (memo)
        *memos = memo;
    return n;
}

int col_unwind_from_context(const void *uc, void **buf, int max)
{
    struct col_cpu_context c = col_cpu_context(uc);
    struct col_regs r = {c.ip, c.sp, c.fp, COL_UF_EXACT, c.lr};

    return col_walk(r, buf, max);
}

#endif
