/* SPDX-License-Identifier: MIT */
/* The SQLite export's Windows tables (ana_export_sqlite_win.h). */
#include "analysis/export/ana_export_sqlite_win.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "memscribe/trace.h"

static const char SCHEMA_WIN[] =
    "CREATE TABLE vm_calls(id INTEGER PRIMARY KEY, kind TEXT, origin TEXT, image INTEGER,\n"
    "  address INTEGER, size INTEGER, page INTEGER, old_page INTEGER, mem INTEGER,\n"
    "  size_asked INTEGER, section INTEGER, failed INTEGER, collector INTEGER,\n"
    "  stack INTEGER REFERENCES stacks(id), thread INTEGER, ts_ns INTEGER);\n"
    "CREATE TABLE heaps(image INTEGER, handle INTEGER, flags INTEGER, reserve INTEGER,\n"
    "  commit_size INTEGER, stack INTEGER REFERENCES stacks(id), thread INTEGER,\n"
    "  create_ns INTEGER, destroy_ns INTEGER);\n"
    "CREATE TABLE heap_blocks(serial INTEGER PRIMARY KEY REFERENCES allocations(serial),\n"
    "  heap INTEGER, flags INTEGER);\n";

enum { SW_VM, SW_HEAP, SW_HEAP_END, SW_BLOCK, NR_SW };

static const char *const SW_SQL[NR_SW] = {
    [SW_VM] = "INSERT INTO vm_calls VALUES(NULL,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [SW_HEAP] = "INSERT INTO heaps VALUES(?,?,?,?,?,?,?,?,NULL)",
    [SW_HEAP_END] = "UPDATE heaps SET destroy_ns=? WHERE image=? AND handle=? AND "
                    "destroy_ns IS NULL",
    [SW_BLOCK] = "INSERT INTO heap_blocks VALUES(?,?,?)",
};

/* A heap handle of an image that has a heaps row and is not destroyed. */
struct sqw_heap {
    uint32_t image;
    uint64_t handle;
};

struct ana_sqw {
    sqlite3 *db;
    sqlite3_stmt *st[NR_SW];
    struct ana_sqw_host host;
    struct sqw_heap *heaps;
    size_t nr_heaps, cap_heaps;
};

static void bind_u64(sqlite3_stmt *s, int i, uint64_t v)
{
    sqlite3_bind_int64(s, i, (sqlite3_int64)v);
}

static int step(struct ana_sqw *w, int which)
{
    int rc = sqlite3_step(w->st[which]);

    sqlite3_reset(w->st[which]);
    sqlite3_clear_bindings(w->st[which]);
    return rc == SQLITE_DONE ? 0 : rc == SQLITE_FULL ? -ENOSPC : -EIO;
}

int ana_sqw_open(struct ana_sqw **out, sqlite3 *db, const struct ana_sqw_host *host, char *err,
                 size_t err_size)
{
    struct ana_sqw *w = calloc(1, sizeof(*w));
    char *msg = NULL;

    *out = NULL;
    if (!w)
        return -ENOMEM;
    w->db = db;
    w->host = *host;
    if (sqlite3_exec(db, SCHEMA_WIN, NULL, NULL, &msg) != SQLITE_OK) {
        snprintf(err, err_size, "%s", msg ? msg : sqlite3_errmsg(db));
        sqlite3_free(msg);
        ana_sqw_close(w);
        return -EIO;
    }
    for (int i = 0; i < NR_SW; i++)
        if (sqlite3_prepare_v2(db, SW_SQL[i], -1, &w->st[i], NULL) != SQLITE_OK) {
            snprintf(err, err_size, "%s", sqlite3_errmsg(db));
            ana_sqw_close(w);
            return -EIO;
        }
    *out = w;
    return 0;
}

static long heap_find(const struct ana_sqw *w, uint32_t image, uint64_t handle)
{
    for (size_t i = 0; i < w->nr_heaps; i++)
        if (w->heaps[i].image == image && w->heaps[i].handle == handle)
            return (long)i;
    return -1;
}

/* A heaps row for handle: from its HEAP_CREATE, or (ev NULL) for a heap
 * made before tracing began, first seen in a block (the process heap). */
static int heap_row(struct ana_sqw *w, uint32_t image, uint64_t handle, const struct fmt_event *ev)
{
    sqlite3_stmt *s = w->st[SW_HEAP];
    int rc;

    if (w->nr_heaps == w->cap_heaps) {
        size_t cap = w->cap_heaps ? 2 * w->cap_heaps : 16;
        struct sqw_heap *v = realloc(w->heaps, cap * sizeof(*v));

        if (!v)
            return -ENOMEM;
        w->heaps = v;
        w->cap_heaps = cap;
    }
    w->heaps[w->nr_heaps++] = (struct sqw_heap){image, handle};
    bind_u64(s, 1, image);
    bind_u64(s, 2, handle);
    if (ev) {
        if ((rc = w->host.stack_row(w->host.ctx, ev->stack)))
            return rc;
        bind_u64(s, 3, ev->arg[0]);
        bind_u64(s, 4, ev->size);
        bind_u64(s, 5, ev->arg[1]);
        bind_u64(s, 6, ev->stack);
        bind_u64(s, 7, ev->thread);
        bind_u64(s, 8, ev->ts_ns);
    }
    return step(w, SW_HEAP);
}

