/* SPDX-License-Identifier: MIT */
/* Windows PE modules for the symbolizer, offline (docs/windows.md,
 * "Symbols"): mingw's gcc writes DWARF into a PE's sections (.debug_info
 * and the rest, long names through the COFF string table), and a COFF
 * symbol table. This copies those into an ELF file in memory (a memfd)
 * with the same addresses, the PE's ImageBase-based ones, plus the
 * CodeView GUID and age as a GNU build id note, so that libdw, the symbol
 * table and the build-id check read a PE like any ELF file. The export
 * table's names become symbols too: a PE without debug information (most
 * DLLs shipped without their PDB) still names its frames by the nearest
 * export below, as dbghelp does. */
#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/sym/ana_sym_internal.h"
#include "util/util_array.h"
#include "util/util_search.h"

#define PE_MAX_SECTIONS 96
#define PE_MAX_EXPORTS (1u << 20) /* kernelbase has ~1,800; a larger count is corrupt */

struct pe_sec {
    char name[64];
    uint32_t vaddr, vsize, raw_off, raw_size, flags;
};

struct pe {
    const uint8_t *p;
    size_t size;
    int is64;
    uint16_t machine;
    uint64_t image_base;
    uint32_t image_size;              /* SizeOfImage */
    uint32_t export_rva, export_size; /* data directory 0 */
    struct pe_sec sec[PE_MAX_SECTIONS];
    uint32_t nr_sec;
    uint32_t sym_off, nr_syms; /* COFF symbol table; its string table follows */
    uint8_t build_id[20];      /* CodeView RSDS GUID + age */
    int has_build_id;
    char pdb[512]; /* the RSDS record's PDB name; "" if none */
};

static uint16_t le16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int in_file(const struct pe *pe, uint64_t off, uint64_t len)
{
    return off <= pe->size && len <= pe->size - off;
}

/* The string table entry at off, if it is one (NUL inside the file). */
static const char *coff_str(const struct pe *pe, uint32_t off)
{
    uint64_t tab = (uint64_t)pe->sym_off + (uint64_t)pe->nr_syms * 18;

    if (!pe->sym_off || !in_file(pe, tab, 4) || off < 4 || off >= le32(pe->p + tab) ||
        !in_file(pe, tab + off, 1) || !memchr(pe->p + tab + off, 0, pe->size - tab - off))
        return NULL;
    return (const char *)pe->p + tab + off;
}

static void codeview(struct pe *pe, uint32_t dir_rva, uint32_t dir_size)
{
    for (uint32_t i = 0; i < pe->nr_sec; i++) {
        const struct pe_sec *s = &pe->sec[i];
        if (dir_rva < s->vaddr || dir_rva - s->vaddr >= s->raw_size)
            continue;
        uint64_t off = (uint64_t)s->raw_off + (dir_rva - s->vaddr);
        for (uint32_t k = 0; k + 28 <= dir_size && in_file(pe, off + k, 28); k += 28) {
            const uint8_t *d = pe->p + off + k;
            uint32_t raw = le32(d + 24);
            if (le32(d + 12) != 2 || !in_file(pe, raw, 24) || memcmp(pe->p + raw, "RSDS", 4))
                continue; /* not IMAGE_DEBUG_TYPE_CODEVIEW */
            memcpy(pe->build_id, pe->p + raw + 4, 20);
            pe->has_build_id = 1;
            const uint8_t *name = pe->p + raw + 24;
            size_t room = pe->size - raw - 24;
            const uint8_t *nul = memchr(name, 0, room < sizeof(pe->pdb) ? room : sizeof(pe->pdb));
            if (nul)
                memcpy(pe->pdb, name, (size_t)(nul - name) + 1);
            return;
        }
    }
}

