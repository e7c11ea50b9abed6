/* SPDX-License-Identifier: MIT */
/* Symbolizer throughput: resolve every distinct code address of some large
 * binaries, as the distinct frames of a big trace would be, and report
 * frames per second after each module's first load (file lookup, symbol
 * table). Per-compile-unit DWARF indexing happens on demand and is counted.
 *
 *   bench_symbolize [--min-rate N] [--limit N] FILE...
 *   bench_symbolize [--min-rate N] [--limit N] --trace TRACE
 *
 * Addresses of FILEs: with DWARF, every line-table row (the start of every
 * statement piece, as return address + 1); without, four points inside
 * every sized function symbol. Of a TRACE: every distinct return address
 * of its stacks, with the trace's module map. They are resolved in a
 * shuffled order, so no locality helps. Rates are given per CPU second
 * (the machine may be shared) and by the wall clock; --min-rate applies to
 * the first, and the exit status is 1 below it. */
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "analysis/sym/ana_symbolize.h"
#include "memscribe/trace.h"

struct addrs {
    uint64_t *v;
    size_t nr, cap;
};

static void push(struct addrs *a, uint64_t x)
{
    if (a->nr == a->cap) {
        a->cap = a->cap ? a->cap * 2 : 4096;
        a->v = realloc(a->v, a->cap * sizeof(*a->v));
        if (!a->v) {
            perror("bench_symbolize");
            exit(1);
        }
    }
    a->v[a->nr++] = x;
}

static double clock_s(clockid_t id)
{
    struct timespec ts;

    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double now_s(void)
{
    return clock_s(CLOCK_MONOTONIC);
}

/* CPU time of this (single-threaded) process: on a machine shared with
 * other work, the rate that does not depend on how busy it is. */
static double cpu_s(void)
{
    return clock_s(CLOCK_PROCESS_CPUTIME_ID);
}

static int cmp_u64(const void *pa, const void *pb)
{
    uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;

    return a < b ? -1 : a > b;
}

/* Every line-table address of the file's DWARF; 0 if it has none. */
static size_t line_addresses(Elf *elf, struct addrs *out)
{
    Dwarf *dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
    size_t before = out->nr;

    if (!dw)
        return 0;
    Dwarf_CU *cu = NULL, *next;
    Dwarf_Die cudie;
    uint8_t type;
    while (dwarf_get_units(dw, cu, &next, NULL, &type, &cudie, NULL) == 0) {
        Dwarf_Lines *lines;
        size_t n;

        cu = next;
        if (dwarf_getsrclines(&cudie, &lines, &n) != 0)
            continue;
        for (size_t i = 0; i < n; i++) {
            Dwarf_Line *l = dwarf_onesrcline(lines, i);
            Dwarf_Addr a;
            bool end;
            if (l && dwarf_lineaddr(l, &a) == 0 && dwarf_lineendsequence(l, &end) == 0 && !end && a)
                push(out, a + 1); /* as a return address: the lookup is at a */
        }
    }
    dwarf_end(dw);
    return out->nr - before;
}

static void symbol_addresses(Elf *elf, struct addrs *out)
{
    Elf_Scn *scn = NULL;

    while ((scn = elf_nextscn(elf, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
            !sh.sh_entsize)
            continue;
        Elf_Data *d = elf_getdata(scn, NULL);
        for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
            GElf_Sym s;
            if (!gelf_getsym(d, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC || !s.st_size ||
                s.st_shndx == SHN_UNDEF)
                continue;
            for (unsigned k = 0; k < 4; k++)
                push(out, s.st_value + 1 + s.st_size * k / 4);
        }
    }
}

/* Describe the file as a loaded module at `base`, and collect addresses. */
static int load(const char *path, uint64_t base, struct fmt_module *m, struct addrs *out)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return -errno;
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    GElf_Ehdr eh;
    size_t nph;
    if (!elf || !gelf_getehdr(elf, &eh) || elf_getphdrnum(elf, &nph)) {
        close(fd);
        return -ENOEXEC;
    }
    memset(m, 0, sizeof(*m));
    m->base = eh.e_type == ET_DYN ? base : 0;
    m->path = path;
    m->path_len = (uint32_t)strlen(path);
    const void *id;
    ssize_t id_len = dwelf_elf_gnu_build_id(elf, &id);
    if (id_len > 0 && id_len <= FMT_MAX_BUILD_ID) {
        memcpy(m->build_id, id, (size_t)id_len);
        m->build_id_len = (uint32_t)id_len;
    }
    for (size_t i = 0; i < nph && m->nr_segments < FMT_MAX_SEGMENTS; i++) {
        GElf_Phdr ph;
        if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD)
            m->segments[m->nr_segments++] = (struct fmt_segment){.vaddr = ph.p_vaddr,
                                                                 .memsz = ph.p_memsz,
                                                                 .offset = ph.p_offset,
                                                                 .flags = ph.p_flags};
    }
    size_t first = out->nr;
    if (!line_addresses(elf, out))
        symbol_addresses(elf, out);
    for (size_t i = first; i < out->nr; i++)
        out->v[i] += m->base;
    elf_end(elf);
    close(fd);
    return 0;
}

