/* SPDX-License-Identifier: MIT */
/* The module map: every loaded object's base, path, PT_LOAD segments and
 * build id, sent at start and whenever dlopen/dlclose change the set, so
 * addresses can be symbolised later, elsewhere. */
#include <elf.h>
#include <link.h>
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "collector/col_internal.h"
#include "collector/col_unwind_internal.h"

/* Modules we have announced, identified by their program headers' address
 * (unique per loaded object, unlike a base of 0 for a non-PIE program). */
#define COL_MAX_MODULES 4096

struct col_known {
    uintptr_t phdr;
    uint64_t base;
    int seen;
    int is_main;
    /* What a forked child announces again without a dl_iterate_phdr: the
     * name and program headers stay where the loader put them. */
    const char *name;
    uint16_t phnum;
};

static struct col_known col_known[COL_MAX_MODULES];
static uint32_t col_nr_known;
/* The loader's counts of objects ever added and removed, at our last scan. */
static unsigned long long col_seen_adds, col_seen_subs;
static _Atomic int col_module_lock;
/* A forked child: announce col_known as it is instead of scanning, since
 * the loader's lock may have been copied held by a thread of the program
 * (col_fork.c keeps ours out, not the program's own). */
static int col_modules_replay;

struct col_scan {
    struct col_thread *t;
    uint64_t ts;
};

static uint32_t col_build_id(const struct dl_phdr_info *info, const ElfW(Phdr) * ph, uint8_t *out)
{
    const unsigned char *p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
    const unsigned char *end = p + ph->p_memsz;

    while (p + sizeof(ElfW(Nhdr)) <= end) {
        const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
        const unsigned char *name = p + sizeof(*n);
        const unsigned char *desc = name + ((n->n_namesz + 3) & ~3u);

        if (desc + n->n_descsz > end)
            break;
        if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && !memcmp(name, "GNU", 4)) {
            uint32_t len = n->n_descsz < FMT_MAX_BUILD_ID ? n->n_descsz : FMT_MAX_BUILD_ID;

            memcpy(out, desc, len);
            return len;
        }
        p = desc + ((n->n_descsz + 3) & ~3u);
    }
    return 0;
}

static void col_emit_module(struct col_thread *t, uint64_t ts, const struct dl_phdr_info *info,
                            int is_main)
{
    char exe[FMT_SHM_MAX_PATH];
    const char *path = info->dlpi_name;
    uint32_t path_len, nr_seg = 0, len;
    struct fmt_shm_module *m;

    if (is_main) {
        long n = col_sys_readlink("/proc/self/exe", exe, sizeof(exe) - 1);

        exe[n > 0 ? n : 0] = 0;
        path = exe;
    } else if (path && *path && *path != '/' && strchr(path, '/')) {
        /* dlopen("./x.so") keeps the name as given (a name without a slash
         * is searched for, or is the vDSO's): made absolute with the
         * working directory as it is now, right after the load, so the
         * trace still names the file elsewhere. */
        long n = syscall(SYS_getcwd, exe, sizeof(exe));
        size_t cwd = n > 0 ? strlen(exe) : 0, rel;

        while (path[0] == '.' && path[1] == '/')
            path += 2;
        rel = strlen(path);
        if (cwd && cwd + 1 + rel < sizeof(exe)) {
            if (exe[cwd - 1] != '/')
                exe[cwd++] = '/';
            memcpy(exe + cwd, path, rel + 1);
            path = exe;
        }
    }
    path_len = (uint32_t)strnlen(path ? path : "", FMT_SHM_MAX_PATH - 1);
    for (int i = 0; i < info->dlpi_phnum; i++)
        nr_seg += info->dlpi_phdr[i].p_type == PT_LOAD && nr_seg < FMT_MAX_SEGMENTS;
    len = fmt_shm_module_size(nr_seg, path_len);
    m = col_ring_reserve(t, len);
    if (!m)
        return;
    memset(m, 0, len);
    m->h.type = FMT_SHM_REC_MODULE_LOAD;
    m->h.len = len;
    m->ts_ns = ts;
    m->base = info->dlpi_addr;
    m->path_len = path_len;
    m->nr_segments = nr_seg;
    nr_seg = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

        if (ph->p_type == PT_LOAD && nr_seg < m->nr_segments) {
            m->segments[nr_seg].vaddr = ph->p_vaddr;
            m->segments[nr_seg].memsz = ph->p_memsz;
            m->segments[nr_seg].offset = ph->p_offset;
            m->segments[nr_seg].flags = ph->p_flags;
            nr_seg++;
        } else if (ph->p_type == PT_NOTE && !m->build_id_len) {
            m->build_id_len = col_build_id(info, ph, m->build_id);
        }
    }
    memcpy((char *)&m->segments[nr_seg], path, path_len);
    col_ring_commit(t, len);
}

static void col_emit_unload(struct col_thread *t, uint64_t ts, uint64_t base)
{
    uint32_t len = fmt_shm_module_size(0, 0);
    struct fmt_shm_module *m = col_ring_reserve(t, len);

    if (!m)
        return;
    memset(m, 0, len);
    m->h.type = FMT_SHM_REC_MODULE_UNLOAD;
    m->h.len = len;
    m->ts_ns = ts;
    m->base = base;
    col_ring_commit(t, len);
}

