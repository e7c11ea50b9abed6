/* SPDX-License-Identifier: MIT */
/* The symbolizer's core: module maps per process image, lazy loading of a
 * module's files, and the per-address cache in front of the symbol table
 * and DWARF lookups. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/sym/ana_sym_internal.h"
#include "util/util_array.h"
#include "util/util_wine.h"

enum mod_state {
    MOD_NEW = 0, /* files not looked for yet */
    MOD_READY,   /* looked for; table and dwarf hold whatever was found */
};

struct sym_module {
    uint32_t index; /* in ana_sym.mods */
    char *path;
    uint8_t build_id[FMT_MAX_BUILD_ID];
    uint32_t build_id_len;
    uint32_t pe_image_size; /* a Windows module: its one segment, SizeOfImage */
    enum mod_state state;
    struct ana_sym_found found;
    struct ana_sym_table table;
    struct ana_sym_dwarf *dwarf;
    struct ana_sym_pdb *pdb;  /* a Windows module's PDB (ana_sym_pdb.c) */
    char *pdb_path;           /* ... its file (malloc'd) */
    struct ana_sym_code code; /* to recognise signal trampolines */
    bool disk_noted;          /* its note given from the disk cache, not read */
};

/* One PT_LOAD segment of a module in an image. */
struct sym_map {
    uint64_t start, end; /* absolute addresses */
    uint64_t base;
    uint64_t seq; /* load order: a later load over the same range wins */
    bool unloaded;
    struct sym_module *mod;
};

struct image_maps {
    struct sym_map *v;
    size_t nr, cap;
};

struct cache_slot {
    uint64_t addr;
    uint32_t image;
    uint16_t kind_used; /* 0: empty, else kind + 1 */
    uint16_t nr_frames;
    const struct ana_sym_frame *frames;
};

struct name_slot {
    const char *mangled; /* key: names point into mapped ELF data, stable */
    const char *demangled;
};

struct ana_sym {
    struct ana_sym_options opts;
    struct ana_sym_arena arena;

    struct sym_module **mods;
    size_t nr_mods, cap_mods;
    struct image_maps *images;
    size_t nr_images;
    uint64_t seq;

    struct cache_slot *cache;
    size_t cache_cap, cache_nr; /* cap: power of two */
    struct name_slot *names;
    size_t names_cap, names_nr;

    char **notes;
    size_t nr_notes, cap_notes;
    struct ana_sym_stats stats;

    /* Where Wine keeps the files behind C:\ paths: the trace's, completed
     * from this host's on the first Windows module (wine_host) */
    struct ana_sym_wine wine;
    bool wine_host;

    /* the symbol cache on disk (opts.cache), opened at its first use */
    struct ana_sym_cache *disk;
    bool disk_tried;
};

/* *to: a copy of the n strings of from in the arena (NULL for none).
 * Returns 0 or -ENOMEM. */
static int copy_list(struct ana_sym *s, const char *const **to, const char *const *from, size_t n)
{
    const char **v;

    *to = NULL;
    if (!n)
        return 0;
    if (!(v = ana_sym_arena_alloc(&s->arena, n * sizeof(*v))))
        return -ENOMEM;
    for (size_t i = 0; i < n; i++)
        if (!(v[i] = ana_sym_arena_strndup(&s->arena, from[i], strlen(from[i]))))
            return -ENOMEM;
    *to = v;
    return 0;
}

int ana_sym_create(struct ana_sym **out, const struct ana_sym_options *opts)
{
    struct ana_sym *s = calloc(1, sizeof(*s));

    if (!s)
        return -ENOMEM;
    elf_version(EV_CURRENT);
    if (opts)
        s->opts = *opts;
    /* Copy the option strings: the caller's argv may not outlive us. */
    if (s->opts.sysroot &&
        !(s->opts.sysroot = ana_sym_arena_strndup(&s->arena, opts->sysroot, strlen(opts->sysroot))))
        goto nomem;
    if (s->opts.symbol_path && !(s->opts.symbol_path = ana_sym_arena_strndup(
                                     &s->arena, opts->symbol_path, strlen(opts->symbol_path))))
        goto nomem;
    if (copy_list(s, &s->opts.debug_dirs, opts ? opts->debug_dirs : NULL, s->opts.nr_debug_dirs) ||
        copy_list(s, &s->opts.alloc_fns, opts ? opts->alloc_fns : NULL, s->opts.nr_alloc_fns))
        goto nomem;
    s->cache_cap = 1024;
    s->cache = calloc(s->cache_cap, sizeof(*s->cache));
    s->names_cap = 1024;
    s->names = calloc(s->names_cap, sizeof(*s->names));
    if (!s->cache || !s->names)
        goto nomem;
    *out = s;
    return 0;
nomem:
    ana_sym_destroy(s);
    return -ENOMEM;
}

