/* SPDX-License-Identifier: MIT */
/* SQLite: the whole trace as tables (schema in docs/export.md, and in
 * SCHEMA below, which the docs quote). A heap block's row is inserted when
 * it ends (the free carries its size, stack, time and thread; only what
 * its allocation said is kept meanwhile), and the blocks live at the end
 * after the pass (one insert per block is twice as fast as an insert and
 * an update).
 * Mappings are inserted when made and updated when gone, with one row per
 * period a range spends reserved (PROT_NONE) or committed (accessible) in
 * mapping_states. Frames form a tree (parent = caller), so a stack is its
 * leaf frame. Everything is written in one transaction; memory grows with
 * stacks, frames and live mappings.
 *
 * On a process tree (ana_export_options.image_done) memory follows the
 * processes running: a model of sqlite's own tells it each image's end
 * (ana_model_options.retire), when its stacks are let go (each stack's
 * frames are written at its first use); a second later (an event of it
 * may come that late, as the stacks' let-go waits for) its live blocks,
 * final then, are inserted and its frames' keys dropped. Rows of tables
 * keyed by serial or id come in another order; their contents are the
 * same (sqlite3 .dump). */
#include <errno.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "analysis/core/ana_strtab.h"
#include "analysis/core/ana_text.h"
#include "analysis/export/ana_export_internal.h"
#include "analysis/export/ana_export_sqlite_win.h"
#include "analysis/model/ana_reach.h"
#include "analysis/vm/ana_vm_win.h"
#include "util/util_array.h"

#define SQL_PAGE 4096ull

static const char SCHEMA[] =
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value);\n"
    "CREATE TABLE processes(image INTEGER PRIMARY KEY, pid INTEGER, ppid INTEGER, how TEXT,\n"
    "  exe TEXT, argv TEXT, start_ns INTEGER, end_ns INTEGER, exit_status INTEGER);\n"
    "CREATE TABLE threads(thread INTEGER, image INTEGER, pid INTEGER, tid INTEGER,\n"
    "  name TEXT, start_ns INTEGER, end_ns INTEGER);\n"
    "CREATE TABLE modules(id INTEGER PRIMARY KEY, image INTEGER, path TEXT, base INTEGER,\n"
    "  build_id TEXT, load_ns INTEGER, unload_ns INTEGER);\n"
    "CREATE TABLE frames(id INTEGER PRIMARY KEY, parent INTEGER REFERENCES frames(id),\n"
    "  address INTEGER, module TEXT, function TEXT, file TEXT, line INTEGER, inlined INTEGER);\n"
    "CREATE TABLE stacks(id INTEGER PRIMARY KEY, image INTEGER,\n"
    "  frame INTEGER REFERENCES frames(id));\n"
    "CREATE TABLE allocations(serial INTEGER PRIMARY KEY, kind TEXT, image INTEGER,\n"
    "  address INTEGER, size INTEGER, stack INTEGER REFERENCES stacks(id),\n"
    "  alloc_ns INTEGER, alloc_thread INTEGER,\n"
    "  free_ns INTEGER, free_thread INTEGER, free_kind TEXT, temporary INTEGER,\n"
    "  leak_class TEXT);\n"
    "CREATE TABLE mappings(serial INTEGER PRIMARY KEY, kind TEXT, origin TEXT, image INTEGER,\n"
    "  address INTEGER, size INTEGER, prot INTEGER, flags INTEGER, fd INTEGER, offset INTEGER,\n"
    "  stack INTEGER REFERENCES stacks(id), thread INTEGER, map_ns INTEGER, unmap_ns INTEGER,\n"
    "  old_serial INTEGER);\n"
    "CREATE TABLE mapping_states(serial INTEGER REFERENCES mappings(serial), address INTEGER,\n"
    "  size INTEGER, state TEXT, prot INTEGER, start_ns INTEGER, end_ns INTEGER);\n";

static const char INDEXES[] = "CREATE INDEX threads_thread ON threads(image, thread);\n"
                              "CREATE INDEX allocations_stack ON allocations(stack);\n"
                              "CREATE INDEX allocations_alloc_ns ON allocations(alloc_ns);\n"
                              "CREATE INDEX allocations_free_ns ON allocations(free_ns);\n"
                              "CREATE INDEX frames_parent ON frames(parent);\n"
                              "CREATE INDEX mapping_states_serial ON mapping_states(serial);\n";

