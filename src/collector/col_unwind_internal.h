/* SPDX-License-Identifier: MIT */
/* The collector's unwinder (col_unwind.c) and its check against
 * libunwind (col_unwind_verify.c). */
#ifndef COL_UNWIND_INTERNAL_H
#define COL_UNWIND_INTERNAL_H

/* Map the rule table. Returns 0, or -1. */
int col_unwind_init(void);

/* An object was unloaded: forget every cached rule. */
void col_unwind_forget(void);

#include <stddef.h>
#include <stdint.h>

#include "format/fmt_shm.h"

/* What one walk read, kept for the next walk of the same ring: each
 * frame's registers (ip, sp = the CFA of the frame inside it, fp, 0 when
 * not known) and the slots its step read, with what they held. A later
 * walk that arrives at a frame with the same ip and sp (and fp, where the
 * rest of the walk uses it: code built without frame pointers keeps data
 * in fp), and finds every slot the steps from there out read still
 * holding what it held (the fp slots only where the value is used), would
 * read and compute the same values from there on: it takes the old frames
 * instead of stepping.
 *
 * The walk's frames are in two parts. The outer part, the frames it took
 * from the walk before (and the entry where the stack ended), is f[],
 * outermost first, so that the frames a walk takes stay where they are;
 * the slots their steps read are one tight array, chk[]. The inner part,
 * the frames it stepped itself, stays as the walk wrote them, innermost
 * first, in s[]; a later walk moves into f[] only those it takes (on
 * sqlite fewer than one a walk, of five and a half). */
struct col_unwind_frame {
    uint64_t ip, sp, fp;
    /* The program's frames from this one out, as a node of col_stack.c's
     * tree (COL_NODE_ID bits) with their number above (COL_NODE_DEPTH);
     * 0: not known. Only a walk that reached the stack's end gives nodes:
     * a walk that takes its outer frames takes their nodes. */
    uint32_t node;
    uint16_t nchk; /* chk[0..nchk): the slots the steps from this frame out read */
    uint8_t flags; /* COL_UF_* */
    uint8_t pad;
};
_Static_assert(sizeof(struct col_unwind_frame) == 32, "col_unwind_frame");
#define COL_UF_EXACT 0x02 /* ip is an interrupted instruction */
#define COL_UF_STEPPED                                                                             \
    0x04                    /* this frame's step read its slots: the next entry out is the result  \
                             */
#define COL_UF_CFA_FP 0x08  /* and its CFA was fp + offset */
#define COL_UF_FP_SLOT 0x10 /* and read fp at CFA + 8 * fp_off8 */
#define COL_UF_NEED_FP 0x20 /* the walk from this entry on depends on its fp (f[] only) */
#define COL_UF_CUT 0x40     /* the last entry only: the walk stopped at its maximum here */

/* A slot a step read, and the value it held. */
struct col_unwind_check {
    const uint64_t *at;
    uint64_t val;
};

/* A frame a walk stepped itself, and the offsets of the rule its step
 * followed: the slots it read are found from the sp of the next frame out,
 * its CFA, and held what that frame holds (its ip, and its fp where the
 * rule restored it). The last 8 bytes are the rule's word (col_step). */
struct col_unwind_fresh {
    uint64_t ip, sp, fp;
    uint32_t node; /* as col_unwind_frame's */
    int8_t fp_off8, ra_off8;
    uint8_t rule;  /* the rule's flags (COL_R_SLOW: a slow step, which read other slots) */
    uint8_t exact; /* COL_UF_EXACT or 0 */
};
_Static_assert(sizeof(struct col_unwind_fresh) == 32, "col_unwind_fresh");

struct col_unwind_memo {
    uint32_t n;      /* entries in f[1..], 0: no walk (or one of another rule table) */
    uint32_t base;   /* 1 if f[1] is the state after the last step, not a frame */
    uint32_t stop;   /* f[1 + stop..] cannot be taken (0: a slow step ended the walk) */
    uint32_t nr_s;   /* the walk's own frames, s[0..nr_s) */
    uint32_t s_stop; /* s[0..s_stop) cannot be taken (a slow step and the frames inside it) */
    uint32_t gen;    /* the rule table's generation */
    uint32_t max;    /* the longest walk it has room for */
    uint32_t pad;
    /* The walk's own frames, and where the next walk writes its own (the
     * two swapped at each walk), max + 1 entries each with a sentinel. */
    struct col_unwind_fresh *s, *s_next;
    /* f[1..n], max + 2 entries; f[0] is a sentinel: an sp above every
     * stack's, where the search for a frame by its sp stops (set by the
     * memo's first walk: each memo's arrays are pages of their own, which
     * a process that walks little never touches). */
    struct col_unwind_frame *f;
    struct col_unwind_check *chk; /* 2 * (max + 1) */
    /* The thread's own small cache of rules, with the generation of the
     * table they are from (col_unwind.c), one for all the ring's
     * memos, in front of the process-wide table: that one spreads the
     * rules a loop steps through over a MiB, a cache line each, and perf
     * put 45 % of the walk's samples on sqlite at its first probe, a load
     * on the critical path of every step. COL_RULE_NEAR_BYTES, zeroed. */
    void *near;
};