void ana_sym_destroy(struct ana_sym *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nr_mods; i++) {
        struct sym_module *m = s->mods[i];

        ana_sym_dwarf_close(m->dwarf);
        ana_sym_pdb_close(m->pdb);
        free(m->pdb_path);
        ana_sym_table_free(&m->table);
        ana_sym_code_free(&m->code);
        if (m->state == MOD_READY)
            ana_sym_found_release(&m->found);
        free(m->path);
        free(m);
    }
    free(s->mods);
    ana_sym_cache_close(s->disk);
    for (size_t i = 0; i < s->nr_images; i++)
        free(s->images[i].v);
    free(s->images);
    free(s->cache);
    free(s->names);
    for (size_t i = 0; i < s->nr_notes; i++)
        free(s->notes[i]);
    free(s->notes);
    ana_sym_arena_free(&s->arena);
    free(s);
}

/* One module object per file (path + build id), shared by every image
 * that maps it, so a forked child costs no second load. */
static struct sym_module *get_module(struct ana_sym *s, const struct fmt_module *m)
{
    uint32_t id_len = m->build_id_len > FMT_MAX_BUILD_ID ? FMT_MAX_BUILD_ID : m->build_id_len;

    for (size_t i = 0; i < s->nr_mods; i++) {
        struct sym_module *x = s->mods[i];

        if (x->build_id_len == id_len && !memcmp(x->build_id, m->build_id, id_len) &&
            strlen(x->path) == m->path_len && !memcmp(x->path, m->path, m->path_len))
            return x;
    }
    if (UTIL_ARRAY_RESERVE(s->mods, s->cap_mods, (size_t)s->nr_mods + 1, 16))
        return NULL;
    struct sym_module *x = calloc(1, sizeof(*x));
    if (!x)
        return NULL;
    x->path = strndup(m->path ? m->path : "", m->path_len);
    if (!x->path) {
        free(x);
        return NULL;
    }
    x->build_id_len = id_len;
    memcpy(x->build_id, m->build_id, id_len);
    /* Wine records a PE module as one segment of its SizeOfImage */
    if (ana_sym_is_win_path(x->path) && m->nr_segments == 1 && m->segments[0].vaddr == 0)
        x->pe_image_size = (uint32_t)m->segments[0].memsz;
    x->index = (uint32_t)s->nr_mods;
    s->mods[s->nr_mods++] = x;
    return x;
}

static struct image_maps *get_image(struct ana_sym *s, uint32_t image, bool create)
{
    if (image >= s->nr_images) {
        if (!create)
            return NULL;
        size_t nr = (size_t)image + 1;
        struct image_maps *v = realloc(s->images, nr * sizeof(*v));
        if (!v)
            return NULL;
        memset(v + s->nr_images, 0, (nr - s->nr_images) * sizeof(*v));
        s->images = v;
        s->nr_images = nr;
    }
    return &s->images[image];
}

static size_t cache_hash(uint32_t image, uint64_t addr, unsigned kind);

/* Drop the cached answers for image's addresses inside m's segments (an
 * answer from before m was loaded there, say "??"), keeping the rest: a
 * trace read in one pass adds modules as it goes. Rebuilds the table,
 * since open addressing cannot simply delete. */
static int cache_forget(struct ana_sym *s, uint32_t image, const struct fmt_module *m)
{
    struct cache_slot *v = calloc(s->cache_cap, sizeof(*v));
    size_t mask = s->cache_cap - 1, kept = 0;

    if (!v)
        return -ENOMEM;
    for (size_t i = 0; i < s->cache_cap; i++) {
        const struct cache_slot *c = &s->cache[i];
        bool drop = false;

        if (!c->kind_used)
            continue;
        for (uint32_t k = 0; c->image == image && k < m->nr_segments && !drop; k++) {
            uint64_t start = m->base + m->segments[k].vaddr;
            drop = c->addr >= start && c->addr < start + m->segments[k].memsz;
        }
        if (drop)
            continue;
        size_t j = cache_hash(c->image, c->addr, c->kind_used - 1u) & mask;
        while (v[j].kind_used)
            j = (j + 1) & mask;
        v[j] = *c;
        kept++;
    }
    free(s->cache);
    s->cache = v;
    s->cache_nr = kept;
    return 0;
}

