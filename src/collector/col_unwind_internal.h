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

/* What one walk read, kept for the next walk of the same ring: each
 * frame's registers (ip, sp = the CFA of the frame inside it, rbp) and
 * where its step read the caller's return address and rbp. A later walk
 * that arrives at a frame with the same ip and sp (and rbp, where the rest
 * of the walk uses it: code built without frame pointers keeps data in
 * rbp), and finds every slot the rest of the old walk read still holding
 * what it held (the rbp slots only where the value is used), would read
 * and compute the same values from there on: it takes the old frames
 * instead of stepping. */
struct col_unwind_frame {
    uint64_t ip, sp, rbp;
    int16_t rbp_off; /* rbp read at CFA + rbp_off, when COL_UF_RBP_SLOT */
    int8_t ra_off8;  /* the return address read at CFA + 8 * ra_off8 */
    uint8_t flags;   /* COL_UF_* */
    /* The program's frames from this one out, as a node of col_stack.c's
     * tree (COL_NODE_ID bits) with their number above (COL_NODE_DEPTH);
     * 0: not known. Only the memo of a walk that reached the stack's end
     * holds nodes: a walk that takes its outer frames takes their nodes. */
    uint32_t node;
};
#define COL_UF_RBP_OK 0x01    /* rbp known in this frame */
#define COL_UF_EXACT 0x02     /* ip is an interrupted instruction */
#define COL_UF_STEPPED 0x04   /* this frame's step read its slots: the next entry is the result */
#define COL_UF_CFA_RBP 0x08   /* and its CFA was rbp + offset */
#define COL_UF_RBP_SLOT 0x10  /* and read rbp at CFA + rbp_off */
#define COL_UF_NEED_RBP 0x20  /* the walk from this entry on depends on its rbp */
#define COL_UF_CHECK_RBP 0x40 /* the rbp slot must hold the next entry's rbp */

#define COL_UNWIND_MEMO_FRAMES (FMT_SHM_MAX_DEPTH + 5)

struct col_unwind_memo {
    uint32_t n;         /* entries in f, 0: none */
    uint32_t nr_frames; /* of them frames (one more: the state after the last step) */
    uint32_t from;      /* entries before this one cannot be taken (a slow step) */
    uint32_t gen;       /* the rule table's generation */
    uint32_t cur;       /* which of the two arrays is the last walk's */
    uint32_t fresh;     /* its frames before the ones it took from the walk before */
    struct col_unwind_frame f[2][COL_UNWIND_MEMO_FRAMES];
};

/* The return addresses of the frames outside the caller, innermost first
 * (the caller's return address first: the caller, a function of the
 * collector, must keep a frame pointer, as all of them do), at most max (<= FMT_SHM_MAX_DEPTH + 4).
 * Never allocates, opens nothing, makes no syscall once a frame's rule is cached. memo (or NULL)
 * holds the ring's last walk; with a memo the frames are left in it (col_unwind_memo_frames) and
 * buf is written only under MEMSCRIBE_UNWIND=verify. */
int col_unwind_backtrace(void **buf, int max, struct col_unwind_memo *memo);

/* The n frames of the memo's walk into buf. */
static inline void col_unwind_memo_frames(const struct col_unwind_memo *m, void **buf, int n)
{
    const struct col_unwind_frame *f = m->f[m->cur];

    for (int i = 0; i < n; i++)
        buf[i] = (void *)(uintptr_t)f[i].ip;
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
