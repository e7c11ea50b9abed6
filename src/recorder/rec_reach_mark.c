/* SPDX-License-Identifier: MIT */
/* memcheck's leak search (valgrind 3.19, memcheck/mc_leakcheck.c, with
 * its default --leak-check-heuristics=all) over blocks whose memory is read
 * from another process: mark from the roots, then gather what is left into
 * cliques. Nothing in the process is trusted: a word is a pointer only if
 * a block holds it, and every read is bounded and may fail. docs/leaks.md
 * says where the result differs from memcheck's. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "memscribe/trace.h"
#include "recorder/rec_reach_internal.h"
#include "util/util_search.h"

#define REC_PAGE 4096u
/* The process's pointer size: 8, or 4 (a 32-bit process: memcheck's rule
 * there is 4-byte words at 4-byte alignment). */
#define REC_WORD (rr->word)

/* A word of w bytes (4 or 8) at p, little-endian. */
static inline uint64_t rr_word_at(const unsigned char *p, unsigned w)
{
    uint64_t v = 0;

    if (w == 8) {
        memcpy(&v, p, 8);
    } else {
        uint32_t v32;

        memcpy(&v32, p, 4);
        v = v32;
    }
    return v;
}

/* Blocks further apart than this are in different clusters. */
#define REC_REACH_CLUSTER_GAP (1u << 20)
#define REC_REACH_MIN_INDEXED 1024u

/* Index the cluster with the most blocks by granules of at most a few
 * blocks each (granule counts bounded by the blocks'). Without memory
 * for it, every lookup is a binary search. */
static void rr_index(struct rec_reach *rr)
{
    size_t best = 0, best_n = 0, start = 0;
    uint64_t lo, hi, ng;

    rr->idx = NULL;
    rr->lo = rr->nr_blocks ? rr->blocks[0].addr : 1;
    rr->hi = 0;
    for (size_t i = 0; i < rr->nr_blocks; i++) {
        uint64_t end = rr->blocks[i].addr + (rr->blocks[i].size ? rr->blocks[i].size : 1);

        rr->hi = end > rr->hi ? end : rr->hi;
    }
    for (size_t i = 1; i <= rr->nr_blocks; i++) {
        const struct rec_reach_block *p = &rr->blocks[i - 1];

        if (i < rr->nr_blocks && rr->blocks[i].addr - (p->addr + p->size) <= REC_REACH_CLUSTER_GAP)
            continue;
        if (i - start > best_n) {
            best = start;
            best_n = i - start;
        }
        start = i;
    }
    if (best_n < REC_REACH_MIN_INDEXED)
        return;
    lo = rr->blocks[best].addr;
    hi = rr->blocks[best + best_n - 1].addr + rr->blocks[best + best_n - 1].size;
    for (rr->idx_shift = 4; ((hi - lo) >> rr->idx_shift) > 2 * best_n; rr->idx_shift++)
        ;
    ng = ((hi - lo) >> rr->idx_shift) + 2;
    if (!(rr->idx = malloc(ng * sizeof(*rr->idx))))
        return;
    rr->idx_lo = lo;
    rr->idx_hi = hi;
    for (size_t g = 0, i = best; g < ng; g++) {
        uint64_t at = lo + (g << rr->idx_shift);

        while (i < best + best_n && rr->blocks[i].addr < at)
            i++;
        rr->idx[g] = (uint32_t)i;
    }
}

int rec_reach_init(struct rec_reach *rr)
{
    rr->stack = malloc((rr->nr_blocks ? rr->nr_blocks : 1) * sizeof(*rr->stack));
    rr->buf = malloc(REC_REACH_BATCH);
    if (!rr->stack || !rr->buf) {
        rec_reach_free(rr);
        return -ENOMEM;
    }
    rr->top = 0;
    if (rr->word != 4)
        rr->word = 8;
    rr_index(rr);
    return 0;
}

void rec_reach_free(struct rec_reach *rr)
{
    free(rr->stack);
    free(rr->buf);
    free(rr->idx);
    rr->stack = NULL;
    rr->buf = NULL;
    rr->idx = NULL;
}

/* Read n remote ranges into the local ones. A range that faults is read
 * up to its first bad page, the page is left zero and counted, and the
 * read goes on after it: every call makes progress, so it ends. */