int ana_sym_add_module(struct ana_sym *s, uint32_t image, const struct fmt_module *m)
{
    if (!m->nr_segments || m->nr_segments > FMT_MAX_SEGMENTS)
        return -EINVAL;
    struct image_maps *im = get_image(s, image, true);
    struct sym_module *mod = get_module(s, m);

    if (!im || !mod)
        return -ENOMEM;
    s->seq++;
    for (uint32_t i = 0; i < m->nr_segments; i++) {
        const struct fmt_segment *seg = &m->segments[i];

        if (!seg->memsz)
            continue;
        if (UTIL_ARRAY_RESERVE(im->v, im->cap, (size_t)im->nr + 1, 32))
            return -ENOMEM;
        im->v[im->nr++] = (struct sym_map){
            .start = m->base + seg->vaddr,
            .end = m->base + seg->vaddr + seg->memsz,
            .base = m->base,
            .seq = s->seq,
            .mod = mod,
        };
    }
    /* A module loaded over a range invalidates cached answers there. */
    if (s->cache_nr)
        return cache_forget(s, image, m);
    return 0;
}

int ana_sym_remove_module(struct ana_sym *s, uint32_t image, uint64_t base)
{
    struct image_maps *im = get_image(s, image, false);
    int found = 0;

    for (size_t i = 0; im && i < im->nr; i++) {
        if (im->v[i].base == base && !im->v[i].unloaded) {
            im->v[i].unloaded = true;
            found = 1;
        }
    }
    return found ? 0 : -ENOENT;
}

/* The map holding addr: a loaded module first, else the one unloaded last
 * (a stack recorded while a dlclose'd library was loaded). */
static const struct sym_map *find_map(const struct ana_sym *s, uint32_t image, uint64_t addr)
{
    const struct sym_map *best = NULL;

    if (image >= s->nr_images)
        return NULL;
    const struct image_maps *im = &s->images[image];
    for (size_t i = 0; i < im->nr; i++) {
        const struct sym_map *m = &im->v[i];

        if (addr < m->start || addr >= m->end)
            continue;
        if (!best || (best->unloaded && !m->unloaded) ||
            (best->unloaded == m->unloaded && m->seq > best->seq))
            best = m;
    }
    return best;
}

static int add_note(struct ana_sym *s, char *note)
{
    if (UTIL_ARRAY_RESERVE(s->notes, s->cap_notes, (size_t)s->nr_notes + 1, 8))
        return -ENOMEM;
    s->notes[s->nr_notes++] = note;
    return 0;
}

/* The kernel's vDSO is in every module map but has no file. */
static bool is_pseudo_module(const char *path)
{
    const char *base = strrchr(path, '/');

    base = base ? base + 1 : path;
    return path[0] == '[' || !strncmp(base, "linux-vdso.so", 13) ||
           !strncmp(base, "linux-gate.so", 13);
}

/* A Windows module's PDB (ana_sym_pdb_find.c), when the PE names one or
 * the PE is missing; DWARF in the PE (mingw's runtime objects, when linked
 * by lld) still answers for the addresses the PDB does not know. When a
 * PDB is found, a note that the PE itself was missing no longer holds. */
static int load_pdb(struct ana_sym *s, struct sym_module *m)
{
    const struct ana_sym_file *pe = m->found.dbg.pe_base   ? &m->found.dbg
                                    : m->found.bin.pe_base ? &m->found.bin
                                                           : NULL;
    bool win_path = ana_sym_is_win_path(m->path);
    char *note = NULL;

    if ((!pe && !win_path) || (pe && !pe->pdb_name))
        return 0;
    int rc = ana_sym_pdb_find(&s->opts, m->path, pe ? pe->path : NULL, pe ? pe->pdb_name : NULL,
                              m->build_id, m->build_id_len, &m->pdb, &m->pdb_path, &note);
    if (rc)
        return rc;
    if (m->pdb && !m->found.bin.elf && !m->found.dbg.elf) {
        free(m->found.note);
        m->found.note = NULL;
    }
    /* a PDB there but bad or another build's is worth saying */
    if (note && (rc = add_note(s, note)))
        free(note);
    return rc;
}