/* Returns 0, or -ENOEXEC when p is not a PE image it can read. */
static int pe_parse(struct pe *pe)
{
    const uint8_t *p = pe->p;

    if (!in_file(pe, 0, 64) || p[0] != 'M' || p[1] != 'Z')
        return -ENOEXEC;
    uint32_t nt = le32(p + 60);
    if (!in_file(pe, nt, 24) || memcmp(p + nt, "PE\0\0", 4))
        return -ENOEXEC;
    const uint8_t *coff = p + nt + 4;
    pe->machine = le16(coff);
    pe->nr_sec = le16(coff + 2);
    pe->sym_off = le32(coff + 8);
    pe->nr_syms = le32(coff + 12);
    uint16_t opt_size = le16(coff + 16);
    const uint8_t *opt = coff + 20;
    if (!in_file(pe, (uint64_t)(opt - p), opt_size) || opt_size < 96 ||
        pe->nr_sec > PE_MAX_SECTIONS)
        return -ENOEXEC;
    pe->is64 = le16(opt) == 0x20b;
    if (!pe->is64 && le16(opt) != 0x10b)
        return -ENOEXEC;
    pe->image_base = pe->is64 ? le32(opt + 24) | (uint64_t)le32(opt + 28) << 32 : le32(opt + 28);
    pe->image_size = le32(opt + 56);
    uint32_t dirs = pe->is64 ? 112 : 96; /* data directories: 0 exports, 6 debug */
    const uint8_t *sh = opt + opt_size;
    if (!in_file(pe, (uint64_t)(sh - p), (uint64_t)pe->nr_sec * 40))
        return -ENOEXEC;
    for (uint32_t i = 0; i < pe->nr_sec; i++, sh += 40) {
        struct pe_sec *s = &pe->sec[i];
        const char *longname = NULL;
        if (sh[0] == '/')
            longname = coff_str(pe, (uint32_t)strtoul((const char *)sh + 1, NULL, 10));
        if (longname)
            snprintf(s->name, sizeof(s->name), "%s", longname);
        else
            snprintf(s->name, sizeof(s->name), "%.8s", (const char *)sh);
        s->vsize = le32(sh + 8);
        s->vaddr = le32(sh + 12);
        s->raw_size = le32(sh + 16);
        s->raw_off = le32(sh + 20);
        s->flags = le32(sh + 36);
        if (!in_file(pe, s->raw_off, s->raw_size))
            s->raw_size = 0;
    }
    if (opt_size >= dirs + 8) {
        pe->export_rva = le32(opt + dirs);
        pe->export_size = le32(opt + dirs + 4);
    }
    if (opt_size >= dirs + 7 * 8)
        codeview(pe, le32(opt + dirs + 6 * 8), le32(opt + dirs + 6 * 8 + 4));
    return 0;
}

struct out_buf {
    uint8_t *v;
    size_t nr, cap;
};

static int put(struct out_buf *b, const void *p, size_t n)
{
    if (UTIL_ARRAY_RESERVE(b->v, b->cap, b->nr + n, 4096))
        return -ENOMEM;
    memcpy(b->v + b->nr, p, n);
    b->nr += n;
    return 0;
}

/* A 32-bit x86 COFF name as the source spells it: the compiler put '_'
 * before every C name (cdecl `_main`, stdcall `_Sleep@4`) and '@' before a
 * fastcall one (`@f@8`), and stdcall and fastcall names end in '@' and
 * their argument bytes; C++ names keep their mangling (`__Z3fooi` ->
 * `_Z3fooi`, for the demangler). As dbghelp shows them. Into buf. */
static const char *coff_undecorate(const char *name, char *buf, size_t size)
{
    size_t len;
    const char *at;

    if (name[0] != '_' && name[0] != '@')
        return name;
    name++;
    len = strlen(name);
    at = strrchr(name, '@');
    if (at && at > name && at[1] && strspn(at + 1, "0123456789") == strlen(at + 1))
        len = (size_t)(at - name);
    if (len >= size)
        len = size - 1;
    memcpy(buf, name, len);
    buf[len] = '\0';
    return buf;
}

