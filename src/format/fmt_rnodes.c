/* SPDX-License-Identifier: MIT */
/* The reader's stack nodes: kept in pages of FMT_NODE_PAGE ids, decoded
 * when the trace is opened or, with FMT_OPEN_STACKS_LATER, when they are
 * first asked for, and then forgotten image by image when the caller says
 * it needs an image's stacks no more (fmt_reader_forget_image). A replay
 * of a build of a thousand processes then holds the stack trees of the
 * processes running, not of every process the build ran (docs/format.md,
 * "Known limits"). The records are decoded in id order either way: a
 * STACK_CODES node's address is coded against lists that every node
 * before it updated. A node's image alone needs no address: the image
 * table (fmt_reader_stack_image) reads it from the parent distances and
 * roots, so that a reader of the chunk summaries (leaks --index) can group
 * stacks by image without decoding them, and let each image go once its
 * last node is decoded. */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "format/fmt_reader_internal.h"
#include "memscribe/trace.h"
#include "util/util_array.h"
#include "util/util_search.h"

/* Room for the pages of ids up to id: the live counts grow first, from a
 * copy of the table's capacity, to the same size, so that nr_npages never
 * counts more than both hold. Returns 0 or -ENOMEM. */
static int reserve_pages(struct fmt_reader *r, uint32_t id)
{
    size_t need = (size_t)(id >> FMT_NODE_PAGE_BITS) + 1;
    uint32_t live_cap = r->nr_npages;

    if (UTIL_ARRAY_RESERVE_ZERO(r->npage_live, live_cap, need, 16) ||
        UTIL_ARRAY_RESERVE_ZERO(r->npages, r->nr_npages, need, 16))
        return -ENOMEM;
    return 0;
}

struct fmt_rnode *fmt_rnode_new(struct fmt_reader *r)
{
    uint32_t id = r->nr_decoded + 1, p = id >> FMT_NODE_PAGE_BITS;

    if (id == UINT32_MAX || reserve_pages(r, id))
        return NULL;
    if (!r->npages[p]) {
        struct fmt_rnode *page = calloc(FMT_NODE_PAGE, sizeof(*page));
        if (!page)
            return NULL;
        /* A page made again after its nodes were forgotten (the last
         * one, not full then): those stay forgotten. */
        for (uint32_t k = p ? 0 : 1; (p << FMT_NODE_PAGE_BITS) + k < id; k++)
            page[k].image_limit = FMT_NODE_FORGOTTEN;
        r->npages[p] = page;
    }
    struct fmt_rnode *n = &r->npages[p][id & (FMT_NODE_PAGE - 1)];
    memset(n, 0, sizeof(*n));
    return n;
}

/* Forget node id (decoded): its page goes with the last of its nodes, if
 * no node is to be decoded into it any more. */
static void forget_node(struct fmt_reader *r, uint32_t id)
{
    uint32_t p = id >> FMT_NODE_PAGE_BITS;
    struct fmt_rnode *n = &r->npages[p][id & (FMT_NODE_PAGE - 1)];

    if (n->image_limit == FMT_NODE_FORGOTTEN)
        return;
    n->image_limit = FMT_NODE_FORGOTTEN;
    if (--r->npage_live[p] == 0 && ((p + 1) << FMT_NODE_PAGE_BITS) <= r->nr_decoded + 1) {
        free(r->npages[p]);
        r->npages[p] = NULL;
    }
}

int fmt_rnode_done(struct fmt_reader *r, uint32_t image)
{
    uint32_t id = ++r->nr_decoded;
    const struct fmt_rnode *n = &r->npages[id >> FMT_NODE_PAGE_BITS][id & (FMT_NODE_PAGE - 1)];

    r->npage_live[id >> FMT_NODE_PAGE_BITS]++;
    r->last_addr = n->addr;
    if (!r->stacks_later || image >= r->nr_images)
        return 0;
    struct fmt_rimage *im = &r->images[image];
    if (im->forgotten) {
        forget_node(r, id); /* defined after its image was let go */
        return 0;
    }
    if (im->nr_runs && im->runs[im->nr_runs - 1].first + im->runs[im->nr_runs - 1].n == id) {
        im->runs[im->nr_runs - 1].n++;
        return 0;
    }
    if (UTIL_ARRAY_RESERVE(im->runs, im->cap_runs, (size_t)im->nr_runs + 1, 8))
        return -ENOMEM;
    im->runs[im->nr_runs++] = (struct fmt_rrun){id, 1};
    return 0;
}

