/* SPDX-License-Identifier: MIT */
/* The collector's unwinder (col_unwind_x86_64.c) and its check against
 * libunwind (col_unwind_verify.c). */
#ifndef COL_UNWIND_INTERNAL_H
#define COL_UNWIND_INTERNAL_H

/* Map the rule table. Returns 0, or -1. */
int col_unwind_init(void);

/* An object was unloaded: forget every cached rule. */
void col_unwind_forget(void);

#include <stdint.h>

#include "format/fmt_shm.h"

/* What one walk read, kept for the next walk of the same ring, outermost
 * entry first (f[1] the last entry, f[n] the innermost frame): each
 * frame's registers (ip, sp = the CFA of the frame inside it, rbp, 0 when
 * not known), and in
 * chk the slots the steps read, with what they held. A later walk that
 * arrives at a frame with the same ip and sp (and rbp, where the rest of
 * the walk uses it: code built without frame pointers keeps data in rbp),
 * and finds every slot the steps from there out read still holding what
 * it held (the rbp slots only where the value is used), would read and
 * compute the same values from there on: it takes the old frames instead
 * of stepping. Outermost first, the frames it takes stay where they are
 * and only its new inner frames are written; the slots to check for a
 * frame are chk[0..nchk), one tight array. */
struct col_unwind_frame {
    uint64_t ip, sp, rbp;
    /* The program's frames from this one out, as a node of col_stack.c's
     * tree (COL_NODE_ID bits) with their number above (COL_NODE_DEPTH);
     * 0: not known. Only the memo of a walk that reached the stack's end
     * holds nodes: a walk that takes its outer frames takes their nodes. */
    uint32_t node;
    uint16_t nchk; /* chk[0..nchk): the slots the steps from this frame out read */
    uint8_t flags; /* COL_UF_* */
    uint8_t pad;
};
_Static_assert(sizeof(struct col_unwind_frame) == 32, "col_unwind_frame");
#define COL_UF_EXACT 0x02    /* ip is an interrupted instruction */
#define COL_UF_STEPPED 0x04  /* this frame's step read its slots: the next entry out is the result \
                              */
#define COL_UF_CFA_RBP 0x08  /* and its CFA was rbp + offset */
#define COL_UF_RBP_SLOT 0x10 /* and read rbp at CFA + 8 * rbp_off8 */
#define COL_UF_NEED_RBP 0x20 /* the walk from this entry on depends on its rbp */
#define COL_UF_CUT 0x40      /* the last entry only: the walk stopped at its maximum here */

/* A slot a step read, and the value it held. */
struct col_unwind_check {
    const uint64_t *at;
    uint64_t val;
};

/* A frame of the walk in progress (innermost first) and the slots its
 * step read, with what they held (rbp's when COL_UF_RBP_SLOT). */
struct col_unwind_fresh {
    uint64_t ip, sp, rbp;
    uint64_t flags; /* COL_UF_* but COL_UF_NEED_RBP and COL_UF_CUT */
    struct col_unwind_check ra, rbp_slot;
};

#define COL_UNWIND_MEMO_FRAMES (FMT_SHM_MAX_DEPTH + 5)

struct col_unwind_memo {
    uint32_t n;         /* entries in f, 0: none */
    uint32_t nr_frames; /* of them frames: n, or n - 1 when the last entry is the state after the
                           last step */
    uint32_t stop;      /* entries from this one in cannot be taken (a slow step) */
    uint32_t gen;       /* the rule table's generation */
    uint32_t fresh; /* the first entry the last walk stepped itself (the ones before it it took) */
    /* The entries from f[1] on; f[0] is a sentinel: an sp above every
     * stack's, where the search for a frame by its sp stops. */
    struct col_unwind_frame f[1 + COL_UNWIND_MEMO_FRAMES];
    struct col_unwind_fresh s[COL_UNWIND_MEMO_FRAMES];
    struct col_unwind_check chk[2 * COL_UNWIND_MEMO_FRAMES];
};

/* The return addresses of the frames outside the caller, innermost first
 * (the caller's return address first: the caller, a function of the
 * collector, must keep a frame pointer, as all of them do), at most max (<= FMT_SHM_MAX_DEPTH + 4).
 * Never allocates, opens nothing, makes no syscall once a frame's rule is cached. memo (or NULL)
 * holds the ring's last walk; with a memo the frames are left in it (col_unwind_memo_frames) and
 * buf is written only under MEMSCRIBE_UNWIND=verify. */
int col_unwind_backtrace(void **buf, int max, struct col_unwind_memo *memo);

/* The n frames of the memo's walk into buf, innermost first. */
static inline void col_unwind_memo_frames(const struct col_unwind_memo *m, void **buf, int n)
{
    const struct col_unwind_frame *f = m->f + m->n;

    for (int i = 0; i < n; i++)
        buf[i] = (void *)(uintptr_t)f[-i].ip;
}

/* The same from a signal context: the interrupted ip first. */
int col_unwind_from_context(const void *uc, void **buf, int max);

/* MEMSCRIBE_UNWIND=verify: every walk is checked against libunwind's
 * unw_backtrace from the same place; a difference prints both stacks and
 * aborts. */
extern int col_unwind_verify;
void col_unwind_check(void *const *buf, int n, int max);
/* Return if a[0..ka) and b[0..kb) are the same frames; else print why and
 * both (named what_a, what_b) and abort. */
void col_unwind_check_same(const char *why, const char *what_a, const uint64_t *a, int ka,
                           const char *what_b, const uint64_t *b, int kb);

#endif
