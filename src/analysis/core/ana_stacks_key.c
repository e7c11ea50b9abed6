/* SPDX-License-Identifier: MIT */
/* Row keys (ana_stacks_key): the same key for two stacks exactly when their
 * cleaned frames read the same, found without reading each stack's frames.
 *
 * A report groups every call site of a trace, and a deep trace has stacks
 * of 60 frames that are mostly windows of one long recursion: walking each
 * stack's frames cost more than the rest of the report. So each node of the
 * trace's tree of stacks keeps sums over its chain from the root (node_sums:
 * a polynomial hash of its frames' string ids, outermost first, and counts
 * of frames, addresses and signal trampolines). A stack is the first
 * `depth` addresses of its node's chain with the cut ones (ana_sym_clean)
 * left out at the leaf end, so its hash is the difference of the sums of
 * two nodes of the chain: the first kept one and the one above the stack,
 * found in O(log depth) by skew-binary jump pointers (Myers, "An applicative
 * random-access stack", 1983). The hash only finds a key's candidates: two
 * stacks are given one key only when their frames compare equal, so the
 * keys are what comparing every stack's frames would give, in the same
 * order of first use. A stack with a signal trampoline among its kept
 * addresses (the next one is read as precise, not as the node keeps it) is
 * walked and hashed frame by frame. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/ana_stacks_internal.h"
#include "util/util_array.h"

/* The hash's base: odd, so that powers of it never vanish mod 2^64. */
#define HASH_BASE 0x9e3779b97f4a7c15ull

static const struct node_sums no_sums = {.summed = true};

void ana_stacks_keys_release(struct ana_stacks *s)
{
    free(s->todo);
    free(s->pow);
    free(s->keys);
    free(s->key_index);
    free(s->key_ids);
}

/* Node n's sums (n's page made), or NULL when out of memory. */
static struct node_sums *sums_make(struct ana_stacks *s, uint32_t n)
{
    struct node_page *pg = ana_stacks_page(s, n);

    if (!pg)
        return NULL;
    if (!pg->sums && !(pg->sums = calloc(ANA_STACKS_PAGE, sizeof(*pg->sums))))
        return NULL;
    return &pg->sums[ANA_STACKS_AT(n)];
}

/* The sums of node n, summed already (0: above the root). */
static const struct node_sums *sums_of(const struct ana_stacks *s, uint32_t n)
{
    return n ? &s->pages[n >> ANA_STACKS_PAGE_BITS]->sums[ANA_STACKS_AT(n)] : &no_sums;
}

/* The parent of node n, whose page is made. */
static uint32_t parent_of(const struct ana_stacks *s, uint32_t n)
{
    return s->pages[n >> ANA_STACKS_PAGE_BITS]->parent[ANA_STACKS_AT(n)];
}

/* What node n reads as, whose page is made. */
static const struct addr_read *read_of(const struct ana_stacks *s, uint32_t n)
{
    return &s->pages[n >> ANA_STACKS_PAGE_BITS]->reads[ANA_STACKS_AT(n)];
}

/* Sum node n from its parent's sums. */
static int sum_node(struct ana_stacks *s, uint32_t n, uint32_t image)
{
    uint32_t p = parent_of(s, n);
    struct node_sums *m = sums_make(s, n);
    struct addr_read rd = *read_of(s, n);
    uint64_t addr;
    int rc;

    if (!m)
        return -ENOMEM;
    if (!p) {
        if ((rc = fmt_reader_stack_node(s->r, n, NULL, &addr, NULL)))
            return rc;
        if (!addr) { /* the root of the empty stack: no frame (fmt_reader_stack) */
            *m = no_sums;
            return 0;
        }
    }
    if (!rd.nr && (rc = ana_stacks_read_node(s, n, image, ANA_SYM_RETURN, &rd)))
        return rc;
    const struct node_sums *ps = sums_of(s, p);
    const struct ana_frame *f = s->spans + rd.off;
    *m = (struct node_sums){.hash = {ps->hash[0], ps->hash[1]},
                            .lines = ps->lines + rd.nr,
                            .depth = ps->depth + 1,
                            .signals = ps->signals + rd.signal_frame,
                            .jump = p,
                            .summed = true};
    /* Outermost first: an address's frames are leaf first (inlined ones,
     * then the physical one). */
    for (uint32_t k = rd.nr; k-- > 0;) {
        m->hash[0] = m->hash[0] * HASH_BASE + f[k].function;
        m->hash[1] = m->hash[1] * HASH_BASE + f[k].place;
    }
    /* Skew-binary jumps: two equal jumps above make one twice as long. */
    const struct node_sums *j = sums_of(s, ps->jump);
    if (p && ps->depth - j->depth == j->depth - sums_of(s, j->jump)->depth)
        m->jump = j->jump;
    return 0;
}