int fmt_rnodes_locate(struct fmt_reader *r, uint32_t type, const uint8_t *body, uint64_t len,
                      uint64_t off)
{
    struct fmt_cur b;
    uint64_t streams = 0, head = len;

    fmt_cur_init(&b, body, len);
    uint64_t first = fmt_cur_varint(&b);
    uint64_t n = fmt_cur_varint(&b);
    if (type == FMT_DEF_STACK_CODES) {
        for (int k = 0; k < 6; k++) {
            uint64_t l = fmt_cur_varint(&b);
            head = k ? head : l;
            streams += l;
        }
        if (!b.bad && streams != fmt_cur_left(&b))
            b.bad = 1;
    } else {
        head = fmt_cur_left(&b) / 2;
    }
    /* The checks of the decoding (fmt_rdefs_stacks) that need no node. */
    if (b.bad || first != (uint64_t)r->nr_nodes + 1 || n > head || n > UINT32_MAX - 1 - r->nr_nodes)
        return fmt_rerr(r, -EPROTO, off, "bad stack record (first id %llu, %llu nodes)",
                        (unsigned long long)first, (unsigned long long)n);
    if (UTIL_ARRAY_RESERVE(r->srecs, r->cap_srecs, (size_t)r->nr_srecs + 1, 64))
        return fmt_rerr(r, -ENOMEM, off, "out of memory");
    r->srecs[r->nr_srecs++] = (struct fmt_srec){
        .defs_off = off, .pos = (uint32_t)(body - r->raw.data), .len = (uint32_t)len, .type = type};
    r->nr_nodes += (uint32_t)n;
    return 0;
}

/* The body of stack record sr, its DEFS block read into r->sraw (kept for
 * the next records of the same block). r->raw is left alone: it may hold
 * a chunk being decoded, or a summary being read (fmt_reader_chunk_delta,
 * whose callback may ask a stack's image). NULL with *rc set on failure. */
static const uint8_t *srec_body(struct fmt_reader *r, const struct fmt_srec *sr, int *rc)
{
    *rc = 0;
    if (r->sraw_off != sr->defs_off || !r->sraw.len) {
        struct fmt_buf raw = r->raw;
        struct fmt_block_hdr h;
        r->raw = r->sraw;
        *rc = fmt_rblock_load(r, sr->defs_off, &h);
        r->sraw = r->raw;
        r->raw = raw;
        r->sraw_off = *rc ? 0 : sr->defs_off;
        if (*rc)
            return NULL;
    }
    if ((uint64_t)sr->pos + sr->len > r->sraw.len) {
        *rc = fmt_rerr(r, -EPROTO, sr->defs_off, "stack record past its block");
        return NULL;
    }
    return r->sraw.data + sr->pos;
}

/* Decode the next stack record left for later. */
static int decode_next(struct fmt_reader *r)
{
    const struct fmt_srec *sr = &r->srecs[r->next_srec];
    int rc = 0;

    if (!r->loaded && !r->sraw.cap) {
        /* No chunk is being decoded: r->raw's room holds the block, and
         * no second buffer is made (fmt_reader_load_stacks gives it back). */
        r->sraw = r->raw;
        r->sraw.len = 0;
        r->raw = (struct fmt_buf){0};
    }
    const uint8_t *body = srec_body(r, sr, &rc);
    if (!body)
        return rc;
    if ((rc = fmt_rdefs_stacks(r, sr->type, body, sr->len, sr->defs_off)))
        return rc;
    r->next_srec++;
    return 0;
}

/* Decode the records left for later up to node id (or all there are). */
static int decode_upto(struct fmt_reader *r, uint32_t id)
{
    while (r->nr_decoded < id && r->next_srec < r->nr_srecs) {
        int rc = decode_next(r);
        if (rc)
            return rc;
    }
    return 0;
}

int fmt_rnodes_need(struct fmt_reader *r, uint32_t id)
{
    if (!id || id > r->nr_nodes)
        return -EINVAL;
    int rc = decode_upto(r, id);
    if (rc)
        return rc;
    if (!fmt_rnode_get(r, id))
        return id <= r->nr_decoded ? fmt_rerr(r, -ESTALE, 0,
                                              "stack %u: its process's stacks "
                                              "were let go",
                                              id)
                                   : -EINVAL;
    return 0;
}

