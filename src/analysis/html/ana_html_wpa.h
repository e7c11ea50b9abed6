/* SPDX-License-Identifier: MIT */
/* The HTML report's window pre-aggregation (ana_html_wpa.c): per stack, a
 * sparse histogram of (allocation time bucket, free time bucket) -> blocks
 * and bytes, so that any selection of whole buckets gives exactly what
 * `memscribe window` prints for that range (ana_html.h), and the commit
 * lifetimes' cells of the same shape (ana_html_vm.h). */
#ifndef ANA_HTML_WPA_H
#define ANA_HTML_WPA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/core/ana_map.h"
#include "analysis/model/ana_step.h"
#include "memscribe/event.h"

/* Buckets never exceed this many (the pre-aggregation packs a bucket
 * index in 16 bits; one value means "never freed"). */
#define ANA_HTML_MAX_BUCKETS 65534u
#define ANA_HTML_NEVER 0xffffu
/* The stack id of the lumped sites in the pre-aggregation. */
#define ANA_HTML_OTHER_STACK UINT32_MAX
/* Cells the pre-aggregation keeps at most by default: about 30 bytes of
 * page each. Past it, buckets double in width (cells merge pairwise), so
 * memory and page size stay bounded for any trace. */
#define ANA_HTML_MAX_CELLS 400000u
/* Call sites the page lists and draws at most; the others are lumped into
 * one "(N other call sites)" site, each under 1/2000 of every total. */
#define ANA_HTML_MAX_SITES 2000u

/* The window pre-aggregation. Bucket k holds times [k*bucket_ns,
 * (k+1)*bucket_ns) from the trace start. */
struct ana_html_wpa {
    uint64_t bucket_ns;
    uint32_t nr_buckets;
    uint64_t end_ns;
    size_t max_cells;      /* ANA_HTML_MAX_CELLS unless a test sets it */
    uint32_t nr_coarsened; /* times the buckets doubled */
    struct ana_map cells;  /* wpa_key(stack, alloc bucket, free bucket) -> struct ana_html_cell */
    /* The key cells have for a block of stack in image (NULL: the stack
     * id itself): the folded page's row (ana_html_fold.h). 0 or -errno. */
    int (*key_of)(void *arg, uint32_t stack, uint32_t image, uint32_t *key);
    void *key_arg;
};

struct ana_html_cell {
    uint64_t nr;
    uint64_t bytes;
};

/* Buckets of a round width (1, 2 or 5 times a power of ten ns) so that
 * there are at most about target of them over [0, end_ns]. */
uint64_t ana_html_bucket_width(uint64_t end_ns, uint32_t target);

/* Buckets of bucket_ns over [0, end_ns]. Returns 0, or -E2BIG if that
 * takes more than ANA_HTML_MAX_BUCKETS. */
int ana_html_wpa_init(struct ana_html_wpa *w, uint64_t bucket_ns, uint64_t end_ns);
void ana_html_wpa_release(struct ana_html_wpa *w);
/* Account one event by its step st (blocks start at heap allocations, end
 * at frees and reallocs, as ana_window counts them). Returns 0 or
 * -ENOMEM. */
int ana_html_wpa_step(struct ana_html_wpa *w, const struct fmt_event *ev,
                      const struct ana_step *st);
/* Account nr things of key (a commit lifetime's: ana_html_vm.c) that
 * started at start_ns and ended at end_ns (open: never), as a block is.
 * Returns 0 or -ENOMEM. */
int ana_html_wpa_add(struct ana_html_wpa *w, uint32_t key, uint64_t start_ns, uint64_t end_ns,
                     bool open, uint64_t nr, uint64_t bytes);
/* Make the buckets of a and b one width (the wider: the other's cells
 * merge), so that one selection of whole buckets is exact for both. Both
 * began with the same width over the same end. Returns 0 or -ENOMEM. */
int ana_html_wpa_align(struct ana_html_wpa *a, struct ana_html_wpa *b);
/* Account every step of the heap replay p (its filter: the blocks
 * counted). Returns as ana_heap_replay_subscribe(). */
struct ana_heap_replay;
int ana_html_wpa_subscribe(struct ana_html_wpa *w, struct ana_heap_replay *p);
/* After the pass: the cells of stacks keep does not keep (or beyond
 * nr_keep) lumped under ANA_HTML_OTHER_STACK. Where every stack is kept
 * the cells stay as they are. Returns 0 or -ENOMEM. */
int ana_html_wpa_lump(struct ana_html_wpa *w, const uint8_t *keep, uint32_t nr_keep);
/* Unpack a cell's key. */
void ana_html_wpa_key(uint64_t key, uint32_t *stack, uint32_t *alloc_bucket, uint32_t *free_bucket);

/* ana_map hashes the low bits of a key; packed keys (stack, buckets,
 * parent node) carry their variety anywhere. A bijection that spreads
 * every bit over the low ones makes any packing hash well: x ^= x >> 32
 * is its own inverse and an odd multiplier has one modulo 2^64. Zero maps
 * to zero, so a non-zero key stays non-zero. */
#define ANA_HTML_MIX 0xd6e8feb86659fd93ull

static inline uint64_t ana_html_mix(uint64_t x)
{
    x ^= x >> 32;
    x *= ANA_HTML_MIX;
    return x ^ (x >> 32);
}

static inline uint64_t ana_html_unmix(uint64_t x)
{
    uint64_t inv = ANA_HTML_MIX; /* Newton: each step doubles the good bits */

    for (int i = 0; i < 5; i++)
        inv *= 2 - ANA_HTML_MIX * inv;
    x ^= x >> 32;
    x *= inv;
    return x ^ (x >> 32);
}

#endif
