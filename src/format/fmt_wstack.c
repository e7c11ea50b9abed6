/* SPDX-License-Identifier: MIT */
/* Prefix-tree interning of stacks: a hash of (parent, address, image) to
 * node id, and the node encoding of docs/format.md ("STACKS record"). */
#include "format/fmt_wstack_internal.h"

#include <errno.h>
#include <stdlib.h>

#define WSTACK_MIN_HASH 4096

static inline uint64_t wstack_hash(uint32_t parent, uint64_t addr, uint32_t image)
{
    uint64_t h = addr ^ ((uint64_t)parent << 32) ^ ((uint64_t)image * 0xff51afd7ed558ccdull);

    h *= 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 31);
}

int fmt_wstack_init(struct fmt_wstack *s)
{
    s->hash = calloc(WSTACK_MIN_HASH, sizeof(*s->hash));
    s->nodes = malloc(1024 * sizeof(*s->nodes));
    if (!s->hash || !s->nodes) {
        free(s->hash);
        free(s->nodes);
        return -ENOMEM;
    }
    s->hash_mask = WSTACK_MIN_HASH - 1;
    s->cap_nodes = 1024;
    s->nr_nodes = 0;
    s->nodes[0] = (struct fmt_wnode){0, 0, 0};
    s->first_pending = 1;
    s->nr_pending = 0;
    return 0;
}

void fmt_wstack_destroy(struct fmt_wstack *s)
{
    free(s->hash);
    free(s->nodes);
    fmt_buf_free(&s->pending);
}

static int wstack_rehash(struct fmt_wstack *s)
{
    uint64_t cap = (s->hash_mask + 1) * 2;
    uint32_t *h = calloc(cap, sizeof(*h));

    if (!h)
        return -ENOMEM;
    for (uint32_t id = 1; id <= s->nr_nodes; id++) {
        const struct fmt_wnode *n = &s->nodes[id];
        uint64_t i = wstack_hash(n->parent, n->addr, n->image) & (cap - 1);
        while (h[i])
            i = (i + 1) & (cap - 1);
        h[i] = id;
    }
    free(s->hash);
    s->hash = h;
    s->hash_mask = cap - 1;
    return 0;
}

/* Find or add the child of parent with addr. */
static int wstack_child(struct fmt_wstack *s, uint32_t parent, uint64_t addr, uint32_t image,
                        uint32_t *id)
{
    uint64_t i = wstack_hash(parent, addr, image) & s->hash_mask;

    for (; s->hash[i]; i = (i + 1) & s->hash_mask) {
        const struct fmt_wnode *n = &s->nodes[s->hash[i]];
        if (n->addr == addr && n->parent == parent && n->image == image) {
            *id = s->hash[i];
            return 0;
        }
    }
    if (s->nr_nodes == UINT32_MAX - 1)
        return -ENOMEM;
    if (s->nr_nodes + 1 >= s->cap_nodes) {
        struct fmt_wnode *v = realloc(s->nodes, (size_t)s->cap_nodes * 2 * sizeof(*v));
        if (!v)
            return -ENOMEM;
        s->nodes = v;
        s->cap_nodes *= 2;
    }
    int rc = fmt_buf_reserve(&s->pending, 3 * FMT_VARINT_MAX);
    if (rc)
        return rc;
    uint32_t nid = ++s->nr_nodes;
    s->nodes[nid] = (struct fmt_wnode){addr, parent, image};
    s->hash[i] = nid;
    /* Encoding: distance to the parent (0: a root, then its image), then
     * the address as a difference to the parent's (recursion repeats
     * return addresses, so this is often 0). */
    if (parent) {
        fmt_buf_put_varint(&s->pending, nid - parent);
        fmt_buf_put_varint(&s->pending, fmt_zigzag((int64_t)(addr - s->nodes[parent].addr)));
    } else {
        fmt_buf_put_varint(&s->pending, 0);
        fmt_buf_put_varint(&s->pending, image);
        fmt_buf_put_varint(&s->pending, addr);
    }
    s->nr_pending++;
    *id = nid;
    if ((uint64_t)s->nr_nodes * 2 > s->hash_mask + 1)
        return wstack_rehash(s);
    return 0;
}

int fmt_wstack_intern(struct fmt_wstack *s, uint32_t image, const uint64_t *frames,
                      uint32_t nr_frames, uint32_t *id)
{
    uint32_t node = 0;
    int rc;

    if (!nr_frames)
        return wstack_child(s, 0, 0, image, id);
    /* Walk from the outermost frame to the leaf. */
    for (uint32_t k = nr_frames; k-- > 0;) {
        rc = wstack_child(s, node, frames[k], image, &node);
        if (rc)
            return rc;
    }
    *id = node;
    return 0;
}
