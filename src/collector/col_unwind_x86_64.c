/* SPDX-License-Identifier: MIT */
/* Call stacks on x86-64 from the program's own .eh_frame, with a rule per
 * return address cached process-wide: no descriptor, no syscall on the way
 * (glibc's _dl_find_object, through libgcc's _Unwind_Find_FDE, finds the
 * FDE), and a step costs a table probe and one or two loads.
 *
 * Why not libunwind: its memory validation keeps a pipe on two of the
 * program's descriptors (3 and 4 when it starts), reads and writes them on
 * later unwinds even after the program closed and reused those numbers,
 * and calls mincore and rt_sigprocmask, which seccomp sandboxes forbid.
 * libunwind stays the reference of MEMSCRIBE_UNWIND=verify only.
 *
 * A frame's rule (DWARF CFI, the row for its address) is kept in its
 * short form when it has the shapes compilers emit: CFA = rsp or rbp plus
 * an offset, the return address and rbp saved at offsets from the CFA.
 * Anything else (signal trampolines, realigned stacks' CFA expressions) is
 * interpreted again at each step, which is exact but slower. */
#if defined(__x86_64__) && !defined(COL_UNWIND_LIBGCC)

#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "collector/col_internal.h"
#include "collector/col_unwind_internal.h"

/* libgcc's lookup (unwind-dw2-fde.h): the FDE covering pc, and the
 * function's start in bases->func. */
struct col_eh_bases {
    void *tbase, *dbase, *func;
};
extern const void *_Unwind_Find_FDE(void *pc, struct col_eh_bases *bases);

/* DWARF register numbers on x86-64 (psABI figure 3.36). */
#define COL_DW_RBP 6
#define COL_DW_RSP 7
#define COL_DW_RA 16

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
    struct col_reg_rule rbp, rsp, ra;
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
    uint64_t ip, sp, rbp;
    int rbp_ok;
    int exact; /* ip is the interrupted instruction, not a return address */
};

static uint64_t col_uleb(const uint8_t **pp, const uint8_t *end)
{
    const uint8_t *p = *pp;
    uint64_t v = 0;
    unsigned shift = 0;

    while (p < end) {
        uint8_t b = *p++;

        if (shift < 64)
            v |= (uint64_t)(b & 0x7f) << shift;
        shift += 7;
        if (!(b & 0x80))
            break;
    }
    *pp = p;
    return v;
}

