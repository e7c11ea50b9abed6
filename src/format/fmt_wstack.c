/* SPDX-License-Identifier: MIT */
/* Prefix-tree interning of stacks: a hash of (parent, address, image) to
 * node id, window nodes for stacks cut at the depth limit, and the node
 * encoding of docs/format.md ("Stacks"). */
#include "format/fmt_wstack_internal.h"

#include "format/fmt_layout_internal.h"

#include <errno.h>
#include <stdlib.h>

#include "util/util_array.h"

#define WSTACK_MIN_HASH 4096

static inline uint64_t wstack_hash(uint32_t parent, uint64_t addr, uint32_t image)
{
    uint64_t h = addr ^ ((uint64_t)parent << 32) ^ ((uint64_t)image * 0xff51afd7ed558ccdull);

    h *= 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 31);
}

int fmt_wstack_init(struct fmt_wstack *s, uint32_t depth_limit)
{
    s->hash = calloc(WSTACK_MIN_HASH, sizeof(*s->hash));
    s->nodes = malloc(1024 * sizeof(*s->nodes));
    s->win = calloc(FMT_WSTACK_WINDOW_SLOTS, sizeof(*s->win));
    s->code = calloc(1, sizeof(*s->code));
    if (!s->hash || !s->nodes || !s->win || !s->code) {
        free(s->hash);
        free(s->nodes);
        free(s->win);
        free(s->code);
        return -ENOMEM;
    }
    for (int i = 0; i < FMT_STK_NR_STREAMS; i++)
        s->pending[i] = (struct fmt_buf){0};
    s->depth_limit = depth_limit >= 2 && depth_limit <= FMT_STACK_MAX_LIMIT ? depth_limit : 0;
    s->hash_mask = WSTACK_MIN_HASH - 1;
    s->cap_nodes = 1024;
    s->nr_nodes = 0;
    s->nodes[0] = (struct fmt_wnode){0, 0, 0};
    s->first_pending = 1;
    s->nr_pending = 0;
    s->nr_encoded = 0;
    s->head_off = 0;
    return 0;
}

void fmt_wstack_destroy(struct fmt_wstack *s)
{
    free(s->hash);
    free(s->nodes);
    free(s->win);
    free(s->code);
    free(s->limits);
    for (int i = 0; i < FMT_STK_NR_STREAMS; i++)
        fmt_buf_free(&s->pending[i]);
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

int fmt_wstack_encode(struct fmt_wstack *s)
{
    size_t n = s->nr_pending - s->nr_encoded;
    int rc = 0;

    if (!n)
        return 0; /* every node made writes its head first: data is set past here */
    for (int k = FMT_STK_NEAR; k <= FMT_STK_ROOT && !rc; k++)
        rc = fmt_buf_reserve(&s->pending[k],
                             (k == FMT_STK_NEAR || k == FMT_STK_FAR ? 1 : 2 * FMT_VARINT_MAX) * n);
    if (rc)
        return rc;
    struct fmt_cur head;
    fmt_cur_init(&head, s->pending[FMT_STK_HEAD].data + s->head_off,
                 s->pending[FMT_STK_HEAD].len - s->head_off);
    for (uint32_t id = s->first_pending + s->nr_encoded; id < s->first_pending + s->nr_pending;
         id++) {
        const struct fmt_wnode *node = &s->nodes[id];
        uint32_t l = (uint32_t)fmt_cur_varint(&head) & 1;
        if (!node->parent) {
            fmt_buf_put_varint(&s->pending[FMT_STK_ROOT], node->image);
            fmt_buf_put_varint(&s->pending[FMT_STK_ROOT], node->addr);
            continue;
        }
        uint64_t pa = s->nodes[node->parent].addr;
        uint64_t prev = s->nodes[id - 1].addr; /* nodes[0] is all zero */
        struct fmt_stkcode_at at;
        fmt_stkcode_at(s->code, pa, prev, l, &at);
        uint32_t code = fmt_stkcode_find(&at, node->addr);
        fmt_buf_put_u8(&s->pending[id - node->parent == 1 ? FMT_STK_NEAR : FMT_STK_FAR],
                       (uint8_t)code);
        if (!code)
            fmt_buf_put_varint(&s->pending[FMT_STK_LIT], fmt_zigzag((int64_t)(node->addr - pa)));
        fmt_stkcode_update(s->code, &at, node->addr);
    }
    s->head_off = (size_t)(head.p - s->pending[FMT_STK_HEAD].data);
    s->nr_encoded = s->nr_pending;
    return 0;
}

/* Find or add the child of parent with addr; a new node created for a
 * window gets limit (0: none). */
static int wstack_child(struct fmt_wstack *s, uint32_t parent, uint64_t addr, uint32_t image,
                        uint32_t limit, uint32_t *id)
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
    int rc = fmt_buf_reserve(&s->pending[FMT_STK_HEAD], FMT_VARINT_MAX);
    rc = rc ?: fmt_buf_reserve(&s->pending[FMT_STK_LIMIT], FMT_VARINT_MAX);
    if (rc)
        return rc;
    uint32_t nid = ++s->nr_nodes;
    s->nodes[nid] = (struct fmt_wnode){addr, parent, image};
    s->hash[i] = nid;
    /* The head and the limit now; the address codes when the DEFS block
     * is written (fmt_wstack_encode), in one pass over the new nodes. */
    fmt_buf_put_varint(&s->pending[FMT_STK_HEAD],
                       (uint64_t)(parent ? nid - parent : 0) << 1 | (limit != 0));
    if (limit)
        fmt_buf_put_varint(&s->pending[FMT_STK_LIMIT], limit);
    s->nr_pending++;
    if (limit) {
        if (UTIL_ARRAY_RESERVE(s->limits, s->cap_limits, (size_t)s->nr_limits + 1, 16))
            return -ENOMEM;
        s->limits[s->nr_limits++] = (uint64_t)nid << 32 | limit;
    }
    *id = nid;
    if ((uint64_t)s->nr_nodes * 2 > s->hash_mask + 1)
        return wstack_rehash(s);
    return 0;
}