/* Sum node n and the ancestors not summed yet, the outermost first; every
 * node of the chain has its page and sums made after. */
static int sum_chain(struct ana_stacks *s, uint32_t n, uint32_t image)
{
    size_t nr = 0;
    int rc;

    for (uint32_t m = n; m;) {
        const struct node_sums *ms = sums_make(s, m);
        if (!ms)
            return -ENOMEM;
        if (ms->summed)
            break;
        if (UTIL_ARRAY_RESERVE(s->todo, s->cap_todo, nr + 1, 64))
            return -ENOMEM;
        s->todo[nr++] = m;
        m = parent_of(s, m);
    }
    while (nr)
        if ((rc = sum_node(s, s->todo[--nr], image)))
            return rc;
    return 0;
}

/* The ancestor of n (summed) with depth addresses (0: above the root). */
static uint32_t ancestor(const struct ana_stacks *s, uint32_t n, uint32_t depth)
{
    while (n && sums_of(s, n)->depth > depth) {
        uint32_t j = sums_of(s, n)->jump;
        n = sums_of(s, j)->depth >= depth ? j : parent_of(s, n);
    }
    return n;
}

/* HASH_BASE to the power e. */
static int power(struct ana_stacks *s, uint32_t e, uint64_t *out)
{
    if (e >= s->nr_pow) {
        if (UTIL_ARRAY_RESERVE(s->pow, s->cap_pow, (size_t)e + 1, 256))
            return -ENOMEM;
        for (; s->nr_pow <= e; s->nr_pow++)
            s->pow[s->nr_pow] = s->nr_pow ? s->pow[s->nr_pow - 1] * HASH_BASE : 1;
    }
    *out = s->pow[e];
    return 0;
}

/* The hash and number of the cleaned frames of stack (depth addresses, of
 * image) from its nodes' sums; 1 when a signal trampoline among them means
 * they must be walked instead. Returns 0, 1 or -errno. */
static int hash_by_sums(struct ana_stacks *s, uint32_t stack, uint32_t depth, uint32_t image,
                        bool by_place, uint64_t *hash, uint32_t *lines)
{
    struct ana_sym_clean c = ana_sym_clean_start(s->sym);
    uint32_t n = stack, i;
    uint64_t pw;
    int rc;

    if ((rc = sum_chain(s, stack, image)))
        return rc;
    for (i = 0; i < depth; i++, n = parent_of(s, n)) {
        if (c.precise)
            return 1;
        const struct addr_read *rd = read_of(s, n);
        if (!ana_sym_clean_next(&c, i, depth, rd->internal, rd->signal_frame))
            break;
    }
    /* n is the first address kept; the stack ends above `top`. */
    const struct node_sums *first = sums_of(s, n);
    const struct node_sums *top = sums_of(s, ancestor(s, stack, sums_of(s, stack)->depth - depth));
    if (first->signals != top->signals)
        return 1;
    *lines = first->lines - top->lines;
    if ((rc = power(s, *lines, &pw)))
        return rc;
    *hash = first->hash[by_place] - top->hash[by_place] * pw;
    return 0;
}

/* The same, walking the frames. Returns 0 or -errno. */
static int hash_by_walk(struct ana_stacks *s, uint32_t stack, bool by_place, uint64_t *hash,
                        uint32_t *lines)
{
    int n = ana_stacks_walk(s, stack, by_place ? ANA_WALK_PLACES : ANA_WALK_FUNCTIONS);

    if (n < 0)
        return n;
    *hash = 0;
    for (int i = n; i-- > 0;)
        *hash = *hash * HASH_BASE + s->ids[i];
    *lines = (uint32_t)n;
    return 0;
}

