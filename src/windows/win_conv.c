/* SPDX-License-Identifier: MIT */
/* The interim Windows records as trace events (docs/windows.md, "The
 * trace"): one image per process, heap calls as the malloc kinds with the
 * heap handle, virtual memory as the Windows kinds of format 1.2. */
#include "win_conv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "win_file.h"
#include "win_live.h"

/* Windows constants (winnt.h): the host has no Windows headers. */
#define MEM_COMMIT 0x1000u
#define MEM_RESERVE 0x2000u
#define MEM_DECOMMIT 0x4000u
#define MEM_RELEASE 0x8000u
#define MEM_IMAGE 0x1000000u
#define MEM_MAPPED 0x40000u
#define PAGE_EXECUTE_READ 0x20u

struct win_conv {
    struct win_conv_sink sink;
    struct win_live blocks;  /* live heap blocks: value the heap handle */
    struct win_live views;   /* mapped views: value the size */
    struct win_live modules; /* loaded modules by base: value 1 */
    struct win_live threads; /* (image, tid): value the thread index + 1 */
    struct win_live owners;  /* (image, 1): value the tid of its PROCESS record */
    uint32_t *pids;          /* image index -> pid */
    uint32_t nr_images, nr_threads;
    struct win_conv_stats st;
};

static int image_of(struct win_conv *c, uint32_t pid, uint32_t *image)
{
    for (uint32_t i = 0; i < c->nr_images; i++)
        if (c->pids[i] == pid) {
            *image = i;
            return 0;
        }
    uint32_t *v = realloc(c->pids, (c->nr_images + 1) * sizeof(*v));

    if (!v)
        return -ENOMEM;
    c->pids = v;
    v[c->nr_images] = pid;
    *image = c->nr_images++;
    return 0;
}

/* Who an event belongs to, and its stack. */
static int event_of(struct win_conv *c, const struct win_rec *r, uint64_t ts, struct fmt_event *ev)
{
    const struct win_live_ent *t;
    int rc;

    memset(ev, 0, sizeof(*ev));
    ev->ts_ns = ts;
    ev->pid = r->pid;
    ev->tid = r->tid;
    if ((rc = image_of(c, r->pid, &ev->image)))
        return rc;
    /* The launcher's records (tid 0: the exit, a drop count) are the
     * process's own: they go to the thread that started the image (made
     * its PROCESS record), as a Linux image's own events go to its main
     * thread, so no thread "0" is listed. Before that record, tid 0 is a
     * thread of its own. */
    if (r->kind == WIN_REC_PROCESS && r->tid &&
        (rc = win_live_put(&c->owners, ev->image, 1, r->tid)))
        return rc;
    if (!r->tid && (t = win_live_get(&c->owners, ev->image, 1)))
        ev->tid = (uint32_t)t->val;
    if ((t = win_live_get(&c->threads, ev->image, (uint64_t)ev->tid + 1))) {
        ev->thread = (uint32_t)t->val - 1;
    } else {
        ev->thread = c->nr_threads++;
        if ((rc = win_live_put(&c->threads, ev->image, (uint64_t)ev->tid + 1, ev->thread + 1)))
            return rc;
    }
    if (r->nr_frames)
        return c->sink.stack(c->sink.ctx, ev->image, win_rec_frames(r), r->nr_frames, &ev->stack);
    return 0;
}

static int put(struct win_conv *c, const struct fmt_event *ev)
{
    struct fmt_event copy = *ev; /* the sink may change it (times) */

    c->st.events++;
    return c->sink.event(c->sink.ctx, &copy);
}

/* HeapDestroy ends the blocks still live in the heap: frees flagged
 * FMT_EVF_HEAP_DESTROYED, with the destroy's time and thread. */
static int destroy_heap(struct win_conv *c, const struct fmt_event *destroy)
{
    for (size_t i = 0; i < c->blocks.cap; i++) {
        const struct win_live_ent *e = &c->blocks.v[i];

        if (!e->addr || e->image != destroy->image || e->val != destroy->addr)
            continue;
        struct fmt_event ev = *destroy;
        ev.kind = FMT_EV_FREE;
        ev.flags = FMT_EVF_HEAP_DESTROYED;
        ev.addr = e->addr;
        ev.arg[1] = e->val;
        ev.stack = 0;
        int rc = put(c, &ev);
        if (rc)
            return rc;
        c->st.destroy_frees++;
        win_live_del(&c->blocks, destroy->image, ev.addr);
        i--; /* the backward shift may have moved an entry into slot i */
    }
    return 0;
}

