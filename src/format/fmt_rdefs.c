/* SPDX-License-Identifier: MIT */
/* Parsing META and DEFS blocks into the reader's tables. Every count and
 * index is checked against what the file has defined so far, so a corrupt
 * record gives an error, never a wild access. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "format/fmt_reader_internal.h"

#define GROW(r, arr, nr, cap, need, off)                                                           \
    do {                                                                                           \
        if ((need) > (cap)) {                                                                      \
            uint32_t c_ = (cap) ? (cap) : 16;                                                      \
            while (c_ < (need))                                                                    \
                c_ *= 2;                                                                           \
            void *p_ = realloc((arr), (size_t)c_ * sizeof(*(arr)));                                \
            if (!p_)                                                                               \
                return fmt_rerr((r), -ENOMEM, (off), "out of memory");                             \
            (arr) = p_;                                                                            \
            memset((arr) + (cap), 0, (size_t)(c_ - (cap)) * sizeof(*(arr)));                       \
            (cap) = c_;                                                                            \
        }                                                                                          \
    } while (0)

/* A NUL-terminated copy of a length-prefixed string. */
static char *take_string(struct fmt_cur *c, uint32_t *len)
{
    uint64_t n = fmt_cur_varint(c);
    const uint8_t *p;

    if (n > FMT_MAX_STRING || !(p = fmt_cur_bytes(c, n))) {
        c->bad = 1;
        return NULL;
    }
    char *s = malloc(n + 1);
    if (!s) {
        c->bad = 1;
        return NULL;
    }
    memcpy(s, p, n);
    s[n] = 0;
    *len = (uint32_t)n;
    return s;
}

int fmt_rdefs_meta(struct fmt_reader *r, uint64_t off)
{
    struct fmt_cur c;

    fmt_cur_init(&c, r->raw.data, r->raw.len);
    r->info.wine_dll_dirs_len = 0; /* the list is the block's, should it be read again */
    while (fmt_cur_left(&c) && !c.bad) {
        uint64_t type = fmt_cur_varint(&c);
        uint64_t len = fmt_cur_varint(&c);
        const uint8_t *body = fmt_cur_bytes(&c, len);
        if (c.bad)
            break;
        struct fmt_cur b;
        fmt_cur_init(&b, body, len);
        uint32_t n;
        switch (type) {
        case FMT_META_COMMAND:
        case FMT_META_HOSTNAME:
        case FMT_META_ONLY: {
            if (len > FMT_MAX_STRING)
                return fmt_rerr(r, -EPROTO, off, "metadata string too long");
            char *s = malloc(len + 1);
            if (!s)
                return fmt_rerr(r, -ENOMEM, off, "out of memory");
            memcpy(s, body, len);
            s[len] = 0;
            if (type == FMT_META_COMMAND) {
                free(r->command);
                r->command = s;
                r->info.command_len = (uint32_t)len;
            } else if (type == FMT_META_HOSTNAME) {
                free(r->hostname);
                r->hostname = s;
            } else {
                free(r->only);
                r->only = s;
            }
            break;
        }
        case FMT_META_STACK_DEPTH:
            n = fmt_cur_u32(&b);
            if (b.bad)
                return fmt_rerr(r, -EPROTO, off, "bad stack depth in metadata");
            r->info.stack_depth = n;
            break;
        case FMT_META_SAMPLE_BYTES:
            r->info.sample_bytes = fmt_cur_varint(&b);
            if (b.bad || !r->info.sample_bytes)
                return fmt_rerr(r, -EPROTO, off, "bad sampling rate in metadata");
            break;
        case FMT_META_WINE_PREFIX:
        case FMT_META_WINE_DLL_DIR: {
            /* a path: no NUL inside, as the folders are kept NUL-separated */
            if (len > FMT_MAX_STRING || len == 0 || memchr(body, 0, len))
                return fmt_rerr(r, -EPROTO, off, "bad Wine path in metadata");
            char **dst = type == FMT_META_WINE_PREFIX ? &r->wine_prefix : &r->wine_dll_dirs;
            size_t have = type == FMT_META_WINE_PREFIX ? 0 : r->info.wine_dll_dirs_len;
            char *s = realloc(*dst, have + len + 1);
            if (!s)
                return fmt_rerr(r, -ENOMEM, off, "out of memory");
            memcpy(s + have, body, len);
            s[have + len] = 0;
            *dst = s;
            if (type == FMT_META_WINE_DLL_DIR)
                r->info.wine_dll_dirs_len = (uint32_t)(have + len + 1);
            break;
        }
        case FMT_META_ATTACHED:
            r->info.attached_pid = fmt_cur_u32(&b);
            if (b.bad || !r->info.attached_pid)
                return fmt_rerr(r, -EPROTO, off, "bad attached pid in metadata");
            break;
        case FMT_META_KEEP_LAST: /* 1.9 */
            r->info.keep_last_ns = fmt_cur_varint(&b);
            if (b.bad || !r->info.keep_last_ns)
                return fmt_rerr(r, -EPROTO, off, "bad --keep-last duration in metadata");
            break;
        case FMT_META_SEGMENT: /* 1.9: a --keep-last segment */
            r->info.segment_from_ns = fmt_cur_varint(&b);
            r->info.segment_nr = fmt_cur_u32(&b);
            if (b.bad || !r->info.segment_nr || !r->segment)
                return fmt_rerr(r, -EPROTO, off, "bad segment in metadata");
            break;
        case FMT_META_AGGREGATE: /* 1.8: aggregated from the start */
            r->info.aggregate_ns = fmt_cur_varint(&b);
            r->agg_meta = 1;
            if (b.bad || !r->info.aggregate_ns || !r->agg)
                return fmt_rerr(r, -EPROTO, off, "bad aggregate period in metadata");
            break;
        }
    }
    if (c.bad)
        return fmt_rerr(r, -EPROTO, off, "bad metadata record");
    if (r->segment && !r->info.segment_nr)
        return fmt_rerr(r, -EPROTO, off, "a --keep-last segment without its SEGMENT record");
    return 0;
}