static void rr_readv(struct rec_reach *rr, struct iovec *local, struct iovec *remote, size_t n)
{
    size_t i = 0;

    while (i < n) {
        ssize_t got = rr->read(rr->read_arg, local + i, n - i, remote + i, n - i);
        size_t left = got < 0 ? 0 : (size_t)got;

        /* Whole ranges read. */
        while (i < n && left >= remote[i].iov_len)
            left -= remote[i++].iov_len;
        if (i == n)
            return;
        /* Range i stopped after `left` bytes: skip to its next page. */
        uint64_t at = (uint64_t)(uintptr_t)remote[i].iov_base + left;
        uint64_t skip = (at | (REC_PAGE - 1)) + 1 - at;

        if (skip > remote[i].iov_len - left)
            skip = remote[i].iov_len - left;
        memset((char *)local[i].iov_base + left, 0, skip);
        rr->skipped_bytes += skip;
        left += skip;
        remote[i].iov_base = (char *)remote[i].iov_base + left;
        remote[i].iov_len -= left;
        local[i].iov_base = (char *)local[i].iov_base + left;
        local[i].iov_len -= left;
        if (!remote[i].iov_len)
            i++;
    }
}

/* The block ptr points into ([addr, addr + size), or addr itself for an
 * empty block: find_chunk_for), or NULL. */
static struct rec_reach_block *rr_find(const struct rec_reach *rr, uint64_t ptr)
{
    size_t i;

    if (ptr - rr->lo >= rr->hi - rr->lo)
        return NULL;
    if (rr->idx && ptr >= rr->idx_lo && ptr < rr->idx_hi) {
        /* The last block at or below ptr starts before the next granule. */
        i = rr->idx[((ptr - rr->idx_lo) >> rr->idx_shift) + 1];
        while (i && rr->blocks[i - 1].addr > ptr)
            i--;
    } else {
        i = util_search_above(rr->blocks, rr->nr_blocks, sizeof(*rr->blocks),
                              offsetof(struct rec_reach_block, addr), ptr);
    }

    if (!i)
        return NULL;
    struct rec_reach_block *k = &rr->blocks[i - 1];
    return ptr - k->addr < (k->size ? k->size : 1) ? k : NULL;
}

static const struct rec_reach_map *rr_map(const struct rec_reach *rr, uint64_t a)
{
    size_t i = util_search_above(rr->maps, rr->nr_maps, sizeof(*rr->maps),
                                 offsetof(struct rec_reach_map, lo), a);

    return i && a < rr->maps[i - 1].hi ? &rr->maps[i - 1] : NULL;
}

/* n (at most 20) words at addr into w, widened: 1 if all were read. */
static int rr_read_words(struct rec_reach *rr, uint64_t addr, uint64_t *w, size_t n)
{
    unsigned char raw[20 * 8];
    struct iovec l = {raw, n * REC_WORD}, r = {(void *)(uintptr_t)addr, n * REC_WORD};

    if (rr->read(rr->read_arg, &l, 1, &r, 1) != (ssize_t)(n * REC_WORD))
        return 0;
    for (size_t i = 0; i < n; i++)
        w[i] = rr_word_at(raw + i * REC_WORD, REC_WORD);
    return 1;
}

/* memcheck's aligned_ptr_above_page0_is_vtable_addr: p lies in a readable
 * file mapping, and of its first 20 words (within the mapping) the
 * non-null ones point into executable file mappings, two at least. */
static int rr_is_vtable(struct rec_reach *rr, uint64_t p)
{
    const struct rec_reach_map *m = rr_map(rr, p);
    uint64_t w[20];
    size_t n = 20;
    unsigned fns = 0;

    if (!m || !m->file || !m->r || rr->nr_vtable_checks >= REC_REACH_MAX_VTABLE_CHECKS)
        return 0;
    rr->nr_vtable_checks++;
    if ((m->hi - p) / REC_WORD < n)
        n = (m->hi - p) / REC_WORD;
    if (!n || !rr_read_words(rr, p, w, n))
        return 0;
    for (size_t i = 0; i < n; i++) {
        const struct rec_reach_map *f;

        if (!w[i])
            continue;
        if (!(f = rr_map(rr, w[i])) || !f->file || !f->x)
            return 0;
        if (++fns == 2)
            return 1;
    }
    return 0;
}

/* The first two words of block k (of its size: fewer in a smaller block),
 * read only for the interior pointers memcheck's heuristics look at:
 * reading every block's head up front cost a pass over the heap. A page
 * that cannot be read gives zeros, as memcheck's unreadable memory does. */