static int heap_event(struct win_conv *c, const struct win_rec *r, struct fmt_event *ev)
{
    int rc;

    if (r->kind <= WIN_REC_HEAP_FREE && r->a[7]) {
        c->st.nested++; /* inside another heap call: the outer one counts */
        return 0;
    }
    switch (r->kind) {
    case WIN_REC_HEAP_ALLOC:
        ev->kind = FMT_EV_MALLOC;
        ev->arg[0] = r->a[1];
        ev->arg[1] = r->a[0];
        ev->size = r->a[2];
        ev->addr = r->a[3];
        if (!ev->addr)
            ev->flags |= FMT_EVF_FAILED;
        if ((rc = put(c, ev)))
            return rc;
        return ev->addr ? win_live_put(&c->blocks, ev->image, ev->addr, r->a[0]) : 0;
    case WIN_REC_HEAP_REALLOC:
        ev->kind = FMT_EV_REALLOC;
        ev->arg[0] = r->a[1];
        ev->arg[1] = r->a[0];
        ev->old_addr = r->a[2];
        ev->size = r->a[3];
        ev->addr = r->a[4];
        if (!ev->addr)
            ev->flags |= FMT_EVF_FAILED; /* the old block stays */
        else if (ev->addr == ev->old_addr)
            ev->flags |= FMT_EVF_IN_PLACE;
        if ((rc = put(c, ev)))
            return rc;
        if (!ev->addr)
            return 0;
        win_live_del(&c->blocks, ev->image, ev->old_addr);
        return win_live_put(&c->blocks, ev->image, ev->addr, r->a[0]);
    case WIN_REC_HEAP_FREE:
        ev->kind = FMT_EV_FREE;
        ev->arg[0] = r->a[1];
        ev->arg[1] = r->a[0];
        ev->addr = r->a[2];
        if (!(r->a[3] & 0xff))
            ev->flags |= FMT_EVF_FAILED;
        win_live_del(&c->blocks, ev->image, ev->addr);
        return put(c, ev);
    case WIN_REC_HEAP_CREATE:
        ev->kind = FMT_EV_HEAP_CREATE;
        ev->addr = r->a[4];
        ev->size = r->a[2];
        ev->arg[0] = r->a[0];
        ev->arg[1] = r->a[3];
        if (!ev->addr)
            ev->flags |= FMT_EVF_FAILED;
        return put(c, ev);
    default: /* WIN_REC_HEAP_DESTROY: NULL on success, else the handle */
        ev->kind = FMT_EV_HEAP_DESTROY;
        ev->addr = r->a[0];
        if (r->a[1])
            ev->flags |= FMT_EVF_FAILED;
        else if ((rc = destroy_heap(c, ev)))
            return rc;
        return put(c, ev);
    }
}

/* NTSTATUS: success and informational codes are not negative. */
static int nt_failed(uint64_t status)
{
    return (int32_t)(uint32_t)status < 0;
}