/* hash[k] = hash of frames[k..end-1] and the image, for k = 0..end-1:
 * computed from the outermost frame in, so one pass gives every suffix. */
static void suffix_hashes(const uint64_t *frames, uint32_t end, uint32_t image, uint64_t *hash)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ image;

    for (uint32_t k = end; k-- > 0;) {
        h = (h ^ frames[k]) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
        hash[k] = h | 1;
    }
}

static inline struct fmt_wwin *win_slot(struct fmt_wstack *s, uint64_t h)
{
    return &s->win[(h ^ (h >> 29)) & (FMT_WSTACK_WINDOW_SLOTS - 1)];
}

/* Does node id's chain start with frames[0..n-1]? */
static int chain_starts_with(const struct fmt_wstack *s, uint32_t id, const uint64_t *frames,
                             uint32_t n)
{
    for (uint32_t i = 0; i < n; i++, id = s->nodes[id].parent)
        if (!id || s->nodes[id].addr != frames[i])
            return 0;
    return 1;
}

/* A full-depth stack whose frames after its first k are the start of an
 * earlier window's chain: k new nodes at most, the leaf with a limit.
 * Returns 0 (found, *id set), 1 (not found) or -errno. */
static int wstack_window(struct fmt_wstack *s, uint32_t image, const uint64_t *frames, uint32_t n,
                         const uint64_t *hash, uint32_t *id)
{
    for (uint32_t k = 1; k <= FMT_WSTACK_WINDOW_SHIFT && k < n; k++) {
        const struct fmt_wwin *e = win_slot(s, hash[k]);
        if (e->hash != hash[k] || e->len != n - k || s->nodes[e->id].image != image ||
            !chain_starts_with(s, e->id, frames + k, n - k))
            continue;
        uint32_t node = e->id;
        for (uint32_t i = k; i-- > 0;) {
            int rc = wstack_child(s, node, frames[i], image, i ? 0 : n, &node);
            if (rc)
                return rc;
        }
        *id = node;
        return 0;
    }
    return 1;
}

int fmt_wstack_intern(struct fmt_wstack *s, uint32_t image, const uint64_t *frames,
                      uint32_t nr_frames, uint32_t *id)
{
    uint64_t hash[FMT_STACK_MAX_LIMIT];
    uint32_t node = 0;
    int rc = 1;

    if (!nr_frames)
        return wstack_child(s, 0, 0, image, 0, id);
    int full = s->depth_limit && nr_frames == s->depth_limit;
    if (full) {
        suffix_hashes(frames, nr_frames, image, hash);
        rc = wstack_window(s, image, frames, nr_frames, hash, &node);
        if (rc < 0)
            return rc;
    }
    if (rc) {
        /* Walk from the outermost frame to the leaf. */
        for (uint32_t k = nr_frames; k-- > 0;) {
            rc = wstack_child(s, node, frames[k], image, 0, &node);
            if (rc)
                return rc;
        }
    }
    *id = node;
    if (full) {
        /* The next window's frames after its first k are this stack's
         * frames j = k-1 on, minus the outermost: remember the nodes at
         * depth j under the hash of frames[j..n-2]. */
        suffix_hashes(frames, nr_frames - 1, image, hash);
        uint32_t n = node;
        for (uint32_t j = 0; j < FMT_WSTACK_WINDOW_SHIFT && j + 1 < nr_frames && n;
             j++, n = s->nodes[n].parent)
            *win_slot(s, hash[j]) = (struct fmt_wwin){hash[j], n, nr_frames - 1 - j};
    }
    return 0;
}

int fmt_wstack_copy(struct fmt_wstack *dst, const struct fmt_wstack *src)
{
    uint32_t k = 0;

    while (k < src->nr_limits && (uint32_t)(src->limits[k] >> 32) <= dst->nr_nodes)
        k++;
    for (uint32_t id = dst->nr_nodes + 1; id <= src->nr_nodes; id++) {
        const struct fmt_wnode *n = &src->nodes[id];
        uint32_t limit = 0, got;

        if (k < src->nr_limits && (uint32_t)(src->limits[k] >> 32) == id)
            limit = (uint32_t)src->limits[k++];
        int rc = wstack_child(dst, n->parent, n->addr, n->image, limit, &got);
        if (rc)
            return rc;
        if (got != id)
            return -EINVAL;
    }
    return 0;
}