int fmt_rdefs_image(struct fmt_reader *r, uint32_t image, uint64_t off)
{
    /* Images are numbered densely as they appear; a writer names them a
     * little out of order at most, so a far jump (which would make the
     * table huge) is corruption. A --keep-last segment names the whole
     * run's images, those still running when it began. */
    if (image >= FMT_MAX_IMAGES || (image >= r->nr_images + FMT_MAX_IMAGE_JUMP && !r->segment))
        return fmt_rerr(r, -EPROTO, off, "impossible image index %u", image);
    if (image < r->nr_images)
        return 0;
    GROW(r, r->images, r->nr_images, r->cap_images, image + 1, off);
    /* A REACH record may come before its image (a corrupt order): the
     * new images' last ones. */
    for (uint32_t i = 0; i < r->nr_reach; i++)
        if (r->reach[i].ri.image >= r->nr_images && r->reach[i].ri.image <= image)
            r->images[r->reach[i].ri.image].last_reach = i + 1;
    r->nr_images = image + 1;
    return 0;
}

static int def_stacks(struct fmt_reader *r, struct fmt_cur *b, uint64_t off)
{
    uint64_t first = fmt_cur_varint(b);
    uint64_t n = fmt_cur_varint(b);

    if (b->bad || first != (uint64_t)r->nr_decoded + 1 || n > fmt_cur_left(b) / 2 ||
        n > UINT32_MAX - 1 - r->nr_decoded)
        return fmt_rerr(r, -EPROTO, off, "bad stack record (first id %llu, %llu nodes)",
                        (unsigned long long)first, (unsigned long long)n);
    for (uint64_t i = 0; i < n; i++) {
        uint32_t id = r->nr_decoded + 1;
        uint64_t v = fmt_cur_varint(b);
        uint64_t dist = v >> 1;
        struct fmt_rnode *node = fmt_rnode_new(r);
        uint32_t image;
        if (!node)
            return fmt_rerr(r, -ENOMEM, off, "out of memory");
        if (dist == 0) {
            image = fmt_cur_u32(b);
            node->addr = fmt_cur_varint(b);
            node->parent = 0;
            if (image >= FMT_MAX_IMAGES)
                b->bad = 1;
        } else {
            const struct fmt_rnode *par = dist < id ? fmt_rnode_get(r, id - (uint32_t)dist) : NULL;
            if (!par) {
                b->bad = 1;
                break;
            }
            node->parent = id - (uint32_t)dist;
            image = FMT_RNODE_IMAGE(par);
            node->addr = par->addr + (uint64_t)fmt_unzigzag(fmt_cur_varint(b));
        }
        uint64_t limit = v & 1 ? fmt_cur_varint(b) : 0;
        if ((v & 1) && (limit == 0 || limit > FMT_STACK_MAX_LIMIT))
            b->bad = 1;
        if (b->bad)
            break;
        node->image_limit = image | (uint32_t)limit << 20;
        if (fmt_rnode_done(r, image))
            return fmt_rerr(r, -ENOMEM, off, "out of memory");
    }
    if (b->bad)
        return fmt_rerr(r, -EPROTO, off, "bad stack node %u", r->nr_decoded + 1);
    return 0;
}

