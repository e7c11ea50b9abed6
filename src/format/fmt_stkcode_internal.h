/* SPDX-License-Identifier: MIT */
/* Stack node address coding (docs/format-encoding.md, "Stacks", STACK_CODES).
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

#define FMT_STKCODE_SETS (1u << 11) /* sets of lists per table */
#define FMT_STKCODE_ASSOC                                                                          \
    4                      /* lists per set: keys are few, but a                                   \
                            * direct-mapped table let about every                                  \
                            * other run of bench_deep collide */
#define FMT_STKCODE_WAYS 8 /* addresses per list */

/* Recent child addresses under one key, most recent first. */
struct fmt_stklist {
    uint64_t parent_addr;
    uint64_t prev_addr; /* 0 in the table keyed by the parent alone */
    uint32_t limit_bit;
    uint32_t n;    /* 0: unused */
    uint64_t used; /* the update count when last updated: the least recent goes */
    uint64_t a[FMT_STKCODE_WAYS];
};

struct fmt_stkcode {
    uint64_t nr_updates;
    struct fmt_stklist
        by_prev[FMT_STKCODE_SETS * FMT_STKCODE_ASSOC]; /* (parent addr, L, prev addr) */
    struct fmt_stklist by_parent[FMT_STKCODE_SETS * FMT_STKCODE_ASSOC]; /* (parent addr, L) */
};

static inline struct fmt_stklist *fmt_stkcode_set(struct fmt_stklist *t, uint64_t pa, uint64_t prev,
                                                  uint32_t l)
{
    uint64_t h = (pa ^ (prev * 0xff51afd7ed558ccdull) ^ l) * 0x9e3779b97f4a7c15ull;

    return &t[((h >> 40) & (FMT_STKCODE_SETS - 1)) * FMT_STKCODE_ASSOC];
}

static inline int fmt_stklist_match(const struct fmt_stklist *s, uint64_t pa, uint64_t prev,
                                    uint32_t l)
{
    return s->n && s->parent_addr == pa && s->prev_addr == prev && s->limit_bit == l;
}

/* The list of a key, or NULL. */
static inline struct fmt_stklist *fmt_stkcode_list(struct fmt_stklist *t, uint64_t pa,
                                                   uint64_t prev, uint32_t l)
{
    struct fmt_stklist *set = fmt_stkcode_set(t, pa, prev, l);

    for (uint32_t k = 0; k < FMT_STKCODE_ASSOC; k++)
        if (fmt_stklist_match(&set[k], pa, prev, l))
            return &set[k];
    return NULL;
}

/* The candidates for a child of a parent at address pa, with limit bit l,
 * the node before it (id - 1) at address prev (0 for node 1), are the
 * by_prev list of (pa, l, prev), then the entries of the by_parent list of
 * (pa, l) not in that one, both most recent first. fmt_stkcode_find() and
 * fmt_stkcode_get() walk that sequence without building it (the writer
 * runs this for every new node). */

/* Is addr among the n entries of f? */
static inline int fmt_stklist_has(const struct fmt_stklist *f, uint32_t n, uint64_t addr)
{
    int has = 0;

    for (uint32_t i = 0; i < FMT_STKCODE_WAYS; i++)
        has |= i < n && f->a[i] == addr;
    return has;
}

/* The two lists of a node's keys (NULL: none yet), looked up once for
 * both the code and the update. */
struct fmt_stkcode_at {
    uint64_t pa, prev;
    uint32_t l, nf; /* nf: entries of f */
    struct fmt_stklist *f, *p;
};

static inline void fmt_stkcode_at(struct fmt_stkcode *c, uint64_t pa, uint64_t prev, uint32_t l,
                                  struct fmt_stkcode_at *at)
{
    at->pa = pa;
    at->prev = prev;
    at->l = l;
    at->f = fmt_stkcode_list(c->by_prev, pa, prev, l);
    at->p = fmt_stkcode_list(c->by_parent, pa, 0, l);
    at->nf = at->f ? at->f->n : 0;
}

/* The code of addr: its index in the candidates plus one, 0 if absent. */
static inline uint32_t fmt_stkcode_find(const struct fmt_stkcode_at *at, uint64_t addr)
{
    const struct fmt_stklist *f = at->f, *p = at->p;
    uint32_t nf = at->nf;

    for (uint32_t i = 0; i < nf; i++)
        if (f->a[i] == addr)
            return i + 1;
    if (!p)
        return 0;
    uint32_t code = nf + 1;
    for (uint32_t i = 0; i < p->n; i++) {
        if (p->a[i] == addr)
            return code;
        code += !fmt_stklist_has(f, nf, p->a[i]);
    }
    return 0;
}

/* The candidate of code (1..): into *addr. Returns 0 if there is none. */
static inline int fmt_stkcode_get(const struct fmt_stkcode_at *at, uint32_t code, uint64_t *addr)
{
    const struct fmt_stklist *f = at->f, *p = at->p;
    uint32_t nf = at->nf;

    if (code == 0)
        return 0;
    if (code <= nf) {
        *addr = f->a[code - 1];
        return 1;
    }
    if (!p)
        return 0;
    uint32_t k = nf + 1;
    for (uint32_t i = 0; i < p->n; i++) {
        if (fmt_stklist_has(f, nf, p->a[i]))
            continue;
        if (k++ == code) {
            *addr = p->a[i];
            return 1;
        }
    }
    return 0;
}

/* Make addr the most recent entry of s, the list of (pa, prev, l) in table
 * t (NULL: there is none): moved to the front if there, else added (a full
 * list forgets its oldest). A key without a list takes the least recently
 * updated of its set. Fixed trip counts and selects rather than branches:
 * the position is random. */
static inline void fmt_stklist_push(struct fmt_stkcode *c, struct fmt_stklist *t,
                                    struct fmt_stklist *s, uint64_t pa, uint64_t prev, uint32_t l,
                                    uint64_t addr)
{
    if (!s) {
        struct fmt_stklist *set = fmt_stkcode_set(t, pa, prev, l);
        s = &set[0];
        for (uint32_t k = 1; k < FMT_STKCODE_ASSOC; k++)
            s = set[k].used < s->used ? &set[k] : s;
        s->parent_addr = pa;
        s->prev_addr = prev;
        s->limit_bit = l;
        s->n = 0;
    }
    s->used = ++c->nr_updates;
    uint32_t n = s->n;
    uint32_t pos = n < FMT_STKCODE_WAYS ? n : FMT_STKCODE_WAYS - 1;
    for (uint32_t i = FMT_STKCODE_WAYS; i-- > 0;)
        pos = i < n && s->a[i] == addr ? i : pos;
    s->n = n + (pos == n);
    for (uint32_t j = FMT_STKCODE_WAYS - 1; j > 0; j--)
        s->a[j] = j <= pos ? s->a[j - 1] : s->a[j];
    s->a[0] = addr;
}

/* The node of at (not a root) was defined at addr: it is now the most
 * recent in both lists. at is used up. */
static inline void fmt_stkcode_update(struct fmt_stkcode *c, const struct fmt_stkcode_at *at,
                                      uint64_t addr)
{
    fmt_stklist_push(c, c->by_prev, at->f, at->pa, at->prev, at->l, addr);
    fmt_stklist_push(c, c->by_parent, at->p, at->pa, 0, at->l, addr);
}

#endif
