/* SPDX-License-Identifier: MIT */
/* The reader's stack nodes: kept in pages of FMT_NODE_PAGE ids, decoded
 * when the trace is opened or, with FMT_OPEN_STACKS_LATER, when they are
 * first asked for, and then forgotten image by image when the caller says
 * it needs an image's stacks no more (fmt_reader_forget_image). A replay
 * of a build of a thousand processes then holds the stack trees of the
 * processes running, not of every process the build ran (docs/format.md,
 * "Known limits"). The records are decoded in id order either way: a
 * STACK_CODES node's address is coded against lists that every node
 * before it updated. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "format/fmt_reader_internal.h"
#include "memscribe/trace.h"
#include "util/util_array.h"

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
    if (r->sraw_off != sr->defs_off || !r->sraw.len) {
        /* Its block into sraw: r->raw may hold a chunk being decoded. */
        struct fmt_buf raw = r->raw;
        struct fmt_block_hdr h;
        r->raw = r->sraw;
        rc = fmt_rblock_load(r, sr->defs_off, &h);
        r->sraw = r->raw;
        r->raw = raw;
        if (rc)
            return rc;
        if ((uint64_t)sr->pos + sr->len > r->sraw.len)
            return fmt_rerr(r, -EPROTO, sr->defs_off, "stack record past its block");
        r->sraw_off = sr->defs_off;
    }
    if ((rc = fmt_rdefs_stacks(r, sr->type, r->sraw.data + sr->pos, sr->len, sr->defs_off)))
        return rc;
    r->next_srec++;
    return 0;
}

int fmt_rnodes_need(struct fmt_reader *r, uint32_t id)
{
    if (!id || id > r->nr_nodes)
        return -EINVAL;
    while (r->nr_decoded < id && r->next_srec < r->nr_srecs) {
        int rc = decode_next(r);
        if (rc)
            return rc;
    }
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

int fmt_reader_forget_image(struct fmt_reader *r, uint32_t image)
{
    if (!r->stacks_later || image >= r->nr_images)
        return 0;
    /* Every node the trace defined up to the chunk being read is decoded
     * first: the image's are among them (a stack is defined with the
     * chunk of its first event), and nothing later can need one of them
     * as a parent; a STACK_CODES node cannot be decoded without its
     * parent's address. */
    uint64_t upto =
        r->loaded && r->cur_chunk < r->nr_chunks ? r->chunks[r->cur_chunk].defs_offset : UINT64_MAX;
    while (r->next_srec < r->nr_srecs && r->srecs[r->next_srec].defs_off <= upto) {
        int rc = decode_next(r);
        if (rc)
            return rc;
    }
    struct fmt_rimage *im = &r->images[image];
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
    fmt_buf_free(&r->sraw);
    for (uint32_t i = 0; i < r->nr_images; i++)
        free(r->images[i].runs);
}