int ana_sym_set_wine(struct ana_sym *s, const char *prefix, const char *dll_dirs,
                     size_t dll_dirs_len)
{
    if (prefix && !(s->wine.prefix = ana_sym_arena_strndup(&s->arena, prefix, strlen(prefix))))
        return -ENOMEM;
    if (dll_dirs_len) {
        char *d = ana_sym_arena_alloc(&s->arena, dll_dirs_len);
        if (!d)
            return -ENOMEM;
        memcpy(d, dll_dirs, dll_dirs_len);
        d[dll_dirs_len - 1] = '\0';
        s->wine.dll_dirs = d;
        s->wine.dll_dirs_len = dll_dirs_len;
    }
    s->wine.prefix_recorded = prefix != NULL;
    s->wine.dirs_recorded = dll_dirs_len != 0;
    return 0;
}

/* What the trace did not record of Wine's folders, from this host. */
static int wine_from_host(struct ana_sym *s)
{
    size_t len = 0;
    char *p = NULL, *d = NULL;

    if (s->wine_host)
        return 0;
    s->wine_host = true;
    if (!s->wine.prefix && (p = util_wine_prefix()) && access(p, F_OK) == 0 &&
        !(s->wine.prefix = ana_sym_arena_strndup(&s->arena, p, strlen(p)))) {
        free(p);
        return -ENOMEM;
    }
    free(p);
    if (!s->wine.dll_dirs_len && (d = util_wine_dll_dirs(NULL, false, &len))) {
        char *copy = ana_sym_arena_alloc(&s->arena, len);
        if (copy) {
            memcpy(copy, d, len);
            s->wine.dll_dirs = copy;
            s->wine.dll_dirs_len = len;
        }
        free(d);
        if (!copy)
            return -ENOMEM;
    }
    return 0;
}

/* --verbose: which files a module's names come from, and how they were
 * found. */
static int note_files(struct ana_sym *s, const struct sym_module *m)
{
    const struct ana_sym_found *f = &m->found;
    char *note = NULL;
    size_t len;
    FILE *o;

    if (!f->bin.elf && !f->dbg.elf && !m->pdb)
        return 0; /* the module's own note says why */
    if (!(o = open_memstream(&note, &len)))
        return -ENOMEM;
    fprintf(o, "%s:", m->path);
    if (f->bin.elf)
        fprintf(o, " %s (%s)", f->bin.path, f->bin_how);
    if (f->bin.elf && f->dbg.elf)
        fprintf(o, ", debug information in %s (%s)", f->dbg.path, f->dbg_how);
    else if (f->dbg.elf)
        fprintf(o, " %s (%s), with debug information", f->dbg.path, f->dbg_how);
    else if (f->bin.elf)
        fputs(", symbols only (no debug information)", o);
    if (m->pdb)
        fprintf(o, "%s PDB %s", f->bin.elf || f->dbg.elf ? ", and its" : " its", m->pdb_path);
    int rc = fclose(o) ? -ENOMEM : add_note(s, note);
    if (rc)
        free(note);
    return rc;
}

/* The disk cache, if the options name one and m's addresses may go in it
 * (a module with a build id, read with names: not --raw, nor --verbose,
 * whose notes of the files read would be missing). */
static bool disk_for(struct ana_sym *s, const struct sym_module *m)
{
    if (!s->opts.cache || s->opts.raw || s->opts.verbose || m->build_id_len < 4 ||
        is_pseudo_module(m->path))
        return false;
    if (!s->disk_tried) {
        char why[200], *note;

        s->disk_tried = true;
        if (ana_sym_cache_open(&s->disk, s->opts.cache, ana_sym_cache_key(&s->opts), why,
                               sizeof(why)) &&
            asprintf(&note, "the symbol cache %s is not used: %s", s->opts.cache, why) >= 0 &&
            add_note(s, note))
            free(note);
    }
    return s->disk;
}

/* The frames of offset off of m from the disk cache into tmp (tmp[0]
 * holding the address's own fields, kept on a miss): their count, 0 when
 * it has none. */
static int from_disk(struct ana_sym *s, struct sym_module *m, uint64_t off, unsigned kind,
                     struct ana_sym_frame *tmp)
{
    struct ana_sym_frame base = tmp[0];
    const char *note;