static unsigned rr_head(struct rec_reach *rr, const struct rec_reach_block *k, uint64_t *w0,
                        uint64_t *w1)
{
    unsigned char head[16] = {0};
    size_t len = k->size < 2 * REC_WORD ? (size_t)k->size & ~(size_t)(REC_WORD - 1) : 2 * REC_WORD;
    struct iovec l = {head, len}, r = {(void *)(uintptr_t)k->addr, len};

    if (len)
        rr_readv(rr, &l, &r, 1);
    *w0 = rr_word_at(head, REC_WORD);
    *w1 = rr_word_at(head + REC_WORD, REC_WORD);
    return (unsigned)(len / REC_WORD);
}

/* memcheck's heuristic_reachedness: an interior pointer that some common
 * layout makes a start pointer. 1 if one matches. */
static int rr_heuristic(struct rec_reach *rr, const struct rec_reach_block *k, uint64_t ptr)
{
    uint64_t off = ptr - k->addr, w0, w1;
    unsigned nr_words = rr_head(rr, k, &w0, &w1);
    uint64_t len64 = REC_WORD == 8 ? w0 : w0 | w1 << 32;

    /* stdstring: length, capacity, refcount, then the chars ptr points at. */
    if (off == 3 * REC_WORD && nr_words == 2 && 3 * REC_WORD + w1 + 1 == k->size && w0 <= w1)
        return 1;
    /* length64: a 64-bit length of the rest, then ptr (sqlite): 8 bytes
     * whatever the word (two words of a 32-bit process). */
    if (off == 8 && nr_words * REC_WORD >= 8 && k->size - 8 == len64 && len64 > 0)
        return 1;
    /* newarray: new[]'s element count, then the elements. */
    if (off == REC_WORD && nr_words >= 1 && w0 > 0 && (k->size - REC_WORD) % w0 == 0)
        return 1;
    /* multipleinheritance: vtable pointers at the start and at ptr. */
    if (!(ptr % REC_WORD) && nr_words >= 1 && !(w0 % REC_WORD) && w0 >= REC_PAGE) {
        uint64_t inner;

        if (rr_read_words(rr, ptr, &inner, 1) && !(inner % REC_WORD) && inner >= REC_PAGE &&
            rr_is_vtable(rr, inner) && rr_is_vtable(rr, w0))
            return 1;
    }
    return 0;
}

static void rr_push(struct rec_reach *rr, struct rec_reach_block *k)
{
    if (!k->pending) {
        k->pending = 1;
        rr->stack[rr->top++] = (uint32_t)(k - rr->blocks);
    }
}

/* lc_push_without_clique_if_a_chunk_ptr: reached from a root or a block
 * reached before (definite: a root, or a block not only possibly reached). */
static void rr_reach(struct rec_reach *rr, uint64_t ptr, int prior_definite)
{
    struct rec_reach_block *k = rr_find(rr, ptr);
    int start;

    if (!k)
        return;
    if (k->state == FMT_REACH_REACHABLE) {
        if (ptr == k->addr)
            k->heuristic = 0;
        return;
    }
    start = ptr == k->addr;
    if (!start && rr_heuristic(rr, k, ptr)) {
        start = 1;
        k->heuristic = 1;
    }
    if (start && prior_definite) {
        k->state = FMT_REACH_REACHABLE;
        rr_push(rr, k);
    } else if (k->state == REC_REACH_UNREACHED) {
        k->state = FMT_REACH_POSSIBLE;
        rr_push(rr, k);
    }
}

/* lc_push_with_clique_if_a_chunk_ptr: from a lost block, every block not
 * reached yet (start or interior pointer alike) joins its clique. */
static void rr_gather(struct rec_reach *rr, uint64_t ptr, const struct rec_reach_block *leader)
{
    struct rec_reach_block *k = rr_find(rr, ptr);

    if (k && k->state == REC_REACH_UNREACHED && k != leader) {
        rr_push(rr, k);
        k->state = FMT_REACH_INDIRECT;
    }
}

static void rr_words(struct rec_reach *rr, const unsigned char *p, size_t len, int prior_definite,
                     const struct rec_reach_block *leader)
{
    if (REC_WORD == 8) { /* the hot loop, one load a word */
        for (size_t i = 0; i + 8 <= len; i += 8) {
            uint64_t v;

            memcpy(&v, p + i, 8);
            if (leader)
                rr_gather(rr, v, leader);
            else
                rr_reach(rr, v, prior_definite);
        }
        return;
    }
    for (size_t i = 0; i + REC_WORD <= len; i += REC_WORD) {
        uint64_t v = rr_word_at(p + i, REC_WORD);

        if (leader)
            rr_gather(rr, v, leader);
        else
            rr_reach(rr, v, prior_definite);
    }
}

