/* SPDX-License-Identifier: MIT */
/* Symbols of a file mapped in another process (record -p): which file
 * /proc/PID/maps shows, where it is loaded, and a symbol's value in its
 * ELF symbol tables, read from the file as that process sees it. */
#include <elf.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recorder/rec_attach.h"

/* The lowest mapping of a file whose path ends in suffix: its start, the
 * file offset it maps, and the path. 0 if none. */
static uint64_t rec_maps_find(pid_t pid, const char *suffix, uint64_t *offset, char *path,
                              size_t path_size)
{
    char name[64], line[4352];
    size_t slen = strlen(suffix);
    uint64_t best = 0;
    FILE *f;

    snprintf(name, sizeof(name), "/proc/%d/maps", (int)pid);
    f = fopen(name, "re");
    if (!f)
        return 0;
    while (fgets(line, sizeof(line), f)) {
        uint64_t lo, hi, off;
        char file[4096];
        size_t flen;

        file[0] = 0;
        if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64 " %*s %*s %4095[^\n]", &lo, &hi,
                   &off, file) < 3)
            continue;
        flen = strlen(file);
        if (flen < slen || strcmp(file + flen - slen, suffix) || (best && lo >= best))
            continue;
        best = lo;
        *offset = off;
        snprintf(path, path_size, "%s", file);
    }
    fclose(f);
    return best;
}

/* A symbol's value in an ELF image of m_size bytes of one class (its
 * .dynsym, else .symtab); sets *first_load to the first PT_LOAD's
 * page-aligned address. 0 if absent or undefined. The same code for
 * both classes, by their types. */
#define REC_ELF_SCAN(name, Ehdr, Phdr, Shdr, Sym, ST_TYPE)                                         \
    static uint64_t name(const unsigned char *m, uint64_t m_size, const char *want,                \
                         uint64_t *first_load)                                                     \
    {                                                                                              \
        const Ehdr *eh = (const Ehdr *)m;                                                          \
        const Shdr *sh;                                                                            \
                                                                                                   \
        if (m_size < sizeof(Ehdr) ||                                                               \
            eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Shdr) > m_size ||                         \
            eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(Phdr) > m_size)                           \
            return 0;                                                                              \
        for (unsigned i = 0; i < eh->e_phnum; i++) {                                               \
            const Phdr *ph = (const Phdr *)(m + eh->e_phoff) + i;                                  \
                                                                                                   \
            if (ph->p_type == PT_LOAD) {                                                           \
                *first_load = ph->p_vaddr & ~(uint64_t)4095;                                       \
                break;                                                                             \
            }                                                                                      \
        }                                                                                          \
        sh = (const Shdr *)(m + eh->e_shoff);                                                      \
        for (unsigned pass = 0; pass < 2; pass++)                                                  \
            for (unsigned i = 0; i < eh->e_shnum; i++) {                                           \
                const Shdr *s = &sh[i], *strs;                                                     \
                                                                                                   \
                if (s->sh_type != (pass ? SHT_SYMTAB : SHT_DYNSYM) || s->sh_link >= eh->e_shnum || \
                    s->sh_offset + (uint64_t)s->sh_size > m_size)                                  \
                    continue;                                                                      \
                strs = &sh[s->sh_link];                                                            \
                if (strs->sh_offset + (uint64_t)strs->sh_size > m_size)                            \
                    continue;                                                                      \
                for (uint64_t k = 0; k < s->sh_size / sizeof(Sym); k++) {                          \
                    const Sym *sym = (const Sym *)(m + s->sh_offset) + k;                          \
                    const char *str = (const char *)m + strs->sh_offset + sym->st_name;            \
                                                                                                   \
                    if (sym->st_name < strs->sh_size && sym->st_shndx != SHN_UNDEF &&              \
                        sym->st_value && ST_TYPE(sym->st_info) == STT_FUNC &&                      \
                        strnlen(str, strs->sh_size - sym->st_name) <                               \
                            strs->sh_size - sym->st_name &&                                        \
                        !strcmp(str, want))                                                        \
                        return sym->st_value;                                                      \
                }                                                                                  \
            }                                                                                      \
        return 0;                                                                                  \
    }
REC_ELF_SCAN(rec_elf_scan64, Elf64_Ehdr, Elf64_Phdr, Elf64_Shdr, Elf64_Sym, ELF64_ST_TYPE)
REC_ELF_SCAN(rec_elf_scan32, Elf32_Ehdr, Elf32_Phdr, Elf32_Shdr, Elf32_Sym, ELF32_ST_TYPE)

/* A symbol's value in the ELF file at path, 64- or 32-bit. */
static uint64_t rec_elf_value(const char *path, const char *want, uint64_t *first_load)
{
    struct stat st;
    const unsigned char *m;
    uint64_t value = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);

    *first_load = UINT64_MAX;
    if (fd < 0)
        return 0;
    if (fstat(fd, &st) != 0 || (size_t)st.st_size < EI_NIDENT) {
        close(fd);
        return 0;
    }
    m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        return 0;
    if (!memcmp(m, ELFMAG, SELFMAG) && m[EI_CLASS] == ELFCLASS64)
        value = rec_elf_scan64(m, (uint64_t)st.st_size, want, first_load);
    else if (!memcmp(m, ELFMAG, SELFMAG) && m[EI_CLASS] == ELFCLASS32)
        value = rec_elf_scan32(m, (uint64_t)st.st_size, want, first_load);
    munmap((void *)m, (size_t)st.st_size);
    return value;
}

uint64_t rec_attach_symbol(pid_t pid, const char *file_suffix, const char *name, char *path,
                           size_t path_size)
{
    char inside[4200];
    uint64_t offset = 0, start, value, first_load;

    start = rec_maps_find(pid, file_suffix, &offset, path, path_size);
    if (!start || offset != 0)
        return 0;
    /* The file as the process sees it (its mount namespace, a file
     * replaced on disk since it was loaded): through /proc/PID/root. */
    snprintf(inside, sizeof(inside), "/proc/%d/root%s", (int)pid, path);
    value = rec_elf_value(inside, name, &first_load);
    if (!value)
        value = rec_elf_value(path, name, &first_load);
    if (!value || first_load == UINT64_MAX)
        return 0;
    return start - first_load + value;
}