static int vm_event(struct win_conv *c, const struct win_rec *r, struct fmt_event *ev)
{
    const struct win_live_ent *e;
    int rc;

    ev->addr = r->a[6];
    ev->size = r->a[7];
    ev->arg[0] = r->a[4];
    ev->arg[1] = r->a[3];
    ev->arg[2] = r->a[2];
    if (nt_failed(r->a[5])) {
        ev->flags |= FMT_EVF_FAILED;
        ev->addr = r->a[1]; /* as asked */
        ev->size = r->a[2];
    }
    switch (r->kind) {
    case WIN_REC_VM_ALLOC:
        /* MEM_RESERVE|MEM_COMMIT: a region, then its pages committed */
        if (r->a[3] & MEM_RESERVE) {
            ev->kind = FMT_EV_VM_RESERVE;
            if ((rc = put(c, ev)) || (ev->flags & FMT_EVF_FAILED) || !(r->a[3] & MEM_COMMIT))
                return rc;
        }
        if (!(r->a[3] & (MEM_COMMIT | MEM_RESERVE)))
            return 0; /* MEM_RESET and the like: no change of commit */
        ev->kind = FMT_EV_VM_COMMIT;
        return put(c, ev);
    case WIN_REC_VM_FREE:
        ev->arg[0] = 0;
        if (r->a[3] & MEM_RELEASE)
            ev->kind = FMT_EV_VM_RELEASE;
        else if (r->a[3] & MEM_DECOMMIT)
            ev->kind = FMT_EV_VM_DECOMMIT;
        else
            return 0; /* an invalid type: the call failed and changed nothing */
        return put(c, ev);
    case WIN_REC_VM_PROTECT:
        ev->kind = FMT_EV_VM_PROTECT;
        ev->arg[0] = r->a[4];
        ev->arg[1] = r->a[3];
        return put(c, ev);
    case WIN_REC_MAP_VIEW:
        ev->kind = FMT_EV_SECTION_MAP;
        ev->arg[2] = r->a[1];
        if ((rc = put(c, ev)))
            return rc;
        return (ev->flags & FMT_EVF_FAILED)
                   ? 0
                   : win_live_put(&c->views, ev->image, ev->addr, ev->size);
    default: /* WIN_REC_UNMAP_VIEW */
        memset(ev->arg, 0, sizeof(ev->arg));
        ev->kind = FMT_EV_SECTION_UNMAP;
        ev->addr = r->a[1];
        ev->size = (e = win_live_get(&c->views, ev->image, ev->addr)) ? e->val : 0;
        if (nt_failed(r->a[5]))
            return put(c, ev);
        win_live_del(&c->views, ev->image, ev->addr);
        if ((rc = put(c, ev)))
            return rc;
        if (!win_live_get(&c->modules, ev->image, ev->addr))
            return 0;
        win_live_del(&c->modules, ev->image, ev->addr);
        ev->kind = FMT_EV_MODULE_UNLOAD;
        ev->size = 0;
        return put(c, ev);
    }
}

static int module_event(struct win_conv *c, const struct win_rec *r, struct fmt_event *ev)
{
    static const uint8_t zero[16];
    struct fmt_module m = {0};
    size_t path_len, pdb_len;
    const char *path, *pdb;

    win_rec_module_text(r, &path, &path_len, &pdb, &pdb_len);
    m.base = r->a[0];
    m.path = path;
    m.path_len = (uint32_t)path_len;
    if (memcmp(&r->a[3], zero, 16)) { /* CodeView GUID, then age */
        memcpy(m.build_id, &r->a[3], 16);
        for (int i = 0; i < 4; i++)
            m.build_id[16 + i] = (uint8_t)(r->a[2] >> (8 * i));
        m.build_id_len = 20;
    }
    m.nr_segments = 1;
    m.segments[0] = (struct fmt_segment){0, r->a[1], 0, 5 /* PF_R | PF_X */};
    ev->kind = FMT_EV_MODULE_LOAD;
    ev->addr = m.base;
    ev->module = &m;
    int rc = put(c, ev);
    if (rc || (rc = win_live_put(&c->modules, ev->image, m.base, 1)))
        return rc;
    if (win_live_get(&c->views, ev->image, m.base))
        return 0;
    /* Loaded before the hooks (EnumProcessModules at start): its image
     * view, as already mapped when tracing began. */
    ev->kind = FMT_EV_SECTION_MAP;
    ev->origin = FMT_ORIGIN_SNAPSHOT;
    ev->module = NULL;
    ev->size = m.segments[0].memsz;
    ev->arg[0] = PAGE_EXECUTE_READ;
    ev->arg[1] = MEM_IMAGE;
    return (rc = put(c, ev)) ? rc : win_live_put(&c->views, ev->image, m.base, ev->size);
}

/* A region in use when the collector started (WIN_REC_REGION), as events of
 * origin snapshot: a private allocation as one VM_RESERVE (in its first
 * region) and a VM_COMMIT per committed region; a mapped view as one
 * SECTION_MAP. The collector's own allocations are flagged COLLECTOR. */
