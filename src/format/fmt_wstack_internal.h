/* SPDX-License-Identifier: MIT */
/* Stack interning for the writer: stacks form a prefix tree per image
 * (node = parent + one return address), so deep or recursive stacks share
 * their outer frames and a stack id is just a node id. New nodes are
 * encoded into a pending buffer that goes out in the next DEFS block. */
#ifndef FMT_WSTACK_INTERNAL_H
#define FMT_WSTACK_INTERNAL_H

#include <stdint.h>

#include "format/fmt_buf_internal.h"

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
    struct fmt_buf pending; /* encoded nodes not yet written */
    uint32_t first_pending; /* id of the first of them */
    uint32_t nr_pending;
};

int fmt_wstack_init(struct fmt_wstack *s);
void fmt_wstack_destroy(struct fmt_wstack *s);

/* Intern frames (leaf first) of image; *id gets the leaf node. An empty
 * stack is the root node with address 0. Returns 0 or -ENOMEM. */
int fmt_wstack_intern(struct fmt_wstack *s, uint32_t image, const uint64_t *frames,
                      uint32_t nr_frames, uint32_t *id);

#endif