/* The streams of a STACK_CODES record (docs/format-encoding.md, "Stacks"). */
enum { SC_HEAD, SC_NEAR, SC_FAR, SC_LIT, SC_ROOT, SC_LIMIT, SC_NR };

/* One non-root node of a STACK_CODES record under parent par: its
 * address from its code (or its literal). Returns 0 or 1 (bad). */
static int code_node(struct fmt_reader *r, struct fmt_cur *s, struct fmt_rnode *node,
                     const struct fmt_rnode *par, uint64_t dist, uint32_t l)
{
    struct fmt_cur *cs = &s[dist == 1 ? SC_NEAR : SC_FAR];
    uint32_t code = fmt_cur_u8(cs);
    struct fmt_stkcode_at at;
    int found = 1;

    fmt_stkcode_at(r->stkcode, par->addr, r->last_addr, l, &at);
    if (code)
        found = fmt_stkcode_get(&at, code, &node->addr);
    else
        node->addr = par->addr + (uint64_t)fmt_unzigzag(fmt_cur_varint(&s[SC_LIT]));
    if (cs->bad || s[SC_LIT].bad || !found)
        return 1;
    fmt_stkcode_update(r->stkcode, &at, node->addr);
    return 0;
}

static int def_stack_codes(struct fmt_reader *r, struct fmt_cur *b, uint64_t off)
{
    uint64_t first = fmt_cur_varint(b);
    uint64_t n = fmt_cur_varint(b);
    struct fmt_cur s[SC_NR];
    uint64_t len[SC_NR];

    for (int k = 0; k < SC_NR; k++)
        len[k] = fmt_cur_varint(b);
    for (int k = 0; k < SC_NR && !b->bad; k++) {
        const uint8_t *p = fmt_cur_bytes(b, len[k]);
        fmt_cur_init(&s[k], p, p ? len[k] : 0);
    }
    /* Every node takes at least a byte of the head stream. */
    if (b->bad || first != (uint64_t)r->nr_decoded + 1 || n > len[SC_HEAD] ||
        n > UINT32_MAX - 1 - r->nr_decoded)
        return fmt_rerr(r, -EPROTO, off, "bad stack record (first id %llu, %llu nodes)",
                        (unsigned long long)first, (unsigned long long)n);
    if (!r->stkcode && !(r->stkcode = calloc(1, sizeof(*r->stkcode))))
        return fmt_rerr(r, -ENOMEM, off, "out of memory");
    int bad = 0;
    for (uint64_t i = 0; i < n && !bad; i++) {
        uint32_t id = r->nr_decoded + 1;
        uint64_t v = fmt_cur_varint(&s[SC_HEAD]);
        uint64_t dist = v >> 1;
        uint32_t l = (uint32_t)(v & 1);
        struct fmt_rnode *node = fmt_rnode_new(r);
        uint32_t image = 0;
        if (!node)
            return fmt_rerr(r, -ENOMEM, off, "out of memory");
        if (dist == 0) {
            image = fmt_cur_u32(&s[SC_ROOT]);
            node->addr = fmt_cur_varint(&s[SC_ROOT]);
            node->parent = 0;
            bad = s[SC_ROOT].bad || image >= FMT_MAX_IMAGES;
        } else {
            /* A parent of an image let go is as bad as none. */
            const struct fmt_rnode *par = dist < id ? fmt_rnode_get(r, id - (uint32_t)dist) : NULL;
            if (!par) {
                bad = 1;
                break;
            }
            node->parent = id - (uint32_t)dist;
            image = FMT_RNODE_IMAGE(par);
            bad = code_node(r, s, node, par, dist, l);
        }
        uint64_t limit = l ? fmt_cur_varint(&s[SC_LIMIT]) : 0;
        if (s[SC_HEAD].bad || s[SC_LIMIT].bad || (l && (limit == 0 || limit > FMT_STACK_MAX_LIMIT)))
            bad = 1;
        if (bad)
            break;
        node->image_limit = image | (uint32_t)limit << 20;
        if (fmt_rnode_done(r, image))
            return fmt_rerr(r, -ENOMEM, off, "out of memory");
    }
    /* Every stream used up exactly: a mismatch means the counts are wrong. */
    for (int k = 0; k < SC_NR && !bad; k++)
        bad = fmt_cur_left(&s[k]) != 0;
    if (bad)
        return fmt_rerr(r, -EPROTO, off, "bad stack node %u", r->nr_decoded + 1);
    return 0;
}