/* Do the frames of key k and of stack (by_place) read the same? 1, 0 or
 * -errno. */
static int same_frames(struct ana_stacks *s, const struct key_entry *k, uint32_t stack,
                       bool by_place)
{
    int m = ana_stacks_walk(s, stack, by_place ? ANA_WALK_PLACES : ANA_WALK_FUNCTIONS);

    if (m < 0)
        return m;
    return (uint32_t)m == k->nr_ids &&
           !memcmp(s->key_ids + k->ids, s->ids, (size_t)m * sizeof(*s->ids));
}

/* Keep the frames of stack as the new key's. Returns 0 or -errno. */
static int keep_frames(struct ana_stacks *s, struct key_entry *k, uint32_t stack, bool by_place)
{
    int m = ana_stacks_walk(s, stack, by_place ? ANA_WALK_PLACES : ANA_WALK_FUNCTIONS);

    if (m < 0)
        return m;
    if (UTIL_ARRAY_RESERVE(s->key_ids, s->cap_key_ids, s->nr_key_ids + (size_t)m, 1024))
        return -ENOMEM;
    memcpy(s->key_ids + s->nr_key_ids, s->ids, (size_t)m * sizeof(*s->ids));
    k->ids = (uint32_t)s->nr_key_ids;
    k->nr_ids = (uint32_t)m;
    s->nr_key_ids += (size_t)m;
    return 0;
}

static uint32_t slot_of(uint64_t hash, uint32_t lines, uint32_t cap)
{
    /* Mixed: a polynomial hash's low bits are poorly mixed (its lowest is
     * the parity of the ids' lowest). */
    return (uint32_t)ana_map_mix(hash ^ ((uint64_t)lines << 32)) & (cap - 1);
}

static uint32_t key_slot(const struct ana_stacks *s, uint32_t k, uint32_t cap)
{
    return slot_of(s->keys[k].hash, s->keys[k].lines, cap);
}

/* The key of frames (hash, lines) of stack: one whose frames compare equal,
 * or a new one. Returns 0 or -errno. */
static int key_find(struct ana_stacks *s, uint64_t hash, uint32_t lines, uint32_t stack,
                    bool by_place, uint32_t *key)
{
    int rc = ana_stacks_index_room(s, &s->key_index, &s->cap_key_index, s->nr_keys, key_slot);

    if (rc)
        return rc;
    uint32_t j = slot_of(hash, lines, s->cap_key_index);
    for (; s->key_index[j]; j = (j + 1) & (s->cap_key_index - 1)) {
        const struct key_entry *k = &s->keys[s->key_index[j] - 1];
        if (k->hash != hash || k->lines != lines)
            continue;
        int same = same_frames(s, k, stack, by_place);
        if (same < 0)
            return same;
        if (same) {
            *key = s->key_index[j];
            return 0;
        }
    }
    if (UTIL_ARRAY_RESERVE(s->keys, s->cap_keys, (size_t)s->nr_keys + 1, 256))
        return -ENOMEM;
    struct key_entry *k = &s->keys[s->nr_keys];
    *k = (struct key_entry){.hash = hash, .lines = lines, .by_place = by_place};
    rc = keep_frames(s, k, stack, by_place);
    if (rc)
        return rc;
    s->key_index[j] = s->nr_keys + 1;
    *key = ++s->nr_keys;
    return 0;
}

int ana_stacks_key(struct ana_stacks *s, uint32_t stack, int by_place, uint32_t *key)
{
    uint32_t image, lines;
    uint64_t hash;
    int depth, rc;

    *key = 0; /* "(no stack)" */
    if (stack >= s->nr_stacks || stack == 0)
        return 0;
    if ((depth = fmt_reader_stack(s->r, stack, &image, NULL, 0)) <= 0)
        return depth;
    rc = hash_by_sums(s, stack, (uint32_t)depth, image, by_place, &hash, &lines);
    if (rc == 1)
        rc = hash_by_walk(s, stack, by_place, &hash, &lines);
    if (rc)
        return rc;
    return key_find(s, hash, lines, stack, by_place, key);
}
