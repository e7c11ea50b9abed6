/* SPDX-License-Identifier: MIT */
/* Stack interning for the writer: stacks form a prefix tree per image
 * (node = parent + one return address), so deep or recursive stacks share
 * their outer frames and a stack id is just a node id. New nodes are
 * encoded into a pending buffer that goes out in the next DEFS block.
 *
 * Stacks cut at the collector's depth limit need more: in deep recursion
 * consecutive stacks are windows of one long path shifted by a level, so
 * their outermost frames all differ and a plain prefix tree would add a
 * whole stack of nodes for each. Such a stack is interned as up to a few
 * nodes under a node of an earlier window (whose chain starts with this
 * stack's frames after its first k, k <= FMT_WSTACK_WINDOW_SHIFT), the leaf
 * getting a limit: the stack is the first `limit` frames of the chain
 * (docs/format-encoding.md, "Stacks"). A direct-mapped cache remembers recent
 * windows; a miss only costs size, never correctness. */
#ifndef FMT_WSTACK_INTERNAL_H
#define FMT_WSTACK_INTERNAL_H

#include <stdint.h>

#include "format/fmt_buf_internal.h"
#include "format/fmt_stkcode_internal.h"

/* The streams of a STACK_CODES record, in their order there
 * (docs/format-encoding.md, "Stacks"): each has uniform statistics, so zstd codes
 * each well where one interleaved stream would mix them. */
enum fmt_stk_stream {
    FMT_STK_HEAD,  /* varint 2 * parent distance + L, per node */
    FMT_STK_NEAR,  /* address code byte of nodes at parent distance 1 */
    FMT_STK_FAR,   /* address code byte of the other non-root nodes */
    FMT_STK_LIT,   /* zigzag(address - parent's) for code 0 */
    FMT_STK_ROOT,  /* image, address of roots */
    FMT_STK_LIMIT, /* the limit of nodes with L */
    FMT_STK_NR_STREAMS
};

struct fmt_wnode {
    uint64_t addr;
    uint32_t parent; /* 0: a root */
    uint32_t image;
};

struct fmt_wstack {
    struct fmt_wnode *nodes; /* by id; [0] unused */
    uint32_t nr_nodes;       /* highest id */
    uint32_t cap_nodes;
    uint32_t *hash; /* node ids, 0 = empty */
    uint64_t hash_mask;
    struct fmt_buf pending[FMT_STK_NR_STREAMS]; /* nodes not yet written, encoded */
    uint32_t first_pending;                     /* id of the first of them */
    uint32_t nr_pending;
    /* Of those, the first nr_encoded have their address codes in pending[]
     * already, their limit bits read up to head_off of the HEAD stream. */
    uint32_t nr_encoded;
    size_t head_off;
    uint32_t depth_limit;     /* the collector's depth; 0: no window interning */
    struct fmt_wwin *win;     /* FMT_WSTACK_WINDOW_SLOTS, direct-mapped by hash */
    struct fmt_stkcode *code; /* candidate lists of the address coding */
    /* The window nodes' limits, id << 32 | limit in id order: few (deep
     * recursion), kept so that fmt_wstack_copy makes the same nodes. */
    uint64_t *limits;
    uint32_t nr_limits, cap_limits;
};

#define FMT_WSTACK_WINDOW_SHIFT 4 /* frames a recursion level may span */
#define FMT_WSTACK_WINDOW_SLOTS (1u << 18)

/* A node whose chain starts with the frames that hash to hash. */
struct fmt_wwin {
    uint64_t hash;
    uint32_t id;  /* 0 = empty */
    uint32_t len; /* how many frames the hash covers */
};

/* depth_limit: the depth at which the collector cuts stacks (0: unknown). */
int fmt_wstack_init(struct fmt_wstack *s, uint32_t depth_limit);
void fmt_wstack_destroy(struct fmt_wstack *s);

/* Intern frames (leaf first) of image; *id gets the leaf node. An empty
 * stack is the root node with address 0. Returns 0 or -ENOMEM. */
int fmt_wstack_intern(struct fmt_wstack *s, uint32_t image, const uint64_t *frames,
                      uint32_t nr_frames, uint32_t *id);

/* Make in dst the nodes of src it lacks, with src's ids: dst must have
 * been made by copying src alone (a --keep-last segment's writer names
 * stacks by the whole run's ids, fmt_wcarry.c). Returns 0, -ENOMEM, or
 * -EINVAL when dst holds other nodes. */
int fmt_wstack_copy(struct fmt_wstack *dst, const struct fmt_wstack *src);

/* Encode the address codes of the pending nodes not encoded yet (the head
 * and limit streams are written as nodes are made): before their DEFS
 * record is written, and may be called earlier too. Returns 0 or
 * -ENOMEM. */
int fmt_wstack_encode(struct fmt_wstack *s);

#endif