    if (!disk_for(s, m))
        return 0;
    int n =
        ana_sym_cache_find(s->disk, m->build_id, m->build_id_len, off, kind, &base, tmp, &s->arena);
    if (n <= 0) {
        tmp[0] = base;
        return n;
    }
    if (m->state == MOD_NEW && !m->disk_noted) {
        /* the module's note, as reading it would have given it */
        if (!ana_sym_cache_module(s->disk, m->build_id, m->build_id_len, &note)) {
            tmp[0] = base;
            return 0;
        }
        char *copy = note ? strdup(note) : NULL;
        if (note && (!copy || add_note(s, copy))) {
            free(copy);
            return -ENOMEM;
        }
        m->disk_noted = true;
    }
    return n;
}

static int load_module(struct ana_sym *s, struct sym_module *m)
{
    m->state = MOD_READY;
    memset(&m->found, 0, sizeof(m->found));
    m->found.bin.fd = m->found.dbg.fd = -1;
    if (s->opts.raw || is_pseudo_module(m->path))
        return 0;
    struct ana_sym_module_id id = {m->path, m->build_id, m->build_id_len, m->pe_image_size};
    int rc = ana_sym_is_win_path(m->path) ? wine_from_host(s) : 0;
    if (!rc)
        rc = ana_sym_find_files(&s->opts, &s->wine, &id, &m->found);
    if (rc)
        return rc;
    if (disk_for(s, m))
        (void)ana_sym_cache_add_module(s->disk, m->build_id, m->build_id_len, m->found.note);
    if (m->disk_noted) {
        free(m->found.note); /* given already, from the disk cache */
        m->found.note = NULL;
    }
    s->stats.nr_modules_loaded++;
    if (m->found.asked_debuginfod)
        s->stats.nr_debuginfod_queries++;
    Elf *elfs[2] = {m->found.dbg.elf, m->found.bin.elf};
    rc = ana_sym_table_build(&m->table, elfs, 2);
    if (!rc)
        rc = ana_sym_code_load(&m->code, m->found.bin.elf ? m->found.bin.elf : m->found.dbg.elf);
    if (!rc && m->found.dbg.elf) {
        rc = ana_sym_dwarf_open(&m->dwarf, m->found.dbg.elf);
        if (rc == -ENODATA)
            rc = 0;
    }
    if (!rc)
        rc = load_pdb(s, m);
    if (!rc && s->opts.verbose)
        rc = note_files(s, m);
    if (!rc && m->found.note) {
        rc = add_note(s, m->found.note);
        if (!rc)
            m->found.note = NULL; /* owned by the notes list now */
    }
    return rc;
}

static size_t name_hash(const char *name)
{
    return (size_t)(((uintptr_t)name >> 3) * 0x9e3779b97f4a7c15ull);
}

static void names_grow(struct ana_sym *s)
{
    size_t cap = s->names_cap * 2;
    struct name_slot *v = calloc(cap, sizeof(*v));

    if (!v)
        return; /* keep the fuller table: slower, still correct */
    for (size_t j = 0; j < s->names_cap; j++) {
        if (!s->names[j].mangled)
            continue;
        size_t k = name_hash(s->names[j].mangled) & (cap - 1);
        while (v[k].mangled)
            k = (k + 1) & (cap - 1);
        v[k] = s->names[j];
    }
    free(s->names);
    s->names = v;
    s->names_cap = cap;
}

/* Demangle once per name: functions recur across addresses, and a long
 * C++ name costs microseconds to demangle. */
static const char *demangled(struct ana_sym *s, const char *name)
{
    if (!name)
        return NULL;
    if (s->names_nr * 2 >= s->names_cap)
        names_grow(s);
    size_t mask = s->names_cap - 1;
    size_t i = name_hash(name) & mask;

    for (; s->names[i].mangled; i = (i + 1) & mask) {
        if (s->names[i].mangled == name)
            return s->names[i].demangled;
    }
    const char *d = ana_sym_demangle(&s->arena, name);
    if (!d)
        return name; /* out of memory: the mangled name still says something */
    if (s->names_nr + 1 < s->names_cap) {
        s->names[i] = (struct name_slot){.mangled = name, .demangled = d};
        s->names_nr++;
    }
    return d;
}

static bool is_sigtramp(const struct sym_module *m, const struct ana_sym_symbol *sym, uint64_t off)
{
    /* glibc's signal return trampolines. Handlers "return" to their
     * first byte, so the recorded address is the start and addr - 1 would
     * fall in whatever precedes it. Known by name when .symtab is there,
     * else by the code. */
    if (sym && sym->addr == off &&
        (!strcmp(sym->name, "__restore_rt") || !strcmp(sym->name, "__restore")))
        return true;
    return ana_sym_code_is_sigreturn(&m->code, off);
}