static int region_event(struct win_conv *c, const struct win_rec *r, struct fmt_event *ev)
{
    uint64_t type = r->a[6] & ~WIN_REGION_COLLECTOR;
    int rc;

    ev->origin = FMT_ORIGIN_SNAPSHOT;
    if (r->a[6] & WIN_REGION_COLLECTOR)
        ev->flags |= FMT_EVF_COLLECTOR;
    if (type == MEM_MAPPED) {
        if (!r->a[7])
            return 0; /* a view is mapped whole: its first region stands for it */
        ev->kind = FMT_EV_SECTION_MAP;
        ev->addr = r->a[0];
        ev->size = r->a[7];
        ev->arg[0] = r->a[5];
        ev->arg[1] = MEM_MAPPED;
        if ((rc = put(c, ev)))
            return rc;
        return win_live_put(&c->views, ev->image, ev->addr, ev->size);
    }
    if (r->a[7]) {
        ev->kind = FMT_EV_VM_RESERVE;
        ev->addr = r->a[0];
        ev->size = r->a[7];
        ev->arg[0] = r->a[5];
        ev->arg[1] = MEM_RESERVE;
        ev->arg[2] = r->a[7];
        if ((rc = put(c, ev)))
            return rc;
    }
    if (r->a[3] != MEM_COMMIT)
        return 0;
    ev->kind = FMT_EV_VM_COMMIT;
    ev->addr = r->a[1];
    ev->size = r->a[2];
    ev->arg[0] = r->a[4];
    ev->arg[1] = MEM_COMMIT;
    ev->arg[2] = r->a[2];
    return put(c, ev);
}

int win_conv_record(struct win_conv *c, const struct win_rec *r, uint64_t ts, uint32_t ppid,
                    const char *exe, size_t exe_len)
{
    struct fmt_event ev;
    int rc;

    if (r->kind == WIN_REC_CLOCK || r->kind == WIN_REC_CHILD)
        return 0; /* the clock made the times; PROCESS records name children */
    if ((rc = event_of(c, r, ts, &ev)))
        return rc;
    switch (r->kind) {
    case WIN_REC_HEAP_ALLOC ... WIN_REC_HEAP_DESTROY:
        return heap_event(c, r, &ev);
    case WIN_REC_VM_ALLOC ... WIN_REC_UNMAP_VIEW:
        return vm_event(c, r, &ev);
    case WIN_REC_MODULE:
        return module_event(c, r, &ev);
    case WIN_REC_REGION:
        return region_event(c, r, &ev);
    case WIN_REC_PROCESS:
        ev.str = exe;
        ev.str_len = (uint32_t)exe_len;
        ev.kind = FMT_EV_PROCESS_START;
        ev.arg[0] = ppid;
        ev.arg[1] = ev.arg[0] ? FMT_START_CREATEPROCESS : FMT_START_INITIAL;
        return put(c, &ev);
    case WIN_REC_EXIT:
        ev.kind = FMT_EV_PROCESS_EXIT;
        ev.arg[0] = r->a[1];
        ev.arg[1] = 1;
        return put(c, &ev);
    case WIN_REC_THREAD:
        ev.kind = FMT_EV_THREAD_START;
        return put(c, &ev);
    default: /* WIN_REC_DROPPED */
        ev.kind = FMT_EV_DROPPED;
        ev.arg[0] = r->a[0];
        return put(c, &ev);
    }
}

struct win_conv *win_conv_new(const struct win_conv_sink *sink)
{
    struct win_conv *c = calloc(1, sizeof(*c));

    if (c)
        c->sink = *sink;
    return c;
}

void win_conv_stats(const struct win_conv *c, struct win_conv_stats *st)
{
    *st = c->st;
}

void win_conv_free(struct win_conv *c)
{
    if (!c)
        return;
    win_live_release(&c->blocks);
    win_live_release(&c->views);
    win_live_release(&c->modules);
    win_live_release(&c->threads);
    win_live_release(&c->owners);
    free(c->pids);
    free(c);
}