void rec_reach_root_word(struct rec_reach *rr, uint64_t value)
{
    rr_reach(rr, value, 1);
}

/* Scan [lo, hi) word by word (aligned words only, as memcheck). */
static void rr_scan(struct rec_reach *rr, uint64_t lo, uint64_t hi, int prior_definite,
                    const struct rec_reach_block *leader, uint64_t *counted)
{
    lo = (lo + REC_WORD - 1) & ~(uint64_t)(REC_WORD - 1);
    hi &= ~(uint64_t)(REC_WORD - 1);
    while (lo < hi) {
        size_t len = hi - lo < REC_REACH_BATCH ? (size_t)(hi - lo) : REC_REACH_BATCH;
        struct iovec l = {rr->buf, len}, r = {(void *)(uintptr_t)lo, len};

        rr_readv(rr, &l, &r, 1);
        *counted += len;
        rr_words(rr, rr->buf, len, prior_definite, leader);
        lo += len;
    }
}

void rec_reach_root_range(struct rec_reach *rr, uint64_t lo, uint64_t hi)
{
    rr_scan(rr, lo, hi, 1, NULL, &rr->root_bytes);
}

/* lc_process_markstack: scan the blocks on the stack until it is empty.
 * Small blocks are read together, up to a batch's bytes and ranges; a
 * block's state is taken when it is popped, as memcheck takes it. */
static void rr_process(struct rec_reach *rr, const struct rec_reach_block *leader)
{
    struct iovec local[REC_REACH_IOV], remote[REC_REACH_IOV];
    uint32_t idx[REC_REACH_IOV];
    uint8_t definite[REC_REACH_IOV];

    while (rr->top) {
        size_t n = 0, bytes = 0;

        while (rr->top && n < REC_REACH_IOV) {
            struct rec_reach_block *k = &rr->blocks[rr->stack[rr->top - 1]];
            size_t len = (size_t)(k->size & ~(uint64_t)(REC_WORD - 1));
            const unsigned char *v = rr->view ? rr->view(rr->view_arg, k->addr, len) : NULL;

            if (v) { /* held here: scanned in place */
                rr->top--;
                k->pending = 0;
                rr->block_bytes += len;
                rr_words(rr, v, len, k->state != FMT_REACH_POSSIBLE, leader);
                continue;
            }
            if (len > REC_REACH_BATCH / 4) {
                if (n)
                    break; /* a large block alone, after this batch */
                rr->top--;
                k->pending = 0;
                rr_scan(rr, k->addr, k->addr + k->size, k->state != FMT_REACH_POSSIBLE, leader,
                        &rr->block_bytes);
                continue;
            }
            if (bytes + len > REC_REACH_BATCH)
                break;
            rr->top--;
            k->pending = 0;
            idx[n] = (uint32_t)(k - rr->blocks);
            definite[n] = k->state != FMT_REACH_POSSIBLE;
            local[n] = (struct iovec){rr->buf + bytes, len};
            remote[n] = (struct iovec){(void *)(uintptr_t)k->addr, len};
            bytes += len;
            n++;
        }
        if (!n)
            continue;
        rr_readv(rr, local, remote, n);
        rr->block_bytes += bytes;
        bytes = 0;
        for (size_t i = 0; i < n; i++) {
            size_t len = (size_t)(rr->blocks[idx[i]].size & ~(uint64_t)(REC_WORD - 1));

            rr_words(rr, rr->buf + bytes, len, definite[i], leader);
            bytes += len;
        }
    }
}

void rec_reach_mark(struct rec_reach *rr)
{
    rr_process(rr, NULL);
    /* Every block left is lost. In address order, each one not gathered
     * yet leads a clique of the blocks it reaches, which are indirectly
     * lost; a leader stays unreached, so a later leader that reaches it
     * gathers it too (as memcheck: a cycle's lowest block leads it). The
     * leaders left are definitely lost. */
    for (size_t i = 0; i < rr->nr_blocks; i++) {
        struct rec_reach_block *k = &rr->blocks[i];

        if (k->state != REC_REACH_UNREACHED)
            continue;
        rr_push(rr, k);
        rr_process(rr, k);
    }
    for (size_t i = 0; i < rr->nr_blocks; i++)
        if (rr->blocks[i].state == REC_REACH_UNREACHED)
            rr->blocks[i].state = FMT_REACH_DEFINITE;
}