/* Work out the frames of one address into tmp; returns how many. */
static int compute(struct ana_sym *s, uint32_t image, uint64_t addr, enum ana_sym_addr_kind kind,
                   struct ana_sym_frame *tmp, struct ana_sym_dwarf_chain *chain)
{
    const struct sym_map *map = find_map(s, image, addr);

    memset(&tmp[0], 0, sizeof(tmp[0]));
    tmp[0].addr = addr;
    if (!map)
        return 1;
    struct sym_module *m = map->mod;
    uint64_t off = addr - map->base, module_off = off;
    tmp[0].module = m->path;
    tmp[0].module_offset = off;
    int n = from_disk(s, m, off, kind, tmp);
    if (n)
        return n;
    if (m->state == MOD_NEW) {
        int rc = load_module(s, m);
        if (rc)
            return rc;
    }
    if (s->opts.raw)
        return 1;

    const struct ana_sym_symbol *sym = NULL;
    /* A Windows PE's addresses count from its ImageBase (ana_sym_pe.c) */
    uint64_t pe_base = m->found.dbg.elf ? m->found.dbg.pe_base : m->found.bin.pe_base;
    off += pe_base;
    uint64_t pc = off;
    if (kind == ANA_SYM_RETURN) {
        const struct ana_sym_symbol *at = ana_sym_table_find(&m->table, off);
        if (is_sigtramp(m, at, off)) {
            sym = at && at->addr <= off && off < at->end ? at : NULL;
            tmp[0].signal_frame = true;
        } else if (off > 0) {
            pc = off - 1;
        }
    }
    if (!sym)
        sym = ana_sym_table_find(&m->table, pc);

    chain->nr_frames = 0;
    chain->file = NULL;
    chain->line = chain->column = 0;
    if (m->dwarf) {
        int rc = ana_sym_dwarf_lookup(m->dwarf, pc, chain);
        if (rc && rc != -ENOENT)
            return rc;
    }
    struct ana_sym_pdb_hit hit;
    if (m->pdb && !chain->nr_frames && !ana_sym_pdb_lookup(m->pdb, pc - pe_base, &hit)) {
        if (hit.function) {
            /* inlined functions first (S_INLINESITE), as DWARF's chain */
            for (uint32_t i = 0; i < hit.nr_inline; i++)
                chain->frames[i] = (struct ana_sym_dwarf_frame){
                    .name = hit.inl[i].function, .file = hit.inl[i].file, .line = hit.inl[i].line};
            chain->nr_frames = hit.nr_inline + 1;
            chain->frames[hit.nr_inline] = (struct ana_sym_dwarf_frame){
                .name = hit.function, .file = hit.file, .line = hit.line};
            chain->outer_low = pe_base + hit.function_rva;
        } else {
            chain->file = hit.file;
            chain->line = hit.line;
        }
    }

    n = chain->nr_frames ? (int)chain->nr_frames : 1;
    for (int i = 0; i < n; i++) {
        struct ana_sym_frame *f = &tmp[i];

        *f = tmp[0];
        f->inlined = i + 1 < n;
        f->signal_frame = tmp[0].signal_frame && i + 1 == n;
        if (chain->nr_frames) {
            f->function = demangled(s, chain->frames[i].name);
            f->file = chain->frames[i].file;
            f->line = chain->frames[i].line;
            f->column = chain->frames[i].column;
        } else {
            f->file = chain->file;
            f->line = chain->line;
            f->column = chain->column;
        }
    }
    /* The physical frame is named by the symbol table when it can be: its
     * preferred alias is the public name (raise, not DWARF's __GI_raise),
     * and C++ symbols carry their parameters, which DWARF gives only
     * functions with external linkage. Inlined frames exist only in DWARF. */
    struct ana_sym_frame *phys = &tmp[n - 1];
    if (!sym && !phys->function && phys->signal_frame)
        phys->function = "<signal handler called>"; /* gdb's words, for a nameless trampoline */
    if (sym) {
        phys->function = demangled(s, sym->name);
        phys->function_offset = off - sym->addr;
        phys->has_offset = true;
    } else if (chain->nr_frames && phys->function) {
        phys->function_offset = off - chain->outer_low;
        phys->has_offset = true;
    }
    if (disk_for(s, m)) /* failing, it is only a shortcut missed */
        (void)ana_sym_cache_add(s->disk, m->build_id, m->build_id_len, module_off, kind, tmp,
                                (uint32_t)n);
    return n;
}