/* The ELF .symtab being made (and its .strtab), and where each PE section
 * went: elf_index[i] is the ELF section of PE section i, 0 if not copied. */
struct symtab {
    const struct pe *pe;
    int is64;
    struct out_buf syms, strs;
    size_t elf_index[PE_MAX_SECTIONS];
};

/* The PE section holding rva (by its virtual size), or -1. */
static int rva_section(const struct pe *pe, uint32_t rva)
{
    for (uint32_t i = 0; i < pe->nr_sec; i++) {
        const struct pe_sec *s = &pe->sec[i];
        uint32_t span = s->vsize ? s->vsize : s->raw_size;
        if (rva >= s->vaddr && rva - s->vaddr < span)
            return (int)i;
    }
    return -1;
}

/* The file's bytes [rva, rva + len) when one section's raw data holds
 * them, else NULL. */
static const uint8_t *rva_bytes(const struct pe *pe, uint32_t rva, uint32_t len)
{
    int i = rva_section(pe, rva);

    if (i < 0 || (uint64_t)(rva - pe->sec[i].vaddr) + len > pe->sec[i].raw_size)
        return NULL;
    return pe->p + pe->sec[i].raw_off + (rva - pe->sec[i].vaddr);
}

/* A function symbol at ImageBase + rva, size bytes long (0: unknown, it
 * runs to the next symbol), when a copied (code) section holds it: an
 * export or COFF symbol elsewhere (data) names no frame. */
static int sym_add(struct symtab *t, const char *name, uint32_t rva, uint32_t size, int global)
{
    int sec = rva_section(t->pe, rva);
    uint32_t name_off = (uint32_t)t->strs.nr;
    uint64_t addr = t->pe->image_base + rva;
    uint8_t bind = global ? STB_GLOBAL : STB_LOCAL;
    int rc;

    if (sec < 0 || !t->elf_index[sec] || !*name)
        return 0;
    if ((rc = put(&t->strs, name, strlen(name) + 1)))
        return rc;
    if (t->is64) {
        Elf64_Sym e = {.st_name = name_off,
                       .st_info = ELF64_ST_INFO(bind, STT_FUNC),
                       .st_shndx = (uint16_t)t->elf_index[sec],
                       .st_value = addr,
                       .st_size = size};
        return put(&t->syms, &e, sizeof(e));
    }
    Elf32_Sym e = {.st_name = name_off,
                   .st_info = ELF32_ST_INFO(bind, STT_FUNC),
                   .st_shndx = (uint16_t)t->elf_index[sec],
                   .st_value = (uint32_t)addr,
                   .st_size = size};
    return put(&t->syms, &e, sizeof(e));
}

/* One COFF symbol record: its name (into buf for a short one), section
 * number (1-based; 0 and below are none), storage class and whether its
 * type is a function's (DT_FCN). NULL when the name is not readable. */
static const char *coff_sym(const struct pe *pe, const uint8_t *s, char buf[9], int16_t *sec,
                            uint8_t *cls, int *is_func)
{
    *sec = (int16_t)le16(s + 12);
    *cls = s[16];
    *is_func = (le16(s + 14) & 0x30) == 0x20;
    if (le32(s) == 0)
        return coff_str(pe, le32(s + 4));
    memcpy(buf, s, 8);
    buf[8] = '\0';
    return buf;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return x < y ? -1 : x > y;
}

/* Where code starts, by the COFF symbols: each function, and each section
 * definition in code (mingw's ld keeps one per input section: `.text` of
 * each object, `.text$NAME` and `.text.startup.NAME` of each function gcc
 * put in a section of its own, whether or not it has a symbol). A
 * function ends where the next one starts: a static constructor without
 * a function symbol is not named after the function before it. Sorted
 * RVAs, malloc'd into *out (NULL when none). */