static void shuffle(uint64_t *v, size_t n)
{
    uint64_t seed = 0x9e3779b97f4a7c15ull;

    for (size_t k = n; k > 1; k--) {
        seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
        size_t j = (size_t)(seed % k);
        uint64_t t = v[k - 1];
        v[k - 1] = v[j];
        v[j] = t;
    }
}

static size_t unique(uint64_t *v, size_t nr)
{
    size_t n = 0;

    qsort(v, nr, sizeof(*v), cmp_u64);
    for (size_t k = 0; k < nr; k++)
        if (!n || v[k] != v[n - 1])
            v[n++] = v[k];
    return n;
}

static int bench_trace(const char *path, double min_rate, size_t limit);

/* Image and address packed in one word: images below 2^16, user
 * addresses below 2^48. */
#define PACK(image, addr) (((uint64_t)(image) << 48) | (addr))
#define IMAGE_OF(x) ((uint32_t)((x) >> 48))
#define ADDR_OF(x) ((x) & ((1ull << 48) - 1))

/* Every distinct (image, return address) of a trace's stacks. */
static int trace_frames(const char *path, struct ana_sym *s, struct addrs *out)
{
    struct fmt_reader *r;
    struct fmt_trace_counts c;
    char err[600];
    const struct ana_sym_frame *fr;

    if (fmt_reader_open(&r, path, err, sizeof(err))) {
        fprintf(stderr, "bench_symbolize: %s\n", err);
        return -1;
    }
    fmt_reader_counts(r, &c);
    for (uint32_t id = 1; id <= c.nr_stacks; id++) {
        uint32_t image;
        uint64_t addr;
        if (fmt_reader_stack(r, id, &image, &addr, 1) >= 1 && image < 0x10000 &&
            addr < (1ull << 48))
            push(out, PACK(image, addr));
    }
    double t0 = now_s();
    for (uint32_t k = 0; k < fmt_reader_nr_modules(r); k++) {
        const struct fmt_module_info *m = fmt_reader_module(r, k);
        if (ana_sym_add_module(s, m->image, &m->m) || !m->m.nr_segments)
            continue;
        /* First load: find the files, build the symbol table. */
        ana_sym_resolve(s, m->image, m->m.base + m->m.segments[0].vaddr, ANA_SYM_PRECISE, &fr);
    }
    printf("bench_symbolize: %s: %u stack nodes, %u modules loaded in %.1f ms\n", path, c.nr_stacks,
           fmt_reader_nr_modules(r), (now_s() - t0) * 1e3);
    fmt_reader_close(r);
    return 0;
}