static size_t cache_hash(uint32_t image, uint64_t addr, unsigned kind)
{
    uint64_t h = addr ^ ((uint64_t)image << 40) ^ ((uint64_t)kind << 63);

    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return (size_t)h;
}

static int cache_grow(struct ana_sym *s)
{
    size_t cap = s->cache_cap * 2;
    struct cache_slot *v = calloc(cap, sizeof(*v));

    if (!v)
        return -ENOMEM;
    for (size_t i = 0; i < s->cache_cap; i++) {
        const struct cache_slot *c = &s->cache[i];

        if (!c->kind_used)
            continue;
        size_t k = cache_hash(c->image, c->addr, c->kind_used - 1u) & (cap - 1);
        while (v[k].kind_used)
            k = (k + 1) & (cap - 1);
        v[k] = *c;
    }
    free(s->cache);
    s->cache = v;
    s->cache_cap = cap;
    return 0;
}

/* Shared entries' keys (ana_sym_resolve_shared): the module's index with
 * this bit in the image field (images are below 2^20), its offset as the
 * address. */
#define SHARED_KEY 0x80000000u

/* The frames of (key image, key addr, kind), cached; computed for addr of
 * image on a miss. */
static int resolve(struct ana_sym *s, uint32_t key_image, uint64_t key_addr, uint32_t image,
                   uint64_t addr, enum ana_sym_addr_kind kind, const struct ana_sym_frame **frames)
{
    size_t mask = s->cache_cap - 1;
    size_t i = cache_hash(key_image, key_addr, kind) & mask;

    s->stats.nr_lookups++;
    for (; s->cache[i].kind_used; i = (i + 1) & mask) {
        const struct cache_slot *c = &s->cache[i];

        if (c->addr == key_addr && c->image == key_image && c->kind_used == kind + 1u) {
            s->stats.nr_cache_hits++;
            *frames = c->frames;
            return c->nr_frames;
        }
    }

    struct ana_sym_frame tmp[ANA_SYM_MAX_INLINE];
    struct ana_sym_dwarf_chain chain;
    int n = compute(s, image, addr, kind, tmp, &chain);
    if (n < 0)
        return n;
    struct ana_sym_frame *copy = ana_sym_arena_alloc(&s->arena, (size_t)n * sizeof(*copy));
    if (!copy)
        return -ENOMEM;
    memcpy(copy, tmp, (size_t)n * sizeof(*copy));

    /* compute() may have added modules' notes but never cache entries, so
     * slot i is still the free slot for this key. */
    s->cache[i] = (struct cache_slot){.addr = key_addr,
                                      .image = key_image,
                                      .kind_used = (uint16_t)(kind + 1u),
                                      .nr_frames = (uint16_t)n,
                                      .frames = copy};
    s->cache_nr++;
    if (s->cache_nr * 2 > s->cache_cap && cache_grow(s))
        return -ENOMEM;
    *frames = copy;
    return n;
}

int ana_sym_resolve(struct ana_sym *s, uint32_t image, uint64_t addr, enum ana_sym_addr_kind kind,
                    const struct ana_sym_frame **frames)
{
    return resolve(s, image, addr, image, addr, kind, frames);
}

int ana_sym_resolve_shared(struct ana_sym *s, uint32_t image, uint64_t addr,
                           enum ana_sym_addr_kind kind, const struct ana_sym_frame **frames)
{
    const struct sym_map *map = find_map(s, image, addr);

    if (!map)
        return resolve(s, image, addr, image, addr, kind, frames);
    return resolve(s, SHARED_KEY | map->mod->index, addr - map->base, image, addr, kind, frames);
}

size_t ana_sym_nr_notes(const struct ana_sym *s)
{
    return s->nr_notes;
}

const char *ana_sym_note(const struct ana_sym *s, size_t i)
{
    return i < s->nr_notes ? s->notes[i] : NULL;
}

void ana_sym_get_stats(const struct ana_sym *s, struct ana_sym_stats *out)
{
    *out = s->stats;
}

const struct ana_sym_options *ana_sym_options_of(const struct ana_sym *s)
{
    return &s->opts;
}