static int coff_starts(const struct pe *pe, uint64_t **out, size_t *nr)
{
    uint64_t *v = NULL;
    size_t n = 0, cap = 0;

    *out = NULL;
    *nr = 0;
    for (uint32_t i = 0; i < pe->nr_syms; i++) {
        uint64_t off = (uint64_t)pe->sym_off + (uint64_t)i * 18;
        if (!in_file(pe, off, 18))
            break;
        const uint8_t *s = pe->p + off;
        char buf[9];
        int16_t sec;
        uint8_t cls;
        int is_func;
        coff_sym(pe, s, buf, &sec, &cls, &is_func);
        i += s[17];
        if ((cls != 2 && cls != 3) || sec < 1 || (uint32_t)sec > pe->nr_sec ||
            !(pe->sec[sec - 1].flags & 0x20)) /* IMAGE_SCN_CNT_CODE */
            continue;
        if (UTIL_ARRAY_RESERVE(v, cap, n + 1, 256)) {
            free(v);
            return -ENOMEM;
        }
        v[n++] = (uint64_t)pe->sec[sec - 1].vaddr + le32(s + 8);
    }
    if (n)
        qsort(v, n, sizeof(*v), cmp_u64);
    *out = v;
    *nr = n;
    return 0;
}

/* The COFF function symbols (mingw's ld keeps them unless stripped), each
 * up to the next start of code in its section (coff_starts). */
static int coff_symbols(struct symtab *t)
{
    const struct pe *pe = t->pe;
    uint64_t *starts;
    size_t nr_starts;
    int rc = coff_starts(pe, &starts, &nr_starts);

    for (uint32_t i = 0; !rc && i < pe->nr_syms; i++) {
        uint64_t off = (uint64_t)pe->sym_off + (uint64_t)i * 18;
        if (!in_file(pe, off, 18))
            break;
        const uint8_t *s = pe->p + off;
        char buf[9], plain[512];
        int16_t sec;
        uint8_t cls;
        int is_func;
        const char *name = coff_sym(pe, s, buf, &sec, &cls, &is_func);
        i += s[17];
        /* functions: external or static, in a section */
        if (!is_func || (cls != 2 && cls != 3) || sec < 1 || (uint32_t)sec > pe->nr_sec || !name ||
            !*name)
            continue;
        if (pe->machine == 0x14c) /* IMAGE_FILE_MACHINE_I386 */
            name = coff_undecorate(name, plain, sizeof(plain));
        const struct pe_sec *ps = &pe->sec[sec - 1];
        uint64_t rva = (uint64_t)ps->vaddr + le32(s + 8);
        size_t k = util_search_above(starts, nr_starts, sizeof(*starts), 0, rva);
        uint32_t size = 0;
        if (rva > UINT32_MAX)
            continue;
        if (k < nr_starts && starts[k] - ps->vaddr < (ps->vsize ? ps->vsize : ps->raw_size))
            size = (uint32_t)(starts[k] - rva);
        rc = sym_add(t, name, (uint32_t)rva, size, cls == 2);
    }
    free(starts);
    return rc;
}

/* The export table (IMAGE_EXPORT_DIRECTORY): each named export whose
 * address is code. A forwarder (an address inside the export directory: a
 * "DLL.Function" string) has no code here; an export by ordinal alone has
 * no name to show. Every count and address is checked against the file. */