/* dl_iterate_phdr callback: announce what is new, mark what is still here.
 * Writing to the ring here may wait for the recorder; the recorder never
 * needs the loader lock, so that cannot deadlock. */
static int col_scan_one(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct col_scan *scan = arg;
    uintptr_t key = (uintptr_t)info->dlpi_phdr;
    int is_main = info->dlpi_name == NULL || info->dlpi_name[0] == 0;

    (void)size;
    col_seen_adds = info->dlpi_adds;
    col_seen_subs = info->dlpi_subs;
    for (uint32_t i = 0; i < col_nr_known; i++)
        if (col_known[i].phdr == key) {
            col_known[i].seen = 1;
            return 0;
        }
    /* The first object is the program; a nameless one later is the vDSO's
     * twin or an anonymous object: keep its empty name. */
    is_main = is_main && col_nr_known == 0;
    col_emit_module(scan->t, scan->ts, info, is_main);
    if (col_nr_known < COL_MAX_MODULES)
        col_known[col_nr_known++] =
            (struct col_known){key, info->dlpi_addr, 1, is_main, info->dlpi_name, info->dlpi_phnum};
    return 0;
}

static void col_modules_announce_known(const struct col_scan *scan)
{
    for (uint32_t i = 0; i < col_nr_known; i++) {
        struct dl_phdr_info info = {
            .dlpi_addr = col_known[i].base,
            .dlpi_name = col_known[i].name,
            .dlpi_phdr = (const ElfW(Phdr) *)col_known[i].phdr,
            .dlpi_phnum = col_known[i].phnum,
        };

        col_emit_module(scan->t, scan->ts, &info, col_known[i].is_main);
    }
}

void col_modules_rescan(struct col_thread *t)
{
    struct col_scan scan = {t, col_now()};
    uint32_t kept = 0;
    int forgot = 0;

    while (atomic_exchange_explicit(&col_module_lock, 1, memory_order_acquire))
        sched_yield();
    if (col_modules_replay) {
        col_modules_replay = 0;
        col_modules_announce_known(&scan);
        atomic_store_explicit(&col_module_lock, 0, memory_order_release);
        return;
    }
    for (uint32_t i = 0; i < col_nr_known; i++)
        col_known[i].seen = 0;
    col_dl_iterate_phdr(col_scan_one, &scan);
    for (uint32_t i = 0; i < col_nr_known; i++) {
        if (col_known[i].seen)
            col_known[kept++] = col_known[i];
        else {
            col_emit_unload(t, scan.ts, col_known[i].base);
            forgot = 1;
        }
    }
    col_nr_known = kept;
#ifndef COL_UNWIND_LIBGCC
    if (forgot)
        col_unwind_forget(); /* its addresses may come back as another's */
#else
    (void)forgot; /* libgcc's unwinder keeps no rules */
#endif
    atomic_store_explicit(&col_module_lock, 0, memory_order_release);
}

struct col_counts {
    unsigned long long adds, subs;
};

static int col_read_counts(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct col_counts *c = arg;

    (void)size;
    c->adds = info->dlpi_adds;
    c->subs = info->dlpi_subs;
    return 1; /* the first object is enough */
}

/* Has the set of objects changed since our last scan? The loader's add and
 * remove counters say so for the price of one locked callback. */
void col_modules_poll(struct col_thread *t)
{
    struct col_counts c = {0, 0};
    int left = atomic_load_explicit(&col_modules_dirty, memory_order_relaxed);

    col_dl_iterate_phdr(col_read_counts, &c);
    if (c.adds != col_seen_adds || c.subs != col_seen_subs) {
        col_modules_rescan(t);
#ifdef COL_ATTACH
        col_attach_patch(0); /* record -p: the new modules' GOTs too */
#endif
        atomic_store_explicit(&col_modules_dirty, COL_MODULE_WATCH, memory_order_relaxed);
    } else if (left > 0) {
        atomic_store_explicit(&col_modules_dirty, left - 1, memory_order_relaxed);
    }
}

void col_modules_reset(void)
{
    col_modules_replay = 1;
    atomic_store(&col_module_lock, 0);
}

struct col_range {
    uintptr_t addr, lo, hi;
};

static int col_find_self(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct col_range *r = arg;
    uintptr_t lo = UINTPTR_MAX, hi = 0;

    (void)size;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

        if (ph->p_type != PT_LOAD)
            continue;
        if (info->dlpi_addr + ph->p_vaddr < lo)
            lo = info->dlpi_addr + ph->p_vaddr;
        if (info->dlpi_addr + ph->p_vaddr + ph->p_memsz > hi)
            hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
    }
    if (r->addr >= lo && r->addr < hi) {
        r->lo = lo;
        r->hi = hi;
        return 1;
    }
    return 0;
}

/* The address range of libmemscribe.so itself, to cut our frames off. */
int col_self_range(uintptr_t *lo, uintptr_t *hi)
{
    struct col_range r = {(uintptr_t)col_self_range, 0, 0};

    if (!col_dl_iterate_phdr(col_find_self, &r))
        return -1;
    *lo = r.lo;
    *hi = r.hi;
    return 0;
}