static int heap_event(struct ana_sqw *w, const struct fmt_event *ev)
{
    long i;
    int rc;

    if (ev->kind == FMT_EV_HEAP_CREATE)
        return heap_row(w, ev->image, ev->addr, ev);
    if (ev->kind == FMT_EV_HEAP_DESTROY) {
        if ((i = heap_find(w, ev->image, ev->addr)) < 0 &&
            (rc = heap_row(w, ev->image, ev->addr, NULL)))
            return rc;
        if ((i = heap_find(w, ev->image, ev->addr)) >= 0)
            w->heaps[i] = w->heaps[--w->nr_heaps];
        bind_u64(w->st[SW_HEAP_END], 1, ev->ts_ns);
        bind_u64(w->st[SW_HEAP_END], 2, ev->image);
        bind_u64(w->st[SW_HEAP_END], 3, ev->addr);
        return step(w, SW_HEAP_END);
    }
    /* a block started: MALLOC or REALLOC, arg[1] the heap handle */
    if (!ev->arg[1])
        return 0;
    if (heap_find(w, ev->image, ev->arg[1]) < 0 && (rc = heap_row(w, ev->image, ev->arg[1], NULL)))
        return rc;
    bind_u64(w->st[SW_BLOCK], 1, ev->serial);
    bind_u64(w->st[SW_BLOCK], 2, ev->arg[1]);
    bind_u64(w->st[SW_BLOCK], 3, ev->arg[0]);
    return step(w, SW_BLOCK);
}

static int vm_call(struct ana_sqw *w, const struct fmt_event *ev)
{
    sqlite3_stmt *s = w->st[SW_VM];
    const char *origin = fmt_origin_name(ev->origin);
    int rc;

    if ((rc = w->host.stack_row(w->host.ctx, ev->stack)))
        return rc;
    sqlite3_bind_text(s, 1, fmt_kind_name(ev->kind), -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 2, origin ? origin : "unknown", -1, SQLITE_STATIC);
    bind_u64(s, 3, ev->image);
    bind_u64(s, 4, ev->addr);
    bind_u64(s, 5, ev->size);
    switch (ev->kind) {
    case FMT_EV_VM_PROTECT: /* arg[0] new PAGE_*, arg[1] old */
        bind_u64(s, 6, ev->arg[0]);
        bind_u64(s, 7, ev->arg[1]);
        break;
    case FMT_EV_VM_RESERVE:
    case FMT_EV_VM_COMMIT: /* arg[0] PAGE_*, arg[1] MEM_*, arg[2] size asked */
        bind_u64(s, 6, ev->arg[0]);
        bind_u64(s, 8, ev->arg[1]);
        bind_u64(s, 9, ev->arg[2]);
        break;
    case FMT_EV_VM_DECOMMIT:
    case FMT_EV_VM_RELEASE: /* arg[1] MEM_*, arg[2] size asked */
        bind_u64(s, 8, ev->arg[1]);
        bind_u64(s, 9, ev->arg[2]);
        break;
    case FMT_EV_SECTION_MAP: /* arg[0] PAGE_*, arg[1] MEM_*, arg[2] section handle */
        bind_u64(s, 6, ev->arg[0]);
        bind_u64(s, 8, ev->arg[1]);
        bind_u64(s, 10, ev->arg[2]);
        break;
    default: /* FMT_EV_SECTION_UNMAP */
        break;
    }
    bind_u64(s, 11, !!(ev->flags & FMT_EVF_FAILED));
    bind_u64(s, 12, !!(ev->flags & FMT_EVF_COLLECTOR));
    bind_u64(s, 13, ev->stack);
    bind_u64(s, 14, ev->thread);
    bind_u64(s, 15, ev->ts_ns);
    return step(w, SW_VM);
}

int ana_sqw_event(struct ana_sqw *w, const struct fmt_event *ev)
{
    if (fmt_kind_is_win_vm(ev->kind))
        return vm_call(w, ev);
    if (ev->kind == FMT_EV_HEAP_CREATE || ev->kind == FMT_EV_HEAP_DESTROY)
        return (ev->flags & FMT_EVF_FAILED) ? 0 : heap_event(w, ev);
    if ((ev->kind == FMT_EV_MALLOC || ev->kind == FMT_EV_REALLOC) &&
        !(ev->flags & FMT_EVF_FAILED) && ev->serial)
        return heap_event(w, ev);
    return 0;
}

void ana_sqw_close(struct ana_sqw *w)
{
    if (!w)
        return;
    for (int i = 0; i < NR_SW; i++)
        sqlite3_finalize(w->st[i]);
    free(w->heaps);
    free(w);
}