static int export_symbols(struct symtab *t)
{
    const struct pe *pe = t->pe;
    const uint8_t *dir = pe->export_size >= 40 ? rva_bytes(pe, pe->export_rva, 40) : NULL;
    int rc = 0;

    if (!dir)
        return 0;
    uint32_t nr_funcs = le32(dir + 20), nr_names = le32(dir + 24);
    if (nr_funcs > PE_MAX_EXPORTS || nr_names > PE_MAX_EXPORTS)
        return 0;
    const uint8_t *funcs = rva_bytes(pe, le32(dir + 28), nr_funcs * 4);
    const uint8_t *names = rva_bytes(pe, le32(dir + 32), nr_names * 4);
    const uint8_t *ords = rva_bytes(pe, le32(dir + 36), nr_names * 2);
    if (!funcs || !names || !ords)
        return 0;
    for (uint32_t i = 0; !rc && i < nr_names; i++) {
        uint16_t ord = le16(ords + 2 * i);
        uint32_t rva = ord < nr_funcs ? le32(funcs + 4 * ord) : 0;
        uint32_t name_rva = le32(names + 4 * i);
        int sec = rva_section(pe, name_rva);
        if (!rva || (rva >= pe->export_rva && rva - pe->export_rva < pe->export_size) || sec < 0)
            continue; /* no address, or a forwarder */
        const struct pe_sec *ns = &pe->sec[sec];
        uint32_t room =
            name_rva - ns->vaddr < ns->raw_size ? ns->raw_size - (name_rva - ns->vaddr) : 0;
        const uint8_t *name = rva_bytes(pe, name_rva, 1);
        if (!name || !memchr(name, 0, room < 512 ? room : 512))
            continue; /* unended, or longer than any real name */
        rc = sym_add(t, (const char *)name, rva, 0, 1);
    }
    return rc;
}

static int add_section(Elf *elf, struct out_buf *shstr, const char *name, uint32_t type,
                       uint64_t flags, uint64_t addr, const void *data, size_t size, uint32_t link,
                       uint64_t entsize, size_t *index)
{
    Elf_Scn *scn = elf_newscn(elf);
    GElf_Shdr sh;
    Elf_Data *d;

    if (!scn || !gelf_getshdr(scn, &sh) || !(d = elf_newdata(scn)))
        return -ENOMEM;
    sh.sh_name = (uint32_t)shstr->nr;
    sh.sh_type = type;
    sh.sh_flags = flags;
    sh.sh_addr = addr;
    sh.sh_link = link;
    sh.sh_entsize = entsize;
    sh.sh_addralign = 1;
    d->d_buf = (void *)data;
    d->d_size = size;
    d->d_type = ELF_T_BYTE;
    d->d_align = 1;
    if (!gelf_update_shdr(scn, &sh))
        return -ENOMEM;
    if (index)
        *index = elf_ndxscn(scn);
    return put(shstr, name, strlen(name) + 1);
}