enum {
    ST_ALLOC,
    ST_FRAME,
    ST_STACK,
    ST_MAP,
    ST_UNMAP,
    ST_STATE,
    ST_THREAD,
    ST_MODULE,
    ST_PROCESS,
    ST_META,
    NR_ST
};

static const char *const STMTS[NR_ST] = {
    [ST_ALLOC] = "INSERT INTO allocations VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [ST_FRAME] = "INSERT INTO frames VALUES(?,?,?,?,?,?,?,?)",
    [ST_STACK] = "INSERT INTO stacks VALUES(?,?,?)",
    [ST_MAP] = "INSERT INTO mappings VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,NULL,?)",
    [ST_UNMAP] = "UPDATE mappings SET unmap_ns=? WHERE serial=?",
    [ST_STATE] = "INSERT INTO mapping_states VALUES(?,?,?,?,?,?,?)",
    [ST_THREAD] = "INSERT INTO threads VALUES(?,?,?,?,?,?,?)",
    [ST_MODULE] = "INSERT INTO modules VALUES(?,?,?,?,?,?,?)",
    [ST_PROCESS] = "INSERT INTO processes VALUES(?,?,?,?,?,?,?,?,?)",
    [ST_META] = "INSERT INTO meta VALUES(?,?)",
};

/* A live range of a mapping, in one state since since_ns. */
struct sq_range {
    uint64_t start, end; /* page-rounded */
    uint64_t serial;
    uint64_t since_ns;
    uint32_t image;
    uint32_t prot;
};

struct sq {
    struct fmt_reader *r;
    sqlite3 *db;
    sqlite3_stmt *st[NR_ST];
    struct ana_xsym *sym;
    /* By image: its frames' keys, "parent image addr k" -> index in ids
     * (the frame's id), dropped when the image's blocks go. */
    struct sq_frames {
        struct ana_strtab keys;
        uint32_t *ids;
        uint32_t cap_ids;
    } * frames;
    uint32_t nr_frames_of, nr_frames; /* images in frames; frames made */
    struct ana_xlive live;            /* the heap blocks not ended yet */
    uint8_t *stack_done;              /* bitmap by stack id */
    uint32_t nr_stacks;
    struct sq_range *ranges;
    uint32_t nr_ranges, cap_ranges;
    char *err; /* SQLite's message: the output failed (*output_failed) */
    size_t err_size;
    int *output_failed;
    int bind_err; /* a bind ran out of memory: the next run() fails */
    const struct ana_export_options *o;
    struct ana_sqw *win; /* a Windows trace's tables, else NULL */
    /* Streamed (on a tree): the model that tells images' ends, the images
     * ended whose blocks go next, those gone (a heap event of one now came
     * too late). */
    struct ana_model *model;
    struct ana_ended ended;
    uint8_t *spilled;
    size_t cap_spilled;
};

/* Bind helpers: values are bound by position from 1. */
static void bind_u64(sqlite3_stmt *s, int i, uint64_t v)
{
    sqlite3_bind_int64(s, i, (sqlite3_int64)v);
}