int fmt_rdefs_stacks(struct fmt_reader *r, uint32_t type, const uint8_t *body, uint64_t len,
                     uint64_t off)
{
    struct fmt_cur b;

    fmt_cur_init(&b, body, len);
    return type == FMT_DEF_STACKS ? def_stacks(r, &b, off) : def_stack_codes(r, &b, off);
}

/* List context id in the thread table. Recorders before this version
 * gave the events they made for a forked or exec'd image (its start, RSS,
 * exit) a context of their own, thread index 0, beside the one its main
 * thread's own events carry: the same thread, tid == pid, listed twice
 * ("3033: (no name), 3033: cc"). A later context of an image's main
 * thread takes the earlier one's row, the earlier start kept. */
static int def_context_list(struct fmt_reader *r, uint32_t id)
{
    struct fmt_thread_info *t = &r->ctxs[id - 1].t;
    struct fmt_rimage *im = &r->images[t->image];

    if (t->tid == t->pid && im->main_ctx) {
        struct fmt_rctx *old = &r->ctxs[im->main_ctx - 1];

        r->threads[im->main_row] = id;
        if (old->t.start_ns < t->start_ns)
            t->start_ns = old->t.start_ns;
        if (!t->name && old->t.name) {
            t->name = old->t.name;
            t->name_len = old->t.name_len;
        }
        old->listed = id;
        im->main_ctx = id;
        return 0;
    }
    if (t->tid == t->pid) {
        im->main_ctx = id;
        im->main_row = r->nr_threads;
    }
    r->threads[r->nr_threads++] = id;
    return 0;
}

/* The listed context of context id (valid): a chain as long as the
 * contexts of one image's main thread. */
static struct fmt_rctx *ctx_listed(struct fmt_reader *r, uint32_t id)
{
    while (r->ctxs[id - 1].listed != id)
        id = r->ctxs[id - 1].listed;
    return &r->ctxs[id - 1];
}

static int def_context(struct fmt_reader *r, struct fmt_cur *b, uint64_t off)
{
    uint32_t id = fmt_cur_u32(b);
    struct fmt_thread_info t = {0};

    t.image = fmt_cur_u32(b);
    t.thread = fmt_cur_u32(b);
    t.pid = fmt_cur_u32(b);
    t.tid = fmt_cur_u32(b);
    t.start_ns = fmt_cur_varint(b);
    if (b->bad || id != r->nr_ctxs + 1)
        return fmt_rerr(r, -EPROTO, off, "bad thread context record %u", id);
    int rc = fmt_rdefs_image(r, t.image, off);
    if (rc)
        return rc;
    GROW(r, r->ctxs, r->nr_ctxs, r->cap_ctxs, r->nr_ctxs + 1, off);
    GROW(r, r->threads, r->nr_threads, r->cap_threads, r->nr_threads + 1, off);
    r->ctxs[r->nr_ctxs].t = t;
    r->ctxs[r->nr_ctxs].listed = id;
    r->nr_ctxs++;
    rc = def_context_list(r, id);
    if (rc)
        return rc;
    /* An image named before (or without) its PROCESS_START: its threads
     * tell at least its pid and when it was first seen. */
    struct fmt_image_info *im = &r->images[t.image].i;
    if (!im->has_start && !im->pid) {
        im->pid = t.pid;
        im->start_ns = t.start_ns;
    }
    return 0;
}