int fmt_reader_load_stacks(struct fmt_reader *r)
{
    int rc = r->nr_nodes ? fmt_rnodes_need(r, r->nr_nodes) : 0;

    /* The larger buffer stays the reader's (the one decode_next took from
     * r->raw before any chunk), as an open that decodes at once keeps the
     * DEFS block it read last: freeing a large one raises glibc's mmap
     * threshold (it follows the largest mapped block freed), and what is
     * allocated after it then comes from the heap, where it fragments (1.5
     * MB more peak RSS for bench_deep's DHAT export, 8 MB for its massif
     * export). */
    if (r->sraw.cap > r->raw.cap) {
        struct fmt_buf t = r->raw;
        r->raw = r->sraw;
        r->sraw = t;
    }
    fmt_buf_free(&r->sraw);
    return rc == -ESTALE ? 0 : rc;
}

/* The image of node id, made before the one being read, from the image
 * table so far: nearly always in its last run, a parent being defined a
 * few nodes before its child. */
static uint32_t table_image(const struct fmt_reader *r, uint32_t id)
{
    const struct fmt_rimgrun *last = &r->imgruns[r->nr_imgruns - 1];

    if (last->first <= id)
        return last->image;
    size_t k = util_search_above(r->imgruns, r->nr_imgruns, sizeof(*r->imgruns),
                                 offsetof(struct fmt_rimgrun, first), id);
    return r->imgruns[k - 1].image; /* k >= 1: the first run starts at node 1 */
}

/* Node id is image's: into the table. Returns 0 or -ENOMEM. */
static int table_add(struct fmt_reader *r, uint32_t id, uint32_t image)
{
    if (image < r->nr_images)
        r->images[image].last_node = id;
    if (r->nr_imgruns && r->imgruns[r->nr_imgruns - 1].image == image)
        return 0;
    if (UTIL_ARRAY_RESERVE(r->imgruns, r->cap_imgruns, (size_t)r->nr_imgruns + 1, 256))
        return -ENOMEM;
    r->imgruns[r->nr_imgruns++] = (struct fmt_rimgrun){id, image};
    return 0;
}

/* The cursors of a stack record's parent distances (head) and roots (root:
 * image, address), the record's first id and count (docs/format-encoding.md,
 * "Stacks"): a STACK_CODES record has them in streams of their own; a
 * STACKS record in one run, where head is root and the other fields of
 * each node are skipped by the caller. */
static void record_cursors(const struct fmt_srec *sr, const uint8_t *body, struct fmt_cur *head,
                           struct fmt_cur *root, uint64_t *first, uint64_t *n)
{
    fmt_cur_init(head, body, sr->len);
    *first = fmt_cur_varint(head);
    *n = fmt_cur_varint(head);
    if (sr->type != FMT_DEF_STACK_CODES) {
        *root = *head;
        return;
    }
    enum { HEAD, NEAR, FAR, LIT, ROOT, LIMIT, NR };
    uint64_t len[NR];
    const uint8_t *at[NR];
    for (int k = 0; k < NR; k++)
        len[k] = fmt_cur_varint(head);
    for (int k = 0; k < NR; k++)
        at[k] = fmt_cur_bytes(head, len[k]);
    bool bad = head->bad;
    fmt_cur_init(root, at[ROOT], at[ROOT] ? len[ROOT] : 0);
    fmt_cur_init(head, at[HEAD], at[HEAD] ? len[HEAD] : 0);
    head->bad = root->bad = bad;
}

/* The images of a stack record's nodes, which follow node *id: from their
 * parent distances and roots, the addresses not decoded. */