int main(int argc, char **argv)
{
    double min_rate = 0;
    size_t limit = 0;
    const char *trace = NULL;
    int i = 1;

    for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
        if (!strcmp(argv[i], "--min-rate"))
            min_rate = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--limit"))
            limit = (size_t)atoll(argv[i + 1]);
        else if (!strcmp(argv[i], "--trace"))
            trace = argv[i + 1];
        else
            break;
    }
    if (i >= argc && !trace) {
        fprintf(stderr, "usage: bench_symbolize [--min-rate N] [--limit N] FILE...\n"
                        "       bench_symbolize [--min-rate N] [--limit N] --trace TRACE\n");
        return 2;
    }
    elf_version(EV_CURRENT);
    if (trace)
        return bench_trace(trace, min_rate, limit);

    int nr_files = argc - i;
    struct fmt_module *mods = calloc((size_t)nr_files, sizeof(*mods));
    struct addrs all = {0};
    size_t *firsts = calloc((size_t)nr_files + 1, sizeof(*firsts));
    for (int f = 0; f < nr_files; f++) {
        firsts[f] = all.nr;
        int rc =
            load(argv[i + f], 0x7f0000000000ull + (uint64_t)f * 0x100000000ull, &mods[f], &all);
        if (rc) {
            fprintf(stderr, "bench_symbolize: %s: %s\n", argv[i + f], strerror(-rc));
            return 1;
        }
    }
    firsts[nr_files] = all.nr;

    /* Distinct addresses, in a fixed pseudo-random order. */
    size_t n = unique(all.v, all.nr);
    shuffle(all.v, n);
    if (limit && n > limit)
        n = limit;

    struct ana_sym *s;
    struct ana_sym_options o = {0};
    if (ana_sym_create(&s, &o)) {
        fprintf(stderr, "bench_symbolize: out of memory\n");
        return 1;
    }
    const struct ana_sym_frame *fr;
    double t0 = now_s();
    for (int f = 0; f < nr_files; f++) {
        double tf = now_s();
        ana_sym_add_module(s, 0, &mods[f]);
        /* First load: find the files, build the symbol table. */
        ana_sym_resolve(s, 0, mods[f].base + mods[f].segments[0].vaddr, ANA_SYM_PRECISE, &fr);
        printf("bench_symbolize: %s: %zu addresses, first load %.1f ms\n", argv[i + f],
               firsts[f + 1] - firsts[f], (now_s() - tf) * 1e3);
    }
    double t1 = now_s(), c1 = cpu_s();
    uint64_t out_frames = 0, named = 0, with_line = 0;
    for (size_t k = 0; k < n; k++) {
        int r = ana_sym_resolve(s, 0, all.v[k], ANA_SYM_RETURN, &fr);
        if (r < 0) {
            fprintf(stderr, "bench_symbolize: resolve: %s\n", strerror(-r));
            return 1;
        }
        out_frames += (uint64_t)r;
        named += fr[r - 1].function != NULL;
        with_line += fr[0].line != 0;
    }
    double t2 = now_s(), c2 = cpu_s();
    for (size_t k = 0; k < n; k++)
        ana_sym_resolve(s, 0, all.v[k], ANA_SYM_RETURN, &fr);
    double t3 = now_s();

    double rate = (double)n / (c2 - c1);
    printf("bench_symbolize: load of %d modules: %.1f ms\n", nr_files, (t1 - t0) * 1e3);
    printf("bench_symbolize: %zu distinct frames in %.3f s CPU (%.3f s wall): %.0f frames/s per "
           "CPU second, "
           "%.0f by the wall clock (%" PRIu64
           " output frames with inlined ones; %.1f%% named, %.1f%% with a line)\n",
           n, c2 - c1, t2 - t1, rate, (double)n / (t2 - t1), out_frames,
           100.0 * (double)named / (double)n, 100.0 * (double)with_line / (double)n);
    printf("bench_symbolize: cached again: %.0f lookups/s\n", (double)n / (t3 - t2));
    for (size_t k = 0; k < ana_sym_nr_notes(s); k++)
        printf("bench_symbolize: note: %s\n", ana_sym_note(s, k));
    ana_sym_destroy(s);
    free(all.v);
    free(mods);
    free(firsts);
    if (min_rate > 0 && rate < min_rate) {
        fprintf(stderr, "bench_symbolize: %.0f frames/s is below the target of %.0f\n", rate,
                min_rate);
        return 1;
    }
    return 0;
}

static int bench_trace(const char *path, double min_rate, size_t limit)
{
    struct ana_sym *s;
    struct ana_sym_options o = {0};
    struct addrs all = {0};
    const struct ana_sym_frame *fr;

    if (ana_sym_create(&s, &o) || trace_frames(path, s, &all))
        return 1;
    size_t n = unique(all.v, all.nr);
    shuffle(all.v, n);
    if (limit && n > limit)
        n = limit;
    uint64_t out_frames = 0, named = 0;
    double t1 = now_s(), c1 = cpu_s();
    for (size_t k = 0; k < n; k++) {
        int r = ana_sym_resolve(s, IMAGE_OF(all.v[k]), ADDR_OF(all.v[k]), ANA_SYM_RETURN, &fr);
        if (r < 0) {
            fprintf(stderr, "bench_symbolize: resolve: %s\n", strerror(-r));
            return 1;
        }
        out_frames += (uint64_t)r;
        named += fr[r - 1].function != NULL;
    }
    double wall = now_s() - t1, cpu = cpu_s() - c1;
    double rate = (double)n / cpu;
    printf("bench_symbolize: %zu distinct frames in %.3f s CPU (%.3f s wall): %.0f frames/s per "
           "CPU second, "
           "%.0f by the wall clock (%" PRIu64 " output frames with inlined ones; %.1f%% named)\n",
           n, cpu, wall, rate, (double)n / wall, out_frames,
           n ? 100.0 * (double)named / (double)n : 0.0);
    for (size_t k = 0; k < ana_sym_nr_notes(s); k++)
        printf("bench_symbolize: note: %s\n", ana_sym_note(s, k));
    ana_sym_destroy(s);
    free(all.v);
    if (min_rate > 0 && rate < min_rate) {
        fprintf(stderr, "bench_symbolize: %.0f frames/s is below the target of %.0f\n", rate,
                min_rate);
        return 1;
    }
    return 0;
}