static void bind_text(sqlite3_stmt *s, int i, const char *t, int len)
{
    if (t)
        sqlite3_bind_text(s, i, t, len, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(s, i);
}

/* Bind a string from the trace (a name, a path; words: a NUL-separated
 * list such as argv, joined by spaces): escaped like every text output,
 * valid UTF-8 without control characters, since the program chose its
 * bytes (ana_text.h). len < 0: up to the NUL. */
static void bind_trace_text(struct sq *q, sqlite3_stmt *s, int i, const char *t, int len, int words)
{
    size_t n, raw = t ? len < 0 ? strlen(t) : (size_t)len : 0;
    char *out;

    if (!t) {
        sqlite3_bind_null(s, i);
        return;
    }
    n = words ? ana_text_escape_words(NULL, 0, t, raw) : ana_text_escape(NULL, 0, t, raw);
    if (n > INT32_MAX || !(out = malloc(n + 1))) {
        q->bind_err = -ENOMEM;
        sqlite3_bind_null(s, i);
        return;
    }
    if (words)
        ana_text_escape_words(out, n + 1, t, raw);
    else
        ana_text_escape(out, n + 1, t, raw);
    if (sqlite3_bind_text(s, i, out, (int)n, free) != SQLITE_OK)
        q->bind_err = -ENOMEM;
}

/* Run a bound statement and reset it. 0 or -EIO (the message in err). */
static int run(struct sq *q, int which)
{
    sqlite3_stmt *s = q->st[which];
    int rc;

    if (q->bind_err) {
        sqlite3_reset(s);
        sqlite3_clear_bindings(s);
        snprintf(q->err, q->err_size, "out of memory");
        return q->bind_err;
    }
    rc = sqlite3_step(s);

    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    if (rc == SQLITE_DONE)
        return 0;
    snprintf(q->err, q->err_size, "%s", sqlite3_errmsg(q->db));
    return rc == SQLITE_FULL ? -ENOSPC : -EIO;
}

static int exec(struct sq *q, const char *sql)
{
    char *msg = NULL;

    if (sqlite3_exec(q->db, sql, NULL, NULL, &msg) == SQLITE_OK)
        return 0;
    snprintf(q->err, q->err_size, "%s", msg ? msg : sqlite3_errmsg(q->db));
    int full = sqlite3_errcode(q->db) == SQLITE_FULL;
    sqlite3_free(msg);
    return full ? -ENOSPC : -EIO;
}

/* *idx: the id - 1 of image's frame of key, made (returns 1) if new;
 * else 0, or -ENOMEM. Ids count the frames of every image. */
static int frame_id(struct sq *q, uint32_t image, const char *key, uint32_t *idx)
{
    struct sq_frames *f;
    uint32_t k;
    int rc;

    if (UTIL_ARRAY_RESERVE_ZERO(q->frames, q->nr_frames_of, (size_t)image + 1, 16))
        return -ENOMEM;
    f = &q->frames[image];
    if ((rc = ana_strtab_intern(&f->keys, key, &k)) < 0)
        return rc;
    if (rc == 1) {
        if (UTIL_ARRAY_RESERVE(f->ids, f->cap_ids, (size_t)k + 1, 64))
            return -ENOMEM;
        f->ids[k] = q->nr_frames++;
    }
    *idx = f->ids[k];
    return rc;
}

/* Frames of a stack, root first, as a path in the frame tree; then the
 * stacks row pointing at its leaf. Done once per stack id. */
static int stack_row(struct sq *q, uint32_t id)
{
    const struct ana_sym_stack *st;
    uint32_t image, parent = 0;
    char key[96], buf[64];
    int rc;

    if (!id || id > q->nr_stacks || (q->stack_done[id / 8] & (1u << (id % 8))))
        return 0;
    q->stack_done[id / 8] |= (uint8_t)(1u << (id % 8));
    if ((rc = ana_xsym_stack(q->sym, id, &st, &image)))
        return rc;
    for (uint32_t i = st->nr_lines; i-- > 0;) {
        const struct ana_sym_frame *f = st->lines[i].frame;
        uint32_t idx;

        /* An inlined frame shares its address with the frames around it:
         * its place in the chain tells them apart. */
        snprintf(key, sizeof(key), "%x %x %" PRIx64 " %u %s", parent, image, f->addr,
                 st->lines[i].index, f->inlined ? "i" : "p");
        if ((rc = frame_id(q, image, key, &idx)) < 0)
            return rc;
        if (rc == 1) {
            sqlite3_stmt *s = q->st[ST_FRAME];
            bind_u64(s, 1, idx + 1);
            if (parent)
                bind_u64(s, 2, parent);
            bind_u64(s, 3, f->addr);
            bind_trace_text(q, s, 4, f->module, -1, 0);
            bind_trace_text(q, s, 5, ana_xsym_name(f, buf, sizeof(buf)), -1, 0);
            bind_trace_text(q, s, 6, f->file, -1, 0);
            if (f->line)
                bind_u64(s, 7, f->line);
            bind_u64(s, 8, f->inlined);
            if ((rc = run(q, ST_FRAME)))
                return rc;
        }
        parent = idx + 1;
    }
    bind_u64(q->st[ST_STACK], 1, id);
    bind_u64(q->st[ST_STACK], 2, image);
    if (parent)
        bind_u64(q->st[ST_STACK], 3, parent);
    return run(q, ST_STACK);
}

/* One allocations row; ended NULL for a block live at the end. */
static int block_row(struct sq *q, uint64_t serial, unsigned kind, uint32_t image, uint64_t addr,
                     uint64_t size, uint32_t stack, uint64_t ts, uint32_t thread,
                     const struct fmt_event *ended, bool temporary)
{
    sqlite3_stmt *s = q->st[ST_ALLOC];
    int rc;

    if ((rc = stack_row(q, stack)))
        return rc;
    bind_u64(s, 1, serial);
    bind_text(s, 2, fmt_kind_name(kind), -1);
    bind_u64(s, 3, image);
    bind_u64(s, 4, addr);
    bind_u64(s, 5, size);
    bind_u64(s, 6, stack);
    bind_u64(s, 7, ts);
    bind_u64(s, 8, thread);
    if (ended) {
        bind_u64(s, 9, ended->ts_ns);
        bind_u64(s, 10, ended->thread);
        bind_text(s, 11, fmt_kind_name(ended->kind), -1);
    }
    /* NULL in a sampled trace: not estimated (ana_sample.h). */
    if (ana_sample_has_temporary(fmt_reader_sample_bytes(q->r)))
        bind_u64(s, 12, temporary);
    /* A block live at the end: its class from the scan at exit (record
     * --reach; ana_reach.h), NULL where none classed it. */
    unsigned cls = ended ? FMT_REACH_UNKNOWN : ana_reach_class_of(q->r, image, serial, UINT64_MAX);
    if (cls != FMT_REACH_UNKNOWN)
        bind_text(s, 13, ana_reach_key(cls), -1);
    return run(q, ST_ALLOC);
}

static int heap_event(struct sq *q, const struct fmt_event *ev, const struct ana_step *x)
{
    uint32_t kind;
    int rc;

    if ((rc = ana_xlive_step(&q->live, ev, x, &kind)))
        return rc;
    if (x->ends && (rc = block_row(q, ev->ref, kind, ev->image,
                                   ev->kind == FMT_EV_FREE ? ev->addr : ev->old_addr, ev->ref_size,
                                   ev->ref_stack, ev->ref_ts_ns, ev->ref_thread, ev,
                                   x->temporary == ANA_TEMP_YES)))
        return rc;
    return x->starts ? stack_row(q, ev->stack) : 0;
}

/* The blocks live at the end: their rows from their allocations. */
static int live_row(void *arg, const struct fmt_event *ev)
{
    return block_row(arg, ev->serial, ev->kind, ev->image, ev->addr, ev->size, ev->stack, ev->ts_ns,
                     ev->thread, NULL, false);
}

/* ---- Mappings: live ranges, split by munmap and mprotect. */

static bool committed(uint32_t prot)
{
    return prot != PROT_NONE;
}

static int state_row(struct sq *q, const struct sq_range *g, uint64_t start, uint64_t end,
                     const uint64_t *end_ns)
{
    sqlite3_stmt *s = q->st[ST_STATE];

    bind_u64(s, 1, g->serial);
    bind_u64(s, 2, start);
    bind_u64(s, 3, end - start);
    bind_text(s, 4, committed(g->prot) ? "committed" : "reserved", -1);
    bind_u64(s, 5, g->prot);
    bind_u64(s, 6, g->since_ns);
    if (end_ns)
        bind_u64(s, 7, *end_ns);
    return run(q, ST_STATE);
}

static int range_add(struct sq *q, struct sq_range g)
{
    if (UTIL_ARRAY_RESERVE(q->ranges, q->cap_ranges, (size_t)q->nr_ranges + 1, 256))
        return -ENOMEM;
    q->ranges[q->nr_ranges++] = g;
    return 0;
}

static bool serial_live(const struct sq *q, uint64_t serial)
{
    for (uint32_t i = 0; i < q->nr_ranges; i++)
        if (q->ranges[i].serial == serial)
            return true;
    return false;
}

/* Apply an munmap (new_prot < 0) or an mprotect to [start, end) of image
 * at ts: the touched part of each range ends its state row; an mprotect
 * starts a new one. Ranges are split at the edges. */
static int ranges_change(struct sq *q, uint32_t image, uint64_t start, uint64_t end,
                         int64_t new_prot, uint64_t ts)
{
    int rc;

    for (uint32_t i = 0; i < q->nr_ranges; i++) {
        struct sq_range g = q->ranges[i];

        if (g.image != image || g.end <= start || g.start >= end)
            continue;
        if (new_prot >= 0 && (uint32_t)new_prot == g.prot)
            continue;
        uint64_t lo = g.start > start ? g.start : start, hi = g.end < end ? g.end : end;
        if ((rc = state_row(q, &g, lo, hi, &ts)))
            return rc;
        /* Keep the untouched sides; they carry on in their state. */
        q->ranges[i] = q->ranges[--q->nr_ranges];
        i--;
        if (g.start < lo) {
            struct sq_range left = g;
            left.end = lo;
            if ((rc = range_add(q, left)))
                return rc;
        }
        if (hi < g.end) {
            struct sq_range right = g;
            right.start = hi;
            if ((rc = range_add(q, right)))
                return rc;
        }
        if (new_prot >= 0) {
            struct sq_range mid = g;
            mid.start = lo;
            mid.end = hi;
            mid.prot = (uint32_t)new_prot;
            mid.since_ns = ts;
            if ((rc = range_add(q, mid)))
                return rc;
        } else if (!serial_live(q, g.serial)) {
            bind_u64(q->st[ST_UNMAP], 1, ts);
            bind_u64(q->st[ST_UNMAP], 2, g.serial);
            if ((rc = run(q, ST_UNMAP)))
                return rc;
        }
    }
    return 0;
}

static const char *origin_name(unsigned o)
{
    const char *name = fmt_origin_name(o);

    return name ? name : "unknown";
}

static uint64_t page_end(uint64_t addr, uint64_t size)
{
    uint64_t e = addr + size;

    return e < addr ? UINT64_MAX & ~(SQL_PAGE - 1) : (e + SQL_PAGE - 1) & ~(SQL_PAGE - 1);
}

/* kind: the row's kind, the event's own or (a Windows trace) the Windows
 * kind it stands for. */
static int map_row(struct sq *q, const struct fmt_event *ev, unsigned kind, uint32_t prot,
                   uint64_t old_serial)
{
    sqlite3_stmt *s = q->st[ST_MAP];
    int rc;

    if ((rc = stack_row(q, ev->stack)))
        return rc;
    bind_u64(s, 1, ev->serial);
    bind_text(s, 2, fmt_kind_name(kind), -1);
    bind_text(s, 3, origin_name(ev->origin), -1);
    bind_u64(s, 4, ev->image);
    bind_u64(s, 5, ev->addr);
    bind_u64(s, 6, ev->size);
    bind_u64(s, 7, prot);
    if (ev->kind == FMT_EV_MMAP) {
        bind_u64(s, 8, ev->arg[1]);
        sqlite3_bind_int64(s, 9, (int32_t)ev->arg[2]);
        bind_u64(s, 10, ev->arg[3]);
    } else {
        bind_u64(s, 8, ev->arg[1]);
    }
    bind_u64(s, 11, ev->stack);
    bind_u64(s, 12, ev->thread);
    bind_u64(s, 13, ev->ts_ns);
    if (old_serial)
        bind_u64(s, 14, old_serial);
    if ((rc = run(q, ST_MAP)))
        return rc;
    return range_add(q, (struct sq_range){.start = ev->addr & ~(SQL_PAGE - 1),
                                          .end = page_end(ev->addr, ev->size),
                                          .serial = ev->serial,
                                          .since_ns = ev->ts_ns,
                                          .image = ev->image,
                                          .prot = prot});
}

static int vm_event(struct sq *q, const struct fmt_event *ev, unsigned kind)
{
    int rc;

    if (ev->flags & FMT_EVF_FAILED)
        return 0;
    switch (ev->kind) {
    case FMT_EV_MMAP:
        /* MAP_FIXED over existing ranges replaces them. */
        if ((rc = ranges_change(q, ev->image, ev->addr & ~(SQL_PAGE - 1),
                                page_end(ev->addr, ev->size), -1, ev->ts_ns)))
            return rc;
        return ev->serial ? map_row(q, ev, kind, (uint32_t)ev->arg[0], 0) : 0;
    case FMT_EV_MUNMAP:
        return ranges_change(q, ev->image, ev->addr & ~(SQL_PAGE - 1), page_end(ev->addr, ev->size),
                             -1, ev->ts_ns);
    case FMT_EV_MPROTECT:
        return ranges_change(q, ev->image, ev->addr & ~(SQL_PAGE - 1), page_end(ev->addr, ev->size),
                             (int64_t)(ev->arg[0] & 0xffffffffu), ev->ts_ns);
    case FMT_EV_MREMAP: {
        /* The moved range keeps the protection it had. */
        uint32_t prot = PROT_READ | PROT_WRITE;
        uint64_t old_start = ev->old_addr & ~(SQL_PAGE - 1);
        for (uint32_t i = 0; i < q->nr_ranges; i++)
            if (q->ranges[i].image == ev->image && q->ranges[i].start <= old_start &&
                old_start < q->ranges[i].end)
                prot = q->ranges[i].prot;
        if ((rc = ranges_change(q, ev->image, old_start, page_end(ev->old_addr, ev->old_size), -1,
                                ev->ts_ns)))
            return rc;
        return ev->serial ? map_row(q, ev, kind, prot, ev->ref) : 0;
    }
    default:
        return 0;
    }
}

/* A Windows trace: the call with its MEM_* and PAGE_* in the Windows
 * tables; a VM kind also in mappings and mapping_states as the mapping
 * event of the same meaning (ana_vm_win.h), named by its Windows kind. */
static int win_event(struct sq *q, const struct fmt_event *ev)
{
    struct fmt_event as;
    int rc;

    if ((rc = ana_sqw_event(q->win, ev)) || !fmt_kind_is_win_vm(ev->kind))
        return rc;
    if (!ana_vm_win_event(ev, &as))
        return 0;
    /* A reservation or a view has no serial in the trace: its mappings row
     * takes the id of its vm_calls row, just inserted. */
    if (as.kind == FMT_EV_MMAP && !as.serial)
        as.serial = (uint64_t)sqlite3_last_insert_rowid(q->db);
    return vm_event(q, &as, ev->kind);
}

static int win_stack_row(void *ctx, uint32_t id)
{
    return stack_row(ctx, id);
}

static int tables(struct sq *q)
{
    const struct fmt_trace_info *info = fmt_reader_info(q->r);
    static const char *const how[] = {"initial", "fork", "exec"};
    char text[2 * FMT_MAX_BUILD_ID + 1];
    int rc = 0;

    bind_text(q->st[ST_META], 1, "command", -1);
    bind_trace_text(q, q->st[ST_META], 2, info->command, (int)info->command_len, 1);
    if ((rc = run(q, ST_META)))
        return rc;
    bind_text(q->st[ST_META], 1, "start_realtime_ns", -1);
    bind_u64(q->st[ST_META], 2, info->start_realtime_ns);
    if ((rc = run(q, ST_META)))
        return rc;
    if (info->sample_bytes) {
        /* A sampled trace: each row is a recorded block, its sizes the
         * bytes it stands for (ana_sample.h). */
        char label[ANA_SAMPLE_LABEL_SIZE];

        bind_text(q->st[ST_META], 1, "sampled", -1);
        bind_text(q->st[ST_META], 2, ana_sample_label(label, sizeof(label), info->sample_bytes),
                  -1);
        if ((rc = run(q, ST_META)))
            return rc;
        bind_text(q->st[ST_META], 1, "sample_bytes", -1);
        bind_u64(q->st[ST_META], 2, info->sample_bytes);
        if ((rc = run(q, ST_META)))
            return rc;
    }
    for (uint32_t i = 0; i < fmt_reader_nr_images(q->r) && !rc; i++) {
        const struct fmt_image_info *p = fmt_reader_image(q->r, i);
        sqlite3_stmt *s = q->st[ST_PROCESS];
        bind_u64(s, 1, i);
        bind_u64(s, 2, p->pid);
        if (p->has_start) {
            bind_u64(s, 3, p->ppid);
            bind_text(s, 4, p->how < 3 ? how[p->how] : "unknown", -1);
            bind_trace_text(q, s, 5, p->exe, (int)p->exe_len, 0);
            bind_trace_text(q, s, 6, p->argv, (int)p->argv_len, 1);
            bind_u64(s, 7, p->start_ns);
        }
        if (p->ended)
            bind_u64(s, 8, p->end_ns);
        if (p->status_known)
            bind_u64(s, 9, p->exit_status);
        rc = run(q, ST_PROCESS);
    }
    for (uint32_t i = 0; i < fmt_reader_nr_threads(q->r) && !rc; i++) {
        const struct fmt_thread_info *t = fmt_reader_thread(q->r, i);
        sqlite3_stmt *s = q->st[ST_THREAD];
        bind_u64(s, 1, t->thread);
        bind_u64(s, 2, t->image);
        bind_u64(s, 3, t->pid);
        bind_u64(s, 4, t->tid);
        bind_trace_text(q, s, 5, t->name, (int)t->name_len, 0);
        bind_u64(s, 6, t->start_ns);
        if (t->ended)
            bind_u64(s, 7, t->end_ns);
        rc = run(q, ST_THREAD);
    }
    for (uint32_t i = 0; i < fmt_reader_nr_modules(q->r) && !rc; i++) {
        const struct fmt_module_info *mi = fmt_reader_module(q->r, i);
        sqlite3_stmt *s = q->st[ST_MODULE];
        uint32_t n = mi->m.build_id_len < FMT_MAX_BUILD_ID ? mi->m.build_id_len : FMT_MAX_BUILD_ID;
        for (uint32_t k = 0; k < n; k++)
            snprintf(text + 2 * k, 3, "%02x", mi->m.build_id[k]);
        text[2 * n] = 0;
        bind_u64(s, 1, mi->id);
        bind_u64(s, 2, mi->image);
        bind_trace_text(q, s, 3, mi->m.path, (int)mi->m.path_len, 0);
        bind_u64(s, 4, mi->m.base);
        bind_text(s, 5, text, -1);
        bind_u64(s, 6, mi->load_ns);
        if (mi->unloaded)
            bind_u64(s, 7, mi->unload_ns);
        rc = run(q, ST_MODULE);
    }
    return rc;
}

/* Finish the statements and close the database. 0 or -EIO (the message
 * in err). */
static int close_db(struct sq *q)
{
    int rc = 0;

    for (int i = 0; i < NR_ST; i++)
        sqlite3_finalize(q->st[i]);
    memset(q->st, 0, sizeof(q->st));
    ana_sqw_close(q->win);
    q->win = NULL;
    if (q->db && sqlite3_close(q->db) != SQLITE_OK) {
        snprintf(q->err, q->err_size, "%s", sqlite3_errmsg(q->db));
        rc = -EIO;
    }
    q->db = NULL;
    return rc;
}

/* An error with SQLite's message is the output's. */
static int failed(struct sq *q, int rc)
{
    if (rc && q->err[0])
        *q->output_failed = 1;
    return rc;
}

/* ---- Streamed: each image's live blocks inserted after its end. */

/* The images that ended over a second before now_ns (UINT64_MAX: every
 * image that ended): their live blocks are final, their frames' keys read
 * no more. */
static int spill_due(struct sq *q, uint64_t now_ns)
{
    uint32_t image;
    uint64_t end_ns;
    int rc = 0;

    while (!rc && ana_ended_due(&q->ended, now_ns, &image, &end_ns)) {
        rc = ana_xlive_each_of(&q->live, image, true, live_row, q);
        if (UTIL_ARRAY_RESERVE_ZERO(q->spilled, q->cap_spilled, (size_t)image + 1, 64))
            return -ENOMEM;
        q->spilled[image] = 1;
        if (image < q->nr_frames_of) {
            ana_strtab_release(&q->frames[image].keys);
            free(q->frames[image].ids);
            q->frames[image] = (struct sq_frames){0};
        }
    }
    return rc;
}

/* The model's retire callback: an image that ended has its stacks let
 * go, and its blocks go a second later. */
static int retire(void *arg, const struct ana_model *m, uint32_t image)
{
    struct ana_export_job *job = arg;
    struct sq *q = job->state;
    const struct ana_scope *sc = ana_model_image(m, image);

    if (!sc->ended)
        return 0; /* still running at the end: inserted last */
    int rc = ana_ended_push(&q->ended, image, sc->end_ns);
    if (rc)
        return rc;
    return job->o->image_done(job->o->image_arg, image, sc->end_ns);
}

bool ana_export_sqlite_streams(const struct fmt_reader *r)
{
    /* One process: nothing to let go. Leak classes: known at the end. A
     * Windows trace: its tables keep their own state. */
    return fmt_reader_nr_images(r) > 1 && !ana_reach_present(r) && !fmt_reader_pe(r);
}

/* sqlite's own model, which tells each image's end. */
static int start_stream(struct ana_export_job *job)
{
    struct sq *q = job->state;

    return ana_xjob_retiring_model(job, retire, &q->model);
}

/* Pass 0: heap blocks, mappings (or a Windows trace's tables). */
static int on_step(void *arg, const struct fmt_event *ev, const struct ana_step *st)
{
    struct sq *q = arg;
    int rc;

    if (q->model && (rc = spill_due(q, ev->ts_ns)))
        return failed(q, rc);
    if ((st->ends || st->starts || ev->stack) && ev->image < q->cap_spilled &&
        q->spilled[ev->image])
        return -ESTALE; /* its image's blocks and frames went */
    if (st->ends || st->starts) {
        if (!(rc = heap_event(q, ev, st)) && q->win && st->starts)
            rc = ana_sqw_event(q->win, ev);
    } else if (st->selected) {
        rc = q->win ? win_event(q, ev) : vm_event(q, ev, ev->kind);
    } else {
        rc = 0;
    }
    return failed(q, rc);
}

/* After the pass: ranges still mapped at the end (their states run on:
 * end_ns NULL), the blocks live at the end, and the database closed. */
static int finish(struct ana_export_job *job)
{
    struct sq *q = job->state;
    int rc = 0;

    for (uint32_t i = 0; i < q->nr_ranges && !rc; i++)
        rc = state_row(q, &q->ranges[i], q->ranges[i].start, q->ranges[i].end, NULL);
    if (!rc && q->model)
        rc = spill_due(q, UINT64_MAX);
    if (!rc)
        rc = ana_xlive_each(&q->live, live_row, q);
    if (rc)
        return failed(q, rc);
    bind_text(q->st[ST_META], 1, "complete", -1);
    bind_u64(q->st[ST_META], 2, 1);
    if ((rc = run(q, ST_META)) || (rc = exec(q, INDEXES)) || (rc = exec(q, "COMMIT;")) ||
        (rc = close_db(q)))
        *q->output_failed = 1;
    return rc;
}

/* The database, its schema and statements; the trace's tables. */
static int open_db(struct sq *q, const char *path)
{
    int rc;

    if (sqlite3_open_v2(path, &q->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
        SQLITE_OK) {
        snprintf(q->err, q->err_size, "%s",
                 q->db ? sqlite3_errmsg(q->db) : "cannot open the database");
        return -EIO;
    }
    /* One transaction and no journal: the file is new, and the command
     * deletes it if the export fails (the meta row 'complete', written
     * last, marks a whole one anyway). */
    if ((rc = exec(q, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; BEGIN;")) ||
        (rc = exec(q, SCHEMA)))
        return rc;
    for (int i = 0; i < NR_ST; i++)
        if (sqlite3_prepare_v2(q->db, STMTS[i], -1, &q->st[i], NULL) != SQLITE_OK) {
            snprintf(q->err, q->err_size, "%s", sqlite3_errmsg(q->db));
            return -EIO;
        }
    if (fmt_reader_pe(q->r) &&
        (rc = ana_sqw_open(&q->win, q->db, &(struct ana_sqw_host){q, win_stack_row}, q->err,
                           q->err_size)))
        return rc;
    return tables(q);
}

static void release_sqlite(struct ana_export_job *job)
{
    struct sq *q = job->state;

    close_db(q); /* a failed export's: the command deletes the file */
    free(q->stack_done);
    free(q->ranges);
    ana_xlive_release(&q->live);
    for (uint32_t i = 0; i < q->nr_frames_of; i++) {
        ana_strtab_release(&q->frames[i].keys);
        free(q->frames[i].ids);
    }
    free(q->frames);
    ana_ended_release(&q->ended);
    free(q->spilled);
    ana_model_destroy(q->model);
}

int ana_export_sqlite(struct ana_export_job *job)
{
    static const struct ana_heap_replay_ops ops = {.step = on_step};
    struct fmt_trace_counts c;
    static const struct ana_xjob_hooks hooks = {.write = finish, .release = release_sqlite};
    struct sq *q = ana_xjob_state(job, sizeof(*q), &hooks);
    int rc = 0;

    if (!q)
        return -ENOMEM;
    q->r = job->r;
    q->o = job->o;
    q->err = job->err;
    q->err_size = job->err_size;
    q->output_failed = job->output_failed;
    ana_xlive_init(&q->live);
    fmt_reader_counts(job->r, &c);
    q->nr_stacks = c.nr_stacks;
    q->stack_done = calloc((size_t)q->nr_stacks / 8 + 1, 1);
    if (!q->stack_done)
        return -ENOMEM;
    if (!(q->sym = ana_xjob_sym(job, &rc)))
        return rc;
    if ((rc = open_db(q, job->path))) {
        *q->output_failed = 1;
        return rc;
    }
    if ((rc = ana_xjob_subscribe(job, 0, &ops, q)))
        return rc;
    /* image_done is set when the output streams (ana_export_streams). */
    return job->o->image_done ? start_stream(job) : 0;
}
