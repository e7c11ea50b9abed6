/* SPDX-License-Identifier: MIT */
/* What ana_stacks.c (frame strings, stacks read from the trace's tree of
 * stack nodes) and ana_stacks_key.c (row keys) share. */
#ifndef ANA_STACKS_INTERNAL_H
#define ANA_STACKS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/core/ana_map.h"
#include "analysis/core/ana_stacks.h"
#include "analysis/core/ana_strtab.h"

/* What one recorded address reads as: its frames' strings at
 * spans[off .. off + nr) (an inline chain: one or more), and whether its
 * physical frame is internal or a signal trampoline (the cleaning rule,
 * ana_sym_clean_next). */
struct addr_read {
    uint32_t off;
    uint16_t nr; /* 0: not read yet */
    bool internal;
    bool signal_frame;
};

/* The reading of a return address kept in ana_stacks.recent. */
struct recent_read {
    uint64_t addr;
    uint32_t image;
    struct addr_read rd; /* rd.nr 0: empty */
};

#define ANA_STACKS_RECENT 4096 /* a power of two */

/* Sums over a stack node's chain, from its root down to the node, its
 * address read as a return address (ana_stacks_key.c): a row key's hash
 * of a stack's frames is the difference of two nodes' sums. */
struct node_sums {
    uint64_t hash[2]; /* polynomial hash of the chain's place ids [1], function ids [0] */
    uint32_t lines;   /* frames */
    uint32_t depth;   /* addresses */
    uint32_t signals; /* addresses whose physical frame is a signal trampoline */
    uint32_t jump;    /* an ancestor (skew-binary jump pointer; 0 above the root) */
    bool summed;
};

/* A row key: its frames' hash and number, how (by place or by function),
 * and its frames' string ids, kept (at key_ids[ids .. ids + nr_ids)): the
 * stack it was made from may be of a process whose stacks are gone when
 * another is compared with it (a tree's fold). */
struct key_entry {
    uint64_t hash;
    uint32_t lines;
    uint32_t ids, nr_ids;
    bool by_place;
};

/* What is kept of a page of ANA_STACKS_PAGE consecutive stack nodes (ids
 * p * ANA_STACKS_PAGE ...): each node's parent, what its address reads as
 * as a return address (nr 0: not read yet), and the row keys' sums (made
 * on the page's first key). Pages are made on first use, so a
 * command that reads a few stacks of a large trace holds a few pages, and
 * dropped together (ana_stacks_drop_nodes) when a tree's image has been
 * folded, so that a build's replay holds the pages of the image being
 * folded, not of every process it ran. */
#define ANA_STACKS_PAGE_BITS 10
#define ANA_STACKS_PAGE (1u << ANA_STACKS_PAGE_BITS)
#define ANA_STACKS_AT(n) ((n) & (ANA_STACKS_PAGE - 1))

struct node_page {
    uint32_t parent[ANA_STACKS_PAGE];
    struct addr_read reads[ANA_STACKS_PAGE];
    struct node_sums *sums;
};

/* A stack's frames got (ana_stacks_get): pool[start .. start + count). */
struct got {
    uint32_t start, count;
};

struct ana_stacks {
    struct fmt_reader *r;
    struct ana_sym *sym;
    bool full_names; /* else labels are ana_name_short()'s */

    /* Interned strings: text.strs[] by id; a frame string's class
     * (ana_interest.h) in cls[id], ANA_FRAME_USER past nr_cls. */
    struct ana_strtab text;
    uint8_t *cls;
    size_t nr_cls;

    /* Stack nodes are ids 1..nr_stacks - 1 of the trace's prefix tree
     * (parents first); their pages by id >> ANA_STACKS_PAGE_BITS (NULL:
     * not made). A stack's frames are its leaf node's: read once by a walk
     * of its chain, a few loads per frame instead of a symbolizer lookup
     * and a hash. The frames got (ana_stacks_get) are kept in pool. */
    uint32_t nr_stacks;
    struct node_page **pages;
    uint32_t nr_pages;
    struct ana_map got; /* stack + 1 -> struct got: its frames in pool */
    /* Hash of a frame list -> struct got: stacks of the same frames (a
     * build's thousand compilers keep the same rows) share them in pool. */
    struct ana_map same;
    struct ana_frame *pool;
    size_t nr_pool, cap_pool;