/* 512 entries of 16 bytes (8 KiB, a quarter of L1) behind a line that
 * holds the rule table's generation they are rules of. */
#define COL_RULE_NEAR_BITS 9
#define COL_RULE_NEAR_BYTES (64 + ((size_t)16 << COL_RULE_NEAR_BITS))

/* A ring keeps this many memos, each the last walk that started at its
 * place (the hook's caller's ip and sp, hashed): a program's allocations
 * come from a few dozen stacks in turn (sqlite3 inserting rows, python3's
 * JSON round trip: 96 % and 99 % of stacks were one of the last 32 and 16
 * a thread used), and a walk that starts where its memo's did mostly finds
 * its whole stack there, checked slot by slot, without a step. Of 16, 32
 * and 64, 32 was the fastest on python3 and second on sqlite3, by less
 * than the noise (bench/rec_tail.sh side by side). ~9 KiB each at the
 * default depth. */
#define COL_UNWIND_MEMO_BITS 5
#define COL_UNWIND_MEMOS (1 << COL_UNWIND_MEMO_BITS)

/* The bytes of the arrays of one memo for walks of max frames. */
static inline size_t col_unwind_memo_bytes(uint32_t max)
{
    return 2 * (max + 1) * sizeof(struct col_unwind_fresh) +
           (max + 2) * sizeof(struct col_unwind_frame) +
           2 * (max + 1) * sizeof(struct col_unwind_check);
}

/* The bytes of the arrays of a ring's memos: their near cache, then each
 * one's. */
static inline size_t col_unwind_memos_bytes(uint32_t max)
{
    return COL_RULE_NEAR_BYTES + COL_UNWIND_MEMOS * col_unwind_memo_bytes(max);
}

/* Set up a ring's COL_UNWIND_MEMOS memos m[] for walks of max frames,
 * their arrays at mem (col_unwind_memos_bytes(max) bytes, zeroed). */
static inline void col_unwind_memos_init(struct col_unwind_memo *m, void *mem, uint32_t max)
{
    unsigned char *near = mem, *p = near + COL_RULE_NEAR_BYTES;

    for (int i = 0; i < COL_UNWIND_MEMOS; i++, m++) {
        m->max = max;
        m->near = near;
        m->s = (struct col_unwind_fresh *)(void *)p;
        m->s_next = m->s + max + 1;
        p += 2 * (max + 1) * sizeof(struct col_unwind_fresh);
        m->f = (struct col_unwind_frame *)(void *)p;
        p += (max + 2) * sizeof(struct col_unwind_frame);
        m->chk = (struct col_unwind_check *)(void *)p;
        p += 2 * (max + 1) * sizeof(struct col_unwind_check);
    }
}

/* The frames of a memo's walk: its own, then the ones it took. */
static inline uint32_t col_unwind_memo_nr(const struct col_unwind_memo *m)
{
    return m->nr_s + m->n - m->base;
}

/* The return addresses of the frames outside the caller, innermost first
 * (the caller's return address first: the caller, a function of the
 * collector, must keep a frame pointer, as all of them do), at most max (<= FMT_SHM_MAX_DEPTH + 4).
 * Never allocates, opens nothing, makes no syscall once a frame's rule is cached. *memo (or NULL)
 * is the ring's COL_UNWIND_MEMOS memos; the walk uses the one of the place it starts at and leaves
 * *memo pointing to it, with the frames in it (col_unwind_memo_frames): buf is written only under
 * MEMSCRIBE_UNWIND=verify. */
int col_unwind_backtrace(void **buf, int max, struct col_unwind_memo **memo);

/* The n frames of the memo's walk into buf, innermost first. */
static inline void col_unwind_memo_frames(const struct col_unwind_memo *m, void **buf, int n)
{
    const struct col_unwind_fresh *s = m->s;
    const struct col_unwind_frame *f = m->f + m->n;
    int i = 0;

    for (; i < n && i < (int)m->nr_s; i++)
        buf[i] = (void *)(uintptr_t)s[i].ip;
    for (; i < n; i++, f--)
        buf[i] = (void *)(uintptr_t)f->ip;
}

/* The same from a signal context: the interrupted ip first. */
int col_unwind_from_context(const void *uc, void **buf, int max);

/* MEMSCRIBE_UNWIND=verify: every walk is checked against libunwind's
 * unw_backtrace from the same place; a difference prints both stacks and
 * aborts. */
extern int col_unwind_verify;
/* Load libunwind for verify, or abort saying why (col_unwind_verify.c). */
void col_unwind_verify_init(void);
void col_unwind_check(void *const *buf, int n, int max);
/* Return if a[0..ka) and b[0..kb) are the same frames; else print why and
 * both (named what_a, what_b) and abort. */
void col_unwind_check_same(const char *why, const char *what_a, const uint64_t *a, int ka,
                           const char *what_b, const uint64_t *b, int kb);

#endif