static int64_t col_sleb(const uint8_t **pp, const uint8_t *end)
{
    const uint8_t *p = *pp;
    uint64_t v = 0;
    unsigned shift = 0;
    uint8_t b = 0;

    while (p < end) {
        b = *p++;
        if (shift < 64)
            v |= (uint64_t)(b & 0x7f) << shift;
        shift += 7;
        if (!(b & 0x80))
            break;
    }
    if (shift < 64 && (b & 0x40))
        v |= ~0ull << shift;
    *pp = p;
    return (int64_t)v;
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
    return reg == COL_DW_RBP   ? &r->rbp
           : reg == COL_DW_RSP ? &r->rsp
           : reg == COL_DW_RA  ? &r->ra
                               : NULL;
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
            rr = col_row_reg(row, low);
            if (rr && init)
                *rr = *col_row_reg((struct col_row *)init, low);
            else if (rr)
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
            reg = col_uleb(&p, end);
            rr = col_row_reg(row, reg);
            if (rr && !init)
                return -1;
            if (rr)
                *rr = *col_row_reg((struct col_row *)init, reg);
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
    row->cfa_reg = COL_DW_RSP;
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

            if (reg == COL_DW_RSP)
                st[n++] = r->sp + (uint64_t)off;
            else if (reg == COL_DW_RBP && r->rbp_ok)
                st[n++] = r->rbp + (uint64_t)off;
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

/* The cached short form of a row. */
#define COL_R_VALID 0x01
#define COL_R_CFA_RBP 0x02   /* CFA = rbp + cfa_off, else rsp + cfa_off */
#define COL_R_RBP_SAVED 0x04 /* rbp restored from CFA + rbp_off */
#define COL_R_RBP_LOST 0x08  /* rbp undefined in the caller */
#define COL_R_END 0x10       /* return address undefined: the outermost frame */
#define COL_R_SIGNAL 0x20    /* a signal trampoline: the caller's ip is exact */
#define COL_R_SLOW 0x40      /* interpret the CFI at each step */
#define COL_R_NOINFO 0x80    /* no FDE, or CFI we do not read: the walk ends */

struct col_rule {
    int32_t cfa_off;
    int16_t rbp_off;
    int8_t ra_off8; /* return address at CFA + 8 * ra_off8 */
    uint8_t flags;
};

static struct col_rule col_rule_make(uint64_t pc)
{
    struct col_rule r = {0, 0, 0, COL_R_VALID};
    struct col_row row;
    uint8_t signal = 0;

    if (col_cfi_row(pc, &row, &signal) != 0) {
        r.flags |= COL_R_NOINFO;
        return r;
    }
    if (signal)
        r.flags |= COL_R_SIGNAL;
    if ((row.cfa_reg != COL_DW_RSP && row.cfa_reg != COL_DW_RBP) ||
        row.cfa_off != (int32_t)row.cfa_off || row.rsp.how != COL_HOW_SAME ||
        (row.ra.how != COL_HOW_UNDEF && (row.ra.how != COL_HOW_OFFSET || row.ra.off % 8 ||
                                         row.ra.off / 8 != (int8_t)(row.ra.off / 8))) ||
        (row.rbp.how != COL_HOW_SAME && row.rbp.how != COL_HOW_UNDEF &&
         (row.rbp.how != COL_HOW_OFFSET || row.rbp.off != (int16_t)row.rbp.off))) {
        r.flags |= COL_R_SLOW;
        return r;
    }
    r.cfa_off = (int32_t)row.cfa_off;
    if (row.cfa_reg == COL_DW_RBP)
        r.flags |= COL_R_CFA_RBP;
    if (row.ra.how == COL_HOW_UNDEF)
        r.flags |= COL_R_END;
    else
        r.ra_off8 = (int8_t)(row.ra.off / 8);
    if (row.rbp.how == COL_HOW_OFFSET) {
        r.flags |= COL_R_RBP_SAVED;
        r.rbp_off = (int16_t)row.rbp.off;
    } else if (row.rbp.how == COL_HOW_UNDEF) {
        r.flags |= COL_R_RBP_LOST;
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
    uint64_t cfa, ra, sp, rbp = r->rbp;

    if (col_cfi_row(pc, &row, &signal) != 0)
        return -1;
    if (row.cfa_reg == 0xff) {
        if (col_expr_eval(row.cfa_expr, r, &cfa) != 0)
            return -1;
    } else if (row.cfa_reg == COL_DW_RSP) {
        cfa = r->sp + (uint64_t)row.cfa_off;
    } else if (row.cfa_reg == COL_DW_RBP && r->rbp_ok) {
        cfa = r->rbp + (uint64_t)row.cfa_off;
    } else {
        return -1;
    }
    if (row.ra.how == COL_HOW_UNDEF)
        return 0;
    if (col_reg_recover(&row.ra, cfa, r, r->ip, &ra) != 0)
        return -1;
    sp = cfa;
    if (row.rsp.how != COL_HOW_SAME && col_reg_recover(&row.rsp, cfa, r, r->sp, &sp) != 0)
        return -1;
    if (row.rbp.how == COL_HOW_UNDEF)
        r->rbp_ok = 0;
    else if (col_reg_recover(&row.rbp, cfa, r, r->rbp, &rbp) != 0)
        return -1;
    else if (row.rbp.how != COL_HOW_SAME)
        r->rbp_ok = 1; /* restored: known again */
    r->rbp = rbp;
    r->sp = sp;
    r->ip = ra;
    r->exact = signal;
    return 1;
}

/* The process-wide rule table: open addressing, insert-only, key = pc
 * (top bit set for an exact pc) with its rule published after it. A full
 * table only means rules are made again. */
#define COL_RULE_SLOTS (1u << 16)
#define COL_RULE_PROBES 16
#define COL_RULE_BUSY 1ull

struct col_rule_slot {
    _Atomic uint64_t key;
    struct col_rule rule;
};

#define COL_RULE_BYTES ((size_t)COL_RULE_SLOTS * sizeof(struct col_rule_slot))

static struct col_rule_slot *_Atomic col_rules;
static _Atomic uint32_t col_rules_gen = 1; /* walks' memos hold for one generation */

static __attribute__((noinline)) struct col_rule
col_rule_probe(struct col_rule_slot *tab, uint64_t key, uint64_t pc, uint32_t i)
{
    for (int probe = 0; tab && probe < COL_RULE_PROBES; probe++) {
        struct col_rule_slot *s = &tab[(i + (uint32_t)probe) & (COL_RULE_SLOTS - 1)];
        uint64_t k = atomic_load_explicit(&s->key, memory_order_acquire);

        if (k == key)
            return s->rule;
        if (k == 0) {
            struct col_rule r = col_rule_make(pc);
            uint64_t expect = 0;

            if (atomic_compare_exchange_strong(&s->key, &expect, COL_RULE_BUSY)) {
                s->rule = r;
                atomic_store_explicit(&s->key, key, memory_order_release);
            }
            return r;
        }
    }
    return col_rule_make(pc);
}

/* The rule of pc (key: pc, top bit set when exact), from tab: the first
 * probe inline, the rest out of line. */
static inline struct col_rule col_rule_get(struct col_rule_slot *tab, uint64_t key, uint64_t pc)
{
    uint32_t i = (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 48);

    if (tab) {
        struct col_rule_slot *s = &tab[i & (COL_RULE_SLOTS - 1)];

        if (atomic_load_explicit(&s->key, memory_order_acquire) == key)
            return s->rule;
    }
    return col_rule_probe(tab, key, pc, i);
}

int col_unwind_init(void)
{
    struct col_rule_slot *tab = col_sys_mmap(COL_RULE_BYTES);

    if (!tab)
        return -1;
    atomic_store(&col_rules, tab);
    return 0;
}

void col_unwind_forget(void)
{
    /* An object was unloaded: its addresses may come back as another's.
     * Readers may still hold the old table, so it stays mapped. */
    struct col_rule_slot *tab = col_sys_mmap(COL_RULE_BYTES);

    if (tab)
        atomic_store(&col_rules, tab);
    atomic_fetch_add(&col_rules_gen, 1); /* and memos of walks are void */
}

/* rbp_ok and exact are 0 or 1: their entry flags are the same bits. */
_Static_assert(COL_UF_RBP_OK == 1 && COL_UF_EXACT == 2, "COL_UF_RBP_OK, COL_UF_EXACT");
static inline uint8_t col_regs_flags(const struct col_regs *r)
{
    return (uint8_t)(r->rbp_ok | r->exact << 1);
}

/* A rule's CFA and rbp bits, moved to the entry's. */
_Static_assert(COL_R_CFA_RBP << 2 == COL_UF_CFA_RBP && COL_R_RBP_SAVED << 2 == COL_UF_RBP_SLOT,
               "COL_R_CFA_RBP, COL_R_RBP_SAVED");
#define COL_RULE_ENTRY_FLAGS(rf) ((uint8_t)(((rf) & (COL_R_CFA_RBP | COL_R_RBP_SAVED)) << 2))

/* An entry whose step was not taken, or not recorded. */
static inline void col_memo_last(struct col_unwind_frame *e, const struct col_regs *r)
{
    *e = (struct col_unwind_frame){r->ip, r->sp, r->rbp, 0, 0, col_regs_flags(r), 0};
}

/* Do the slots old[j..n) read still hold what they held? Entry k's step
 * read the return address (and rbp) that entry k + 1 holds. Every entry
 * from the memo's `from` on but the last was stepped (a slow step moves
 * `from` past itself). */
static int col_memo_valid(const struct col_unwind_frame *old, uint32_t j, uint32_t n)
{
    /* By pointer, the next entry's loads shared: ~16 -> ~10 instructions a
     * frame, and this runs for every frame a walk takes. */
    for (const struct col_unwind_frame *e = old + j, *last = old + n - 1; e < last; e++) {
        const uint64_t *cfa = (const uint64_t *)(uintptr_t)e[1].sp;

        if (cfa[e->ra_off8] != e[1].ip)
            return 0;
        if (COL_UNLIKELY(e->flags & COL_UF_CHECK_RBP) &&
            *(const uint64_t *)(uintptr_t)(e[1].sp + (uint64_t)(int64_t)e->rbp_off) != e[1].rbp)
            return 0;
    }
    return 1;
}

/* Mark, from entry hi - 1 down to lo, which entries' rbp the rest of the
 * walk depends on, given whether entry hi's does (need). */
static inline __attribute__((always_inline)) void col_memo_needs(struct col_unwind_frame *f,
                                                                 uint32_t lo, uint32_t hi, int need)
{
    for (uint32_t k = hi; k-- > lo;) {
        uint8_t fl = f[k].flags & (uint8_t) ~(COL_UF_NEED_RBP | COL_UF_CHECK_RBP);

        if (!(fl & COL_UF_STEPPED) || (fl & COL_UF_CFA_RBP)) {
            need = 1; /* a slow step or the end: taken as depending on it */
        } else if (fl & COL_UF_RBP_SLOT) {
            if (need)
                fl |= COL_UF_CHECK_RBP;
            need = 0;
        }
        f[k].flags = (uint8_t)(fl | (need ? COL_UF_NEED_RBP : 0));
    }
}

/* Walk from r, writing frames' ips to buf; with m, reuse the outer part
 * of the last walk where it provably has not changed, and keep this walk
 * for the next: the frames are then the memo's, and buf is left alone. */
static int col_walk(struct col_regs r, void **buf, int max, struct col_unwind_memo *m)
{
    struct col_unwind_frame *old = NULL, *f = NULL;
    uint32_t old_n = 0, old_frames = 0, j = 0, from = 0, reused_at = 0, reused_end = 0;
    uint32_t gen = atomic_load_explicit(&col_rules_gen, memory_order_relaxed);
    struct col_rule_slot *tab = atomic_load_explicit(&col_rules, memory_order_acquire);
    int n = 0, stepped = 0, in_place = 0;

    if (m) {
        if (m->n && m->gen == gen) {
            old = m->f[m->cur];
            old_n = m->n;
            old_frames = m->nr_frames;
            j = m->from;
        }
        f = m->f[m->cur ^ 1];
    }
    while (n < max && r.ip) {
        uint64_t pc, cfa, ra;
        struct col_rule rule;

        if (old) {
            while (j < old_frames && old[j].sp < r.sp)
                j++;
            if (j < old_frames && old[j].sp == r.sp && old[j].ip == r.ip &&
                (old[j].flags & COL_UF_EXACT) == (r.exact ? COL_UF_EXACT : 0) &&
                (!(old[j].flags & COL_UF_NEED_RBP) ||
                 ((old[j].flags & COL_UF_RBP_OK) == (r.rbp_ok ? COL_UF_RBP_OK : 0) &&
                  (!r.rbp_ok || old[j].rbp == r.rbp))) &&
                col_memo_valid(old, j, old_n)) {
                uint32_t take = old_frames - j;

                if (take > (uint32_t)(max - n))
                    take = (uint32_t)(max - n);
                reused_at = (uint32_t)n;
                if ((uint32_t)n == j) {
                    /* Same depth: the old record becomes the new one, with
                     * the fresh frames in front (none when the whole stack
                     * was the same). */
                    for (uint32_t k = 0; k < j; k++)
                        old[k] = f[k];
                    f = old;
                    in_place = 1;
                } else {
                    memcpy(&f[n], &old[j], take * sizeof(*f));
                }
                /* The copy keeps the rbp the old walk had where nothing
                 * depends on it: the fresh frames below must match it. */
                if (!(old[j].flags & COL_UF_NEED_RBP)) {
                    f[n].rbp = r.rbp;
                    f[n].flags =
                        (uint8_t)((f[n].flags & ~COL_UF_RBP_OK) | (r.rbp_ok ? COL_UF_RBP_OK : 0));
                }
                n += (int)take;
                j += take;
                reused_end = (uint32_t)n;
                if (j < old_n) {
                    /* The state after the old walk's last step: the end, or
                     * where it stopped at its maximum. */
                    const struct col_unwind_frame *e = &old[j];

                    f[n] = *e;
                    r.ip = e->ip;
                    r.sp = e->sp;
                    r.rbp = e->rbp;
                    r.rbp_ok = (e->flags & COL_UF_RBP_OK) != 0;
                    r.exact = (e->flags & COL_UF_EXACT) != 0;
                    stepped = 1;
                    old = NULL;
                    continue;
                }
                stepped = 0;
                break; /* the old walk ended there */
            }
        }
        pc = r.exact ? r.ip : r.ip - 1;
        rule = col_rule_get(tab, pc | ((uint64_t)r.exact << 63), pc);
        if (!f)
            buf[n] = (void *)(uintptr_t)r.ip;
        n++;
        stepped = 0;
        if (rule.flags & (COL_R_END | COL_R_NOINFO | COL_R_SLOW)) {
            if (f) {
                col_memo_last(&f[n - 1], &r);
                from = (rule.flags & COL_R_SLOW) ? (uint32_t)n : from;
            }
            if (!(rule.flags & COL_R_SLOW) || col_step_slow(&r, pc) <= 0)
                break;
            if (old)
                j = m->from; /* the walk may have changed stacks */
            continue;
        }
        cfa = ((rule.flags & COL_R_CFA_RBP) ? r.rbp : r.sp) + (uint64_t)(int64_t)rule.cfa_off;
        if (((rule.flags & COL_R_CFA_RBP) && !r.rbp_ok) || cfa <= r.sp || (cfa & 7)) {
            if (f)
                col_memo_last(&f[n - 1], &r);
            break;
        }
        ra = *(const uint64_t *)(uintptr_t)(cfa + (uint64_t)(int64_t)rule.ra_off8 * 8);
        if (f)
            f[n - 1] = (struct col_unwind_frame){
                r.ip,
                r.sp,
                r.rbp,
                rule.rbp_off,
                rule.ra_off8,
                (uint8_t)(col_regs_flags(&r) | COL_UF_STEPPED | COL_RULE_ENTRY_FLAGS(rule.flags)),
                0};
        if (rule.flags & COL_R_RBP_SAVED) {
            r.rbp = *(const uint64_t *)(uintptr_t)(cfa + (uint64_t)(int64_t)rule.rbp_off);
            r.rbp_ok = 1;
        } else if (rule.flags & COL_R_RBP_LOST)
            r.rbp_ok = 0;
        r.sp = cfa;
        r.ip = ra;
        r.exact = (rule.flags & COL_R_SIGNAL) != 0;
        stepped = 1;
    }
    if (m) {
        uint32_t count = (uint32_t)n + (stepped ? 1u : 0u);

        /* After a step, the state it reached closes the record: the end
         * (ip 0) or the frame past the maximum, which a later walk may
         * continue from. */
        if (stepped)
            col_memo_last(&f[n], &r);
        if (reused_end) {
            /* Copied entries keep their marks (what follows them is the
             * old walk's end, or a continuation taken as needing rbp). */
            col_memo_needs(f, reused_end, count, stepped && r.ip);
            col_memo_needs(f, 0, reused_at, (f[reused_at].flags & COL_UF_NEED_RBP) != 0);
        } else {
            col_memo_needs(f, 0, count, 1);
        }
        m->nr_frames = (uint32_t)n;
        m->fresh = reused_end ? reused_at : (uint32_t)n;
        m->n = count;
        m->from = from;
        m->gen = gen;
        m->cur ^= (uint32_t)!in_place;
    }
    return n;
}

__attribute__((noinline)) int col_unwind_backtrace(void **buf, int max,
                                                   struct col_unwind_memo *memo)
{
    /* Start in our caller's caller: the collector is built with frame
     * pointers, so our caller's frame starts at the rbp we saved (fp[0]),
     * its CFA is that + 16, and it saved its caller's rbp there: the state
     * its CFI step would give, without the rule lookup, the memo entry and
     * the slot check of a frame that is ours (a hook's, dropped from every
     * stack) and new on every walk whose stack changed. */
    const uint64_t *fp = __builtin_frame_address(0), *caller = (const uint64_t *)(uintptr_t)fp[0];
    struct col_regs r = {caller[1], (uint64_t)(uintptr_t)(caller + 2), caller[0], 1, 0};
    int n = col_walk(r, buf, max, memo);

    if (COL_UNLIKELY(col_unwind_verify)) {
        if (memo)
            col_unwind_memo_frames(memo, buf, n);
        col_unwind_check(buf, n, max);
    }
    return n;
}

int col_unwind_from_context(const void *uc, void **buf, int max)
{
    const ucontext_t *u = uc;
    struct col_regs r = {(uint64_t)u->uc_mcontext.gregs[REG_RIP],
                         (uint64_t)u->uc_mcontext.gregs[REG_RSP],
                         (uint64_t)u->uc_mcontext.gregs[REG_RBP], 1, 1};

    return col_walk(r, buf, max, NULL);
}

#endif