static int def_image(struct fmt_reader *r, struct fmt_cur *b, uint64_t off)
{
    uint32_t image = fmt_cur_u32(b);
    struct fmt_image_info i = {0};
    char *exe = NULL, *argv = NULL;

    i.has_start = 1;
    i.pid = fmt_cur_u32(b);
    i.ppid = fmt_cur_u32(b);
    i.how = fmt_cur_u32(b);
    i.start_ns = fmt_cur_varint(b);
    if (!b->bad)
        exe = take_string(b, &i.exe_len);
    if (!b->bad)
        argv = take_string(b, &i.argv_len);
    int rc = b->bad ? fmt_rerr(r, -EPROTO, off, "bad process image record")
                    : fmt_rdefs_image(r, image, off);
    if (rc) {
        free(exe);
        free(argv);
        return rc;
    }
    struct fmt_rimage *im = &r->images[image];
    free(im->exe);
    free(im->argv);
    im->exe = exe;
    im->argv = argv;
    i.exe = i.exe_len ? exe : NULL;
    i.argv = argv;
    /* Keep an end that was recorded (an image can be restarted only by a
     * broken writer, but keep what is known). */
    i.ended = im->i.ended;
    i.end_ns = im->i.end_ns;
    i.exit_status = im->i.exit_status;
    i.status_known = im->i.status_known;
    im->i = i;
    return 0;
}

static int def_image_end(struct fmt_reader *r, struct fmt_cur *b, uint64_t off)
{
    uint32_t image = fmt_cur_u32(b);
    uint64_t ts = fmt_cur_varint(b);
    uint64_t status = fmt_cur_varint(b);
    uint64_t known = fmt_cur_varint(b);

    if (b->bad || image >= r->nr_images)
        return fmt_rerr(r, -EPROTO, off, "bad image end record (image %u)", image);
    struct fmt_image_info *i = &r->images[image].i;
    i->ended = 1;
    i->end_ns = ts;
    i->exit_status = status;
    i->status_known = known != 0;
    return 0;
}

static int def_thread_name(struct fmt_reader *r, struct fmt_cur *b, uint64_t off)
{
    uint32_t ctx = fmt_cur_u32(b);
    uint32_t len = 0;

    (void)fmt_cur_varint(b); /* when it was named */
    char *name = b->bad ? NULL : take_string(b, &len);
    if (b->bad || !ctx || ctx > r->nr_ctxs) {
        free(name);
        return fmt_rerr(r, -EPROTO, off, "bad thread name record (context %u)", ctx);
    }
    struct fmt_rctx *c = ctx_listed(r, ctx);
    free(c->name);
    c->name = name;
    c->t.name = name;
    c->t.name_len = len;
    return 0;
}

static int def_thread_end(struct fmt_reader *r, struct fmt_cur *b, uint64_t off)
{
    uint32_t ctx = fmt_cur_u32(b);
    uint64_t ts = fmt_cur_varint(b);

    if (b->bad || !ctx || ctx > r->nr_ctxs)
        return fmt_rerr(r, -EPROTO, off, "bad thread end record (context %u)", ctx);
    ctx_listed(r, ctx)->t.ended = 1;
    ctx_listed(r, ctx)->t.end_ns = ts;
    return 0;
}

static int def_pool(struct fmt_reader *r, struct fmt_cur *b, uint64_t off)
{
    struct fmt_pool_info pi = {0};
    char *name = NULL;

    GROW(r, r->pools_tab, r->nr_pools, r->cap_pools, r->nr_pools + 1, off);
    pi.image = fmt_cur_u32(b);
    pi.handle = fmt_cur_varint(b);
    pi.create_ns = fmt_cur_varint(b);
    if (!b->bad)
        name = take_string(b, &pi.name_len);
    if (b->bad || !r->pools) {
        free(name);
        return fmt_rerr(r, -EPROTO, off, "bad pool record%s", b->bad ? "" : " (no POOLS bit)");
    }
    pi.name = name;
    r->pools_tab[r->nr_pools].pi = pi;
    r->pools_tab[r->nr_pools++].name = name;
    return 0;
}

/* A REACH record (1.6): image, time, status, reason, threads, root and
 * skipped bytes, then n blocks, each varint((serial - previous) << 3 |
 * class), serials increasing from 0. */
