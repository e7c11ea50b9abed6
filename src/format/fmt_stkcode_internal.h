/* SPDX-License-Identifier: MIT */
/* Stack node address coding (docs/format.md, "Stacks", STACK_CODES).
 *
 * A new node's return address is usually one a node under a parent with the
 * same address had before: the call sites of a function are few. So the
 * address is coded as an index into a short list of candidates, the child
 * addresses seen recently (move to front) under parents with this parent's
 * address: first those also keyed by the previous node's address (in deep
 * recursion the function that just allocated is the one that calls deeper
 * next, so this list has one entry), then those keyed by the parent's
 * address alone. Both keys include the node's limit bit (a window's leaf is
 * an allocation site, an inner node a call site). Writer and reader run
 * this same code on every node in id order: it is part of the format. */
#ifndef FMT_STKCODE_INTERNAL_H
#define FMT_STKCODE_INTERNAL_H

#include <stdint.h>

#define FMT_STKCODE_SLOTS (1u << 13) /* lists per table, direct-mapped */
#define FMT_STKCODE_WAYS 8           /* addresses per list */
#define FMT_STKCODE_MAX_CANDS (2 * FMT_STKCODE_WAYS)

/* Recent child addresses under one key, most recent first. */
struct fmt_stklist {
    uint64_t parent_addr;
    uint64_t prev_addr; /* 0 in the table keyed by the parent alone */
    uint32_t limit_bit;
    uint32_t n;
    uint64_t a[FMT_STKCODE_WAYS];
};

struct fmt_stkcode {
    struct fmt_stklist by_prev[FMT_STKCODE_SLOTS];   /* (parent addr, L, prev addr) */
    struct fmt_stklist by_parent[FMT_STKCODE_SLOTS]; /* (parent addr, L) */
};

static inline struct fmt_stklist *fmt_stkcode_list(struct fmt_stklist *t, uint64_t pa,
                                                   uint64_t prev, uint32_t l)
{
    uint64_t h = (pa ^ (prev * 0xff51afd7ed558ccdull) ^ l) * 0x9e3779b97f4a7c15ull;

    return &t[(h >> 40) & (FMT_STKCODE_SLOTS - 1)];
}

static inline int fmt_stklist_match(const struct fmt_stklist *s, uint64_t pa, uint64_t prev,
                                    uint32_t l)
{
    return s->parent_addr == pa && s->prev_addr == prev && s->limit_bit == l;
}

/* The candidates for a child of a parent at address pa, with limit bit l,
 * the node before it (id - 1) at address prev (0 for node 1): into out
 * (FMT_STKCODE_MAX_CANDS), without duplicates. Returns their number. */
static inline uint32_t fmt_stkcode_cands(struct fmt_stkcode *c, uint64_t pa, uint64_t prev,
                                         uint32_t l, uint64_t *out)
{
    const struct fmt_stklist *f = fmt_stkcode_list(c->by_prev, pa, prev, l);
    const struct fmt_stklist *p = fmt_stkcode_list(c->by_parent, pa, 0, l);
    uint32_t n = 0;

    if (fmt_stklist_match(f, pa, prev, l))
        for (uint32_t i = 0; i < f->n; i++)
            out[n++] = f->a[i];
    uint32_t nf = n;
    if (fmt_stklist_match(p, pa, 0, l)) {
        for (uint32_t i = 0; i < p->n; i++) {
            uint32_t j = 0;
            while (j < nf && out[j] != p->a[i])
                j++;
            if (j == nf)
                out[n++] = p->a[i];
        }
    }
    return n;
}

static inline void fmt_stklist_push(struct fmt_stklist *s, uint64_t pa, uint64_t prev, uint32_t l,
                                    uint64_t addr)
{
    if (!fmt_stklist_match(s, pa, prev, l)) {
        s->parent_addr = pa;
        s->prev_addr = prev;
        s->limit_bit = l;
        s->n = 0;
    }
    uint32_t i = 0;
    while (i < s->n && s->a[i] != addr)
        i++;
    if (i == s->n && s->n < FMT_STKCODE_WAYS)
        s->n++;
    if (i == FMT_STKCODE_WAYS)
        i--; /* a full list forgets its oldest */
    for (; i > 0; i--)
        s->a[i] = s->a[i - 1];
    s->a[0] = addr;
}

/* A node (not a root) was defined: it is now the most recent in both lists. */
static inline void fmt_stkcode_update(struct fmt_stkcode *c, uint64_t pa, uint64_t prev,
                                      uint32_t l, uint64_t addr)
{
    fmt_stklist_push(fmt_stkcode_list(c->by_prev, pa, prev, l), pa, prev, l, addr);
    fmt_stklist_push(fmt_stkcode_list(c->by_parent, pa, 0, l), pa, 0, l, addr);
}

#endif