    /* The strings of each address read (keyed by the symbolizer's frames
     * for it, which live as long as it does): deep stacks share most of
     * their addresses, so each frame is formatted and escaped once. */
    struct ana_map read_of;
    struct ana_frame *spans;
    size_t nr_spans, cap_spans;
    struct recent_read recent[ANA_STACKS_RECENT];
    struct ana_frame *walked; /* the last walk's frames */
    size_t cap_walked;
    uint32_t *ids; /* the last walk's string ids */
    size_t cap_ids;

    /* Row keys (ana_stacks_key.c): the powers of the hash's base by
     * exponent, the keys (key k is keys[k - 1]; 0 is "(no stack)") and an
     * open-addressing index of key numbers (0 empty). */
    uint32_t *todo;
    size_t cap_todo;
    uint64_t *pow;
    size_t nr_pow, cap_pow;
    struct key_entry *keys;
    uint32_t nr_keys, cap_keys;
    uint32_t *key_index;
    uint32_t cap_key_index;
    uint32_t *key_ids; /* the keys' frames */
    size_t nr_key_ids, cap_key_ids;

    /* Where frames come from (ana_stacks_where.c), kept only once a
     * command asks: a place's id + 1 -> struct place_file (want_files), a
     * function's id + 1 -> struct function_where (want_where). */
    bool want_files, want_where;
    struct ana_map files, wheres;
};

/* Where the frames of one place string are: the string ids of the file's
 * path as the debug information names it (not escaped) and of a second
 * path whose frames read the same (0: none). */
struct place_file {
    uint32_t path, other, line;
};

/* The files and modules (string ids of their last parts, escaped) of one
 * function's frames, the first few of them. */
struct function_where {
    uint32_t files[ANA_WHERE_MAX], modules[ANA_WHERE_MAX];
    uint8_t nr_files, nr_modules;
    bool more;
};

/* Note where a frame just read (its function's and place's string ids)
 * comes from, as asked (want_files, want_where). Returns 0 or -ENOMEM. */
int ana_stacks_note_where(struct ana_stacks *s, const struct ana_frame *out,
                          const struct ana_sym_frame *f);

/* Node n's page (n < nr_stacks), made on first use with its nodes'
 * parents read from the trace; NULL when out of memory. */
struct node_page *ana_stacks_page_make(struct ana_stacks *s, uint32_t n);
static inline struct node_page *ana_stacks_page(struct ana_stacks *s, uint32_t n)
{
    struct node_page *p = s->pages[n >> ANA_STACKS_PAGE_BITS];

    return p ? p : ana_stacks_page_make(s, n);
}

/* What the address of node n (of image) reads as, read as kind, from the
 * symbolizer; a return address's reading is kept as the node's. Returns 0
 * or -errno. */
int ana_stacks_read_node(struct ana_stacks *s, uint32_t n, uint32_t image,
                         enum ana_sym_addr_kind kind, struct addr_read *out);

/* What a walk writes: the frames (s->walked), or one string id per frame
 * (s->ids), its function or its place. */
enum ana_walk_out { ANA_WALK_FUNCTIONS, ANA_WALK_PLACES, ANA_WALK_FRAMES };

/* The cleaned frames of stack (1..nr_stacks - 1), leaf first: its
 * addresses as the symbolizer's ana_sym_stack() reads them
 * (ana_sym_clean_next), each address's frames from its node. Returns the
 * number of frames or -errno. */
int ana_stacks_walk(struct ana_stacks *s, uint32_t stack, enum ana_walk_out out);

void ana_stacks_keys_release(struct ana_stacks *s);

/* The slot of entry i (0-based) in an index of cap slots. */
typedef uint32_t ana_stacks_slot_fn(const struct ana_stacks *s, uint32_t i, uint32_t cap);

/* Room for one more entry in an open-addressing index of n entries (slots
 * hold entry + 1, 0 empty; load under a half): when full, the index
 * doubles (from 1024) and every entry is placed again at slot_of's slot.
 * The strings' index and the row keys' use it. Returns 0 or -ENOMEM. */
int ana_stacks_index_room(const struct ana_stacks *s, uint32_t **index, uint32_t *cap, uint32_t n,
                          ana_stacks_slot_fn *slot_of);

#endif