static int def_reach(struct fmt_reader *r, struct fmt_cur *b, uint64_t off)
{
    struct fmt_rreach *e;
    uint64_t n, serial = 0;

    GROW(r, r->reach, r->nr_reach, r->cap_reach, r->nr_reach + 1, off);
    e = &r->reach[r->nr_reach];
    memset(e, 0, sizeof(*e));
    e->ri.image = fmt_cur_u32(b);
    e->ri.ts_ns = fmt_cur_varint(b);
    e->ri.status = fmt_cur_u32(b);
    if (!b->bad)
        e->reason = take_string(b, &e->ri.reason_len);
    e->ri.nr_threads = fmt_cur_u32(b);
    e->ri.root_bytes = fmt_cur_varint(b);
    e->ri.skipped_bytes = fmt_cur_varint(b);
    n = fmt_cur_varint(b);
    /* Each block takes a byte at least: n is bounded by the record. */
    if (b->bad || e->ri.image >= FMT_MAX_IMAGES || e->ri.status > FMT_REACH_UNAVAILABLE ||
        n > fmt_cur_left(b))
        goto bad;
    if (n && (!(e->serials = malloc(n * sizeof(*e->serials))) || !(e->classes = malloc(n)))) {
        free(e->reason), free(e->serials);
        return fmt_rerr(r, -ENOMEM, off, "out of memory");
    }
    for (uint64_t i = 0; i < n; i++) {
        uint64_t v = fmt_cur_varint(b);
        unsigned cls = (unsigned)(v & 7);

        if (b->bad || (v >> 3) == 0 || cls == FMT_REACH_UNKNOWN || cls >= FMT_NR_REACH ||
            serial + (v >> 3) < serial)
            goto bad;
        serial += v >> 3;
        e->serials[i] = serial;
        e->classes[i] = (uint8_t)cls;
    }
    e->ri.nr_blocks = n;
    e->ri.reason = e->reason ? e->reason : "";
    r->nr_reach++;
    if (e->ri.image < r->nr_images)
        r->images[e->ri.image].last_reach = r->nr_reach;
    return 0;
bad:
    free(e->reason), free(e->serials), free(e->classes);
    memset(e, 0, sizeof(*e));
    return fmt_rerr(r, -EPROTO, off, "bad reach record");
}

/* The AGGREGATE record (1.8): the FMT_EV_AGGREGATE event's time and
 * period, once a trace, and the META's when it has one (at time 0). */
static int def_aggregate(struct fmt_reader *r, struct fmt_cur *b, uint64_t off)
{
    uint64_t ts = fmt_cur_varint(b), period = fmt_cur_varint(b);

    if (b->bad || !r->agg || r->agg_defs || !period ||
        (r->agg_meta && (ts || period != r->info.aggregate_ns)))
        return fmt_rerr(r, -EPROTO, off, "bad aggregate record");
    r->agg_defs = 1;
    r->info.aggregate_ns = period;
    r->info.aggregate_from_ns = ts;
    return 0;
}

static int def_module(struct fmt_reader *r, struct fmt_cur *b, uint64_t off)
{
    struct fmt_module_info mi = {0};
    char *path = NULL;

    mi.id = fmt_cur_u32(b);
    mi.image = fmt_cur_u32(b);
    (void)fmt_cur_u32(b); /* the context that loaded it */
    mi.load_ns = fmt_cur_varint(b);
    mi.m.base = fmt_cur_varint(b);
    if (!b->bad)
        path = take_string(b, &mi.m.path_len);
    uint64_t bid = fmt_cur_varint(b);
    const uint8_t *p = bid <= FMT_MAX_BUILD_ID ? fmt_cur_bytes(b, bid) : NULL;
    if (p) {
        memcpy(mi.m.build_id, p, bid);
        mi.m.build_id_len = (uint32_t)bid;
    }
    uint64_t nseg = fmt_cur_varint(b);
    if (nseg > FMT_MAX_SEGMENTS || !p)
        b->bad = 1;
    for (uint64_t i = 0; i < nseg && !b->bad; i++) {
        mi.m.segments[i].vaddr = fmt_cur_varint(b);
        mi.m.segments[i].memsz = fmt_cur_varint(b);
        mi.m.segments[i].offset = fmt_cur_varint(b);
        mi.m.segments[i].flags = fmt_cur_u32(b);
    }
    mi.m.nr_segments = (uint32_t)nseg;
    if (b->bad || mi.id != r->nr_mods + 1) {
        free(path);
        return fmt_rerr(r, -EPROTO, off, "bad module record %u", mi.id);
    }
    int rc = fmt_rdefs_image(r, mi.image, off);
    if (rc) {
        free(path);
        return rc;
    }
    GROW(r, r->mods, r->nr_mods, r->cap_mods, r->nr_mods + 1, off);
    struct fmt_rmodule *m = &r->mods[r->nr_mods++];
    m->path = path;
    m->mi = mi;
    m->mi.m.path = path;
    return 0;
}