static int table_record(struct fmt_reader *r, const struct fmt_srec *sr, const uint8_t *body,
                        uint32_t *id)
{
    bool codes = sr->type == FMT_DEF_STACK_CODES;
    struct fmt_cur head, root;
    uint64_t first, n;

    record_cursors(sr, body, &head, &root, &first, &n);
    struct fmt_cur *roots = codes ? &root : &head;
    bool bad = head.bad || first != (uint64_t)*id + 1 || n > UINT32_MAX - 1 - *id;
    for (uint64_t i = 0; i < n && !bad; i++) {
        uint32_t node = *id + 1, image;
        uint64_t v = fmt_cur_varint(&head), dist = v >> 1;
        if (dist == 0) {
            image = fmt_cur_u32(roots);
            fmt_cur_varint(roots); /* its address */
        } else if (dist < node) {
            image = table_image(r, node - (uint32_t)dist);
            if (!codes)
                fmt_cur_varint(&head); /* its address, from its parent's */
        } else {
            bad = true; /* a parent that is not before it */
            break;
        }
        if (!codes && (v & 1))
            fmt_cur_varint(&head); /* its limit */
        if ((bad = head.bad || roots->bad || image >= FMT_MAX_IMAGES))
            break;
        if (table_add(r, node, image))
            return fmt_rerr(r, -ENOMEM, sr->defs_off, "out of memory");
        *id = node;
    }
    if (bad || *id != first - 1 + n)
        return fmt_rerr(r, -EPROTO, sr->defs_off, "bad stack node %u", *id + 1);
    return 0;
}

/* The image table, from every stack record. */
static int table_make(struct fmt_reader *r)
{
    uint32_t id = 0;
    int rc = 0;

    for (uint32_t k = 0; k < r->nr_srecs && !rc; k++) {
        const uint8_t *body = srec_body(r, &r->srecs[k], &rc);
        if (body)
            rc = table_record(r, &r->srecs[k], body, &id);
    }
    if (rc) {
        free(r->imgruns);
        r->imgruns = NULL;
        r->nr_imgruns = r->cap_imgruns = 0;
    }
    r->imgruns_made = rc ? rc : 1;
    return rc;
}

int fmt_reader_stack_image(struct fmt_reader *r, uint32_t id, uint32_t *image)
{
    const struct fmt_rnode *n = fmt_rnode_get(r, id);
    int rc;

    if (n) {
        *image = FMT_RNODE_IMAGE(n);
        return 0;
    }
    if (!id || id > r->nr_nodes || !r->stacks_later)
        return -EINVAL;
    if (r->imgruns_made < 0)
        return r->imgruns_made;
    if (!r->imgruns_made && (rc = table_make(r)))
        return rc;
    *image = table_image(r, id);
    return 0;
}

int fmt_reader_forget_image(struct fmt_reader *r, uint32_t image)
{
    if (!r->stacks_later || image >= r->nr_images)
        return 0;
    /* The image's nodes are decoded first: nothing later can need one of
     * them as a parent (a parent is of its child's image), and a
     * STACK_CODES node cannot be decoded without its parent's address.
     * The image table says where its last one is; without it, every node
     * defined up to the chunk being read (a stack is defined with the
     * chunk of its first event). With no chunk being read that is every
     * node of the trace: the table is made then (a command that lets the
     * processes ended before a moment go before it reads from there). */
    struct fmt_rimage *im = &r->images[image];
    bool reading = r->loaded && r->cur_chunk < r->nr_chunks;
    int rc;
    if (!r->imgruns_made && !reading && (rc = table_make(r)))
        return rc;
    if (r->imgruns_made > 0) {
        rc = decode_upto(r, im->last_node);
    } else {
        uint64_t upto = reading ? r->chunks[r->cur_chunk].defs_offset : UINT64_MAX;
        for (rc = 0; !rc && r->next_srec < r->nr_srecs && r->srecs[r->next_srec].defs_off <= upto;)
            rc = decode_next(r);
    }
    if (rc)
        return rc;
    for (uint32_t k = 0; k < im->nr_runs; k++)
        for (uint32_t i = 0; i < im->runs[k].n; i++)
            forget_node(r, im->runs[k].first + i);
    free(im->runs);
    im->runs = NULL;
    im->nr_runs = im->cap_runs = 0;
    im->forgotten = 1;
    return 0;
}

void fmt_rnodes_free(struct fmt_reader *r)
{
    for (uint32_t p = 0; p < r->nr_npages; p++)
        free(r->npages[p]);
    free(r->npages);
    free(r->npage_live);
    free(r->srecs);
    free(r->imgruns);
    fmt_buf_free(&r->sraw);
    for (uint32_t i = 0; i < r->nr_images; i++)
        free(r->images[i].runs);
}