static int write_elf(const struct pe *pe, int fd)
{
    struct out_buf shstr = {0};
    struct symtab t = {.pe = pe, .is64 = pe->is64};
    Elf *elf = elf_begin(fd, ELF_C_WRITE, NULL);
    GElf_Ehdr eh;
    int rc = -ENOMEM;

    if (!elf || !gelf_newehdr(elf, pe->is64 ? ELFCLASS64 : ELFCLASS32) || !gelf_getehdr(elf, &eh))
        goto out;
    eh.e_ident[EI_DATA] = ELFDATA2LSB;
    eh.e_type = ET_DYN;
    eh.e_machine = pe->machine == 0x14c ? EM_386 : EM_X86_64;
    eh.e_version = EV_CURRENT;
    if (!gelf_update_ehdr(elf, &eh) || put(&shstr, "", 1))
        goto out;
    /* the build id note: namesz 4, descsz 20, NT_GNU_BUILD_ID, "GNU\0" */
    uint8_t note[16 + 20] = {4, 0, 0, 0, 20, 0, 0, 0, 3, 0, 0, 0, 'G', 'N', 'U', 0};
    memcpy(note + 16, pe->build_id, 20);
    if (pe->has_build_id && (rc = add_section(elf, &shstr, ".note.gnu.build-id", SHT_NOTE,
                                              SHF_ALLOC, 0, note, sizeof(note), 0, 0, NULL)))
        goto out;
    for (uint32_t i = 0; i < pe->nr_sec; i++) {
        const struct pe_sec *s = &pe->sec[i];
        int debug = !strncmp(s->name, ".debug_", 7);
        int code = (s->flags & 0x20000000) != 0; /* IMAGE_SCN_MEM_EXECUTE */
        if (!debug && !code)
            continue;
        size_t size = s->raw_size < s->vsize || !s->vsize ? s->raw_size : s->vsize;
        if ((rc = add_section(elf, &shstr, s->name, SHT_PROGBITS,
                              code ? SHF_ALLOC | SHF_EXECINSTR : 0,
                              code ? pe->image_base + s->vaddr : 0, pe->p + s->raw_off, size, 0, 0,
                              code ? &t.elf_index[i] : NULL)))
            goto out;
    }
    static const GElf_Sym null;
    if ((rc = put(&t.strs, "", 1)) ||
        (rc = put(&t.syms, &null, pe->is64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym))) ||
        (rc = coff_symbols(&t)) || (rc = export_symbols(&t)))
        goto out;
    size_t nr_scn;
    if (elf_getshdrnum(elf, &nr_scn))
        goto out;
    /* .symtab links to .strtab, the section after it */
    if ((rc = add_section(elf, &shstr, ".symtab", SHT_SYMTAB, 0, 0, t.syms.v, t.syms.nr,
                          (uint32_t)nr_scn + 1, pe->is64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym),
                          NULL)) ||
        (rc = add_section(elf, &shstr, ".strtab", SHT_STRTAB, 0, 0, t.strs.v, t.strs.nr, 0, 0,
                          NULL)))
        goto out;
    if ((rc = put(&shstr, ".shstrtab", 10)))
        goto out;
    Elf_Scn *scn = elf_newscn(elf);
    GElf_Shdr sh;
    Elf_Data *d;
    rc = -ENOMEM;
    if (!scn || !gelf_getshdr(scn, &sh) || !(d = elf_newdata(scn)))
        goto out;
    sh.sh_name = (uint32_t)shstr.nr - 10;
    sh.sh_type = SHT_STRTAB;
    sh.sh_addralign = 1;
    d->d_buf = shstr.v;
    d->d_size = shstr.nr;
    d->d_type = ELF_T_BYTE;
    if (!gelf_update_shdr(scn, &sh) || !gelf_getehdr(elf, &eh))
        goto out;
    eh.e_shstrndx = (uint16_t)elf_ndxscn(scn);
    if (!gelf_update_ehdr(elf, &eh))
        goto out;
    rc = elf_update(elf, ELF_C_WRITE) < 0 ? -EIO : 0;
out:
    if (elf)
        elf_end(elf);
    free(shstr.v);
    free(t.syms.v);
    free(t.strs.v);
    return rc;
}

int ana_sym_pe_open(int pe_fd, int *elf_fd, Elf **elf, struct ana_sym_pe_info *info)
{
    struct pe pe = {0};
    struct stat st;
    int rc;

    if (fstat(pe_fd, &st) || st.st_size < 64)
        return -ENOEXEC;
    void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, pe_fd, 0);
    if (map == MAP_FAILED)
        return -errno;
    pe.p = map;
    pe.size = (size_t)st.st_size;
    if ((rc = pe_parse(&pe)))
        goto out;
    int fd = memfd_create("memscribe-pe-elf", MFD_CLOEXEC);
    if (fd < 0) {
        rc = -errno;
        goto out;
    }
    if ((rc = write_elf(&pe, fd)) || !(*elf = elf_begin(fd, ELF_C_READ_MMAP, NULL))) {
        close(fd);
        rc = rc ? rc : -ENOEXEC;
        goto out;
    }
    info->pdb_name = pe.pdb[0] ? strdup(pe.pdb) : NULL;
    if (pe.pdb[0] && !info->pdb_name) {
        elf_end(*elf);
        close(fd);
        rc = -ENOMEM;
        goto out;
    }
    *elf_fd = fd;
    info->image_base = pe.image_base;
    info->image_size = pe.image_size;
out:
    munmap(map, (size_t)st.st_size);
    return rc;
}