static int def_module_end(struct fmt_reader *r, struct fmt_cur *b, uint64_t off)
{
    uint32_t id = fmt_cur_u32(b);
    uint64_t ts = fmt_cur_varint(b);

    if (b->bad || !id || id > r->nr_mods)
        return fmt_rerr(r, -EPROTO, off, "bad module unload record (module %u)", id);
    r->mods[id - 1].mi.unloaded = 1;
    r->mods[id - 1].mi.unload_ns = ts;
    return 0;
}

/* The fixed part of a SUMMARY record; the deltas follow it in *b. */
static int summary_head(struct fmt_reader *r, struct fmt_cur *b, uint64_t off,
                        struct fmt_chunk_info *ci, uint64_t *chunk_no, uint64_t *nr_deltas)
{
    *chunk_no = fmt_cur_varint(b);
    ci->first_ts_ns = fmt_cur_varint(b);
    uint64_t span = fmt_cur_varint(b);
    ci->last_ts_ns = ci->first_ts_ns + span;
    ci->first_serial = fmt_cur_varint(b);
    uint64_t nev = fmt_cur_varint(b);
    ci->nr_serials = fmt_cur_varint(b);
    ci->nr_heap_allocs = fmt_cur_varint(b);
    ci->nr_dropped = fmt_cur_varint(b);
    *nr_deltas = fmt_cur_varint(b);
    if (b->bad || nev == 0 || nev > FMT_MAX_CHUNK_EVENTS || ci->nr_serials > nev ||
        ci->nr_heap_allocs > ci->nr_serials || ci->last_ts_ns < ci->first_ts_ns ||
        *nr_deltas > fmt_cur_left(b) / 3)
        return fmt_rerr(r, -EPROTO, off, "bad chunk summary");
    ci->nr_events = (uint32_t)nev;
    return 0;
}

/* Walk the deltas of a summary, checking stack ids against limit. */
static int summary_deltas(struct fmt_reader *r, struct fmt_cur *b, uint64_t off, uint64_t n,
                          uint32_t limit, fmt_stack_live_fn *fn, void *arg)
{
    uint64_t stack = 0;

    for (uint64_t i = 0; i < n; i++) {
        uint64_t d = fmt_cur_varint(b);
        stack += d;
        int64_t bytes = fmt_unzigzag(fmt_cur_varint(b));
        int64_t blocks = fmt_unzigzag(fmt_cur_varint(b));
        if (b->bad || (i && !d) || stack > limit)
            return fmt_rerr(r, -EPROTO, off, "bad live delta %llu in chunk summary",
                            (unsigned long long)i);
        if (fn)
            fn(arg, (uint32_t)stack, bytes, blocks);
    }
    return 0; /* bytes after the deltas: fields of a later version */
}

static int def_summary(struct fmt_reader *r, struct fmt_cur *b, uint64_t off)
{
    struct fmt_chunk_info ci = {0};
    uint64_t k, n;
    int rc = summary_head(r, b, off, &ci, &k, &n);

    if (rc)
        return rc;
    if (k != r->nr_chunks || r->nr_chunks >= r->nr_seen_chunks)
        return fmt_rerr(r, -EPROTO, off, "summary of chunk %llu where chunk %u was expected",
                        (unsigned long long)k, r->nr_chunks);
    uint64_t expect = 1;
    if (k) {
        const struct fmt_chunk_info *prev = &r->chunks[k - 1].c;
        expect = prev->first_serial + prev->nr_serials;
    }
    if (ci.first_serial != expect)
        return fmt_rerr(r, -EPROTO, off, "chunk %llu starts at serial %llu, expected %llu",
                        (unsigned long long)k, (unsigned long long)ci.first_serial,
                        (unsigned long long)expect);
    if ((rc = summary_deltas(r, b, off, n, r->nr_nodes, NULL, NULL)))
        return rc;
    struct fmt_rchunk *c = &r->chunks[k];
    ci.offset = c->c.offset;
    c->c = ci;
    c->defs_offset = off;
    c->summarized = 1;
    r->nr_chunks++;
    return 0;
}

int fmt_rdefs_parse(struct fmt_reader *r, uint64_t off)
{
    struct fmt_cur c;
    int rc = 0;

    fmt_cur_init(&c, r->raw.data, r->raw.len);
    while (fmt_cur_left(&c) && !rc) {
        uint64_t type = fmt_cur_varint(&c);
        uint64_t len = fmt_cur_varint(&c);
        const uint8_t *body = fmt_cur_bytes(&c, len);
        if (c.bad)
            return fmt_rerr(r, -EPROTO, off, "bad definition record framing");
        struct fmt_cur b;
        fmt_cur_init(&b, body, len);
        switch (type) {
        case FMT_DEF_STACKS:
        case FMT_DEF_STACK_CODES:
            /* Decoded now, or located for later (FMT_OPEN_STACKS_LATER). */
            if (r->stacks_later)
                rc = fmt_rnodes_locate(r, (uint32_t)type, body, len, off);
            else if (!(rc = fmt_rdefs_stacks(r, (uint32_t)type, body, len, off)))
                r->nr_nodes = r->nr_decoded;
            break;
        case FMT_DEF_CONTEXT:
            rc = def_context(r, &b, off);
            break;
        case FMT_DEF_IMAGE:
            rc = def_image(r, &b, off);
            break;
        case FMT_DEF_IMAGE_END:
            rc = def_image_end(r, &b, off);
            break;
        case FMT_DEF_THREAD_NAME:
            rc = def_thread_name(r, &b, off);
            break;
        case FMT_DEF_THREAD_END:
            rc = def_thread_end(r, &b, off);
            break;
        case FMT_DEF_MODULE:
            rc = def_module(r, &b, off);
            break;
        case FMT_DEF_MODULE_END:
            rc = def_module_end(r, &b, off);
            break;
        case FMT_DEF_SUMMARY:
            rc = def_summary(r, &b, off);
            break;
        case FMT_DEF_POOL:
            rc = def_pool(r, &b, off);
            break;
        case FMT_DEF_REACH:
            rc = def_reach(r, &b, off);
            break;
        case FMT_DEF_AGGREGATE:
            rc = def_aggregate(r, &b, off);
            break;
        default:
            break; /* a record of a later version: skipped */
        }
    }
    return rc;
}

int fmt_rdefs_chunk_record(struct fmt_reader *r, uint32_t k, unsigned type, const char *what,
                           struct fmt_cur *out, uint64_t *off)
{
    struct fmt_block_hdr h;
    int rc;

    *off = r->chunks[k].defs_offset;
    if ((rc = fmt_rblock_load(r, *off, &h)))
        return rc;
    struct fmt_cur c;
    fmt_cur_init(&c, r->raw.data, r->raw.len);
    while (fmt_cur_left(&c)) {
        uint64_t t = fmt_cur_varint(&c);
        uint64_t len = fmt_cur_varint(&c);
        const uint8_t *body = fmt_cur_bytes(&c, len);
        if (c.bad)
            break;
        if (t != type)
            continue;
        struct fmt_cur b;
        fmt_cur_init(&b, body, len);
        uint64_t no = fmt_cur_varint(&b);
        if (!b.bad && no == k) {
            fmt_cur_init(out, body, len);
            return 0;
        }
    }
    return fmt_rerr(r, -EPROTO, *off, "%s of chunk %u not found", what, k);
}

int fmt_rdefs_chunk_delta(struct fmt_reader *r, uint32_t k, fmt_stack_live_fn *fn, void *arg)
{
    struct fmt_chunk_info ci;
    struct fmt_cur b;
    uint64_t off, no, n;
    int rc = fmt_rdefs_chunk_record(r, k, FMT_DEF_SUMMARY, "summary", &b, &off);

    if (rc || (rc = summary_head(r, &b, off, &ci, &no, &n)))
        return rc;
    return summary_deltas(r, &b, off, n, r->nr_nodes, fn, arg);
}
