/* SPDX-License-Identifier: MIT */
/* Pieces the symbolizer's files share: the string arena, the per-module
 * state, the sorted symbol table, the DWARF index, the file finder and
 * the symbol cache on disk. */
#ifndef ANA_SYM_INTERNAL_H
#define ANA_SYM_INTERNAL_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/sym/ana_symbolize.h"

/* ---- arena: strings and frame arrays that live as long as the symbolizer */

struct ana_sym_arena_chunk;

struct ana_sym_arena {
    struct ana_sym_arena_chunk *head;
    size_t used; /* bytes used in head */
    size_t cap;  /* bytes available in head */
};

void *ana_sym_arena_alloc(struct ana_sym_arena *a, size_t size);
/* Copy len bytes of s and a NUL. NULL on allocation failure. */
char *ana_sym_arena_strndup(struct ana_sym_arena *a, const char *s, size_t len);
void ana_sym_arena_free(struct ana_sym_arena *a);

/* ---- sorted symbol table of one module */

struct ana_sym_symbol {
    uint64_t addr;    /* st_value: ELF virtual address */
    uint64_t end;     /* one past the last byte: addr + st_size, or up to the next
                         symbol (at most the section end) when st_size is 0 */
    const char *name; /* mangled, points into the ELF file's string table */
};

struct ana_sym_table {
    struct ana_sym_symbol *syms; /* sorted by addr, one per address */
    size_t nr;
};

/* Build the table from the function symbols of every file given (.symtab
 * and .dynsym; a debug file's .symtab with the stripped binary's .dynsym).
 * Aliases collapse to one name per address. Returns 0 or -ENOMEM. */
int ana_sym_table_build(struct ana_sym_table *t, Elf *const *elfs, size_t nr_elfs);
/* The symbol whose range holds vaddr, or NULL. */
const struct ana_sym_symbol *ana_sym_table_find(const struct ana_sym_table *t, uint64_t vaddr);
void ana_sym_table_free(struct ana_sym_table *t);

/* ---- DWARF: source line and inline chain */

struct ana_sym_dwarf;

#define ANA_SYM_MAX_INLINE 64 /* deeper chains keep their innermost frames */

struct ana_sym_dwarf_frame {
    const char *name; /* linkage name (mangled) if any, else DW_AT_name; NULL: none */
    const char *file; /* NULL: unknown */
    uint32_t line;
    uint32_t column;
};

struct ana_sym_dwarf_chain {
    struct ana_sym_dwarf_frame frames[ANA_SYM_MAX_INLINE]; /* innermost first */
    uint32_t nr_frames; /* 0: no function DIE holds the address */
    uint64_t outer_low; /* start of the outermost function's range holding the address */
    /* Source position when no function DIE holds the address, from the
     * line table alone (assembly, or a CU without subprograms). */
    const char *file;
    uint32_t line;
    uint32_t column;
};

/* Open the DWARF of elf (which must stay open). Returns 0, -ENODATA when
 * the file has no DWARF, or -ENOMEM. */
int ana_sym_dwarf_open(struct ana_sym_dwarf **out, Elf *elf);
/* Fill *out for ELF virtual address pc. Returns 0, -ENOENT when no compile
 * unit covers pc, or -ENOMEM. */
int ana_sym_dwarf_lookup(struct ana_sym_dwarf *d, uint64_t pc, struct ana_sym_dwarf_chain *out);
void ana_sym_dwarf_close(struct ana_sym_dwarf *d);

/* ---- code bytes (ana_sym_sigtramp.c) */

struct ana_sym_code_range {
    uint64_t vaddr, size;
    const uint8_t *data;
};

/* The executable sections of a module whose bytes the file holds. */
struct ana_sym_code {
    struct ana_sym_code_range *v;
    size_t nr;
};

/* Collect elf's code sections (none for a debug file: its .text is
 * NOBITS). Returns 0 or -ENOMEM. */
int ana_sym_code_load(struct ana_sym_code *c, Elf *elf);
/* Is the code at vaddr a signal return trampoline (rt_sigreturn)? */
bool ana_sym_code_is_sigreturn(const struct ana_sym_code *c, uint64_t vaddr);
void ana_sym_code_free(struct ana_sym_code *c);

/* ---- line tables (ana_sym_lines.c) */

/* The DWARF sections a line table refers to, decompressed. */
struct ana_sym_sections {
    const uint8_t *line, *line_str, *str;
    size_t line_size, line_str_size, str_size;
};

struct ana_sym_lines;

/* Decode the line table at .debug_line offset (a unit's DW_AT_stmt_list).
 * Returns 0, -EPROTO when the table is corrupt or uses something this
 * decoder does not handle (use libdw then), or -ENOMEM. */
int ana_sym_lines_decode(struct ana_sym_lines **out, const struct ana_sym_sections *sec,
                         uint64_t offset, const char *comp_dir);
/* The row in effect at pc: file number, line, column. 0 or -ENOENT. */
int ana_sym_lines_find(const struct ana_sym_lines *lt, uint64_t pc, uint32_t *file, uint32_t *line,
                       uint32_t *column);
/* The path of file number index (joined with its directory, in a), or NULL. */
const char *ana_sym_lines_file(struct ana_sym_lines *lt, struct ana_sym_arena *a, uint64_t index);
void ana_sym_lines_free(struct ana_sym_lines *lt);

/* ---- demangling */

/* The demangled form of a C++ or Rust (legacy and v0) symbol, without a
 * compiler clone suffix (.constprop.0, .cold, ...), in the arena; name
 * itself when there is nothing to change; NULL on ENOMEM. */
const char *ana_sym_demangle(struct ana_sym_arena *a, const char *name);

/* ---- finding a module's files */

struct ana_sym_file {
    int fd;                 /* -1: none */
    Elf *elf;               /* NULL: none */
    char *path;             /* malloc'd */
    uint64_t pe_base;       /* a Windows PE read as ELF: its ImageBase; 0 for ELF */
    uint32_t pe_image_size; /* ... its SizeOfImage */
    char *pdb_name;         /* a PE's CodeView PDB name (malloc'd), or NULL */
};

/* What a PE file says of itself. */
struct ana_sym_pe_info {
    uint64_t image_base;
    uint32_t image_size; /* SizeOfImage: what a module of it maps */
    char *pdb_name;      /* the CodeView record's PDB name (malloc'd), NULL if none */
};

/* A Windows PE file (pe_fd) as an ELF file in memory with its DWARF
 * sections, function symbols (COFF and the export table's names) and
 * CodeView id as build id (ana_sym_pe.c). Addresses are the PE's:
 * ImageBase + RVA. Returns 0 and an open memfd, its Elf and *info, or
 * -ENOEXEC (not a PE) or -errno. */
int ana_sym_pe_open(int pe_fd, int *elf_fd, Elf **elf, struct ana_sym_pe_info *info);
/* A path Wine recorded, "Z:\\dir\\file", as the host's "/dir/file", in
 * place. Other drives are left as they are. */
void ana_sym_win_host_path(char *p);

/* ---- Windows modules under Wine (ana_sym_wine.c) */

/* Is path a Windows path as Wine records it ("C:\\dir\\file")? */
bool ana_sym_is_win_path(const char *path);

/* Where Wine keeps the files behind Windows paths: the prefix the program
 * ran in and the folders of Wine's own DLLs, each as the trace recorded it
 * or, when it did not, as this host has it (util_wine.h). */
struct ana_sym_wine {
    const char *prefix;   /* NULL: none */
    const char *dll_dirs; /* NUL-separated words, dll_dirs_len bytes */
    size_t dll_dirs_len;
    bool prefix_recorded, dirs_recorded;
};

/* Called with each candidate file and how it was found (a phrase for a
 * note); non-zero stops the search and is returned. */
typedef int ana_sym_wine_fn(void *arg, const char *path, const char *how);

/* Offer fn each existing host file that may be the module recorded at
 * win_path ("X:\\dir\\file"), in order: X:'s folder in the prefix's
 * dosdevices (system32 also as syswow64), then the file's name in each
 * DLL folder; names matched without case. Recorded folders are taken under
 * sysroot (NULL: /). Returns what fn returned to stop, 0 after the last,
 * or -ENOMEM. */
int ana_sym_wine_search(const struct ana_sym_wine *w, const char *sysroot, const char *win_path,
                        ana_sym_wine_fn *fn, void *arg);

/* The places the search looks, for a note (malloc'd *out; "" when there
 * is no prefix and no DLL folder). 0 or -ENOMEM. */
int ana_sym_wine_places(const struct ana_sym_wine *w, char **out);

struct ana_sym_found {
    struct ana_sym_file bin;       /* the binary: symbols, and DWARF if not stripped */
    struct ana_sym_file dbg;       /* a separate debug file, if one was found */
    const char *bin_how, *dbg_how; /* where each was found (static phrases) */
    char *note; /* malloc'd: why the module will show as module+offset, or NULL */
    bool asked_debuginfod;
};

/* What is known of a module, to find its files by. */
struct ana_sym_module_id {
    const char *path; /* as recorded */
    const uint8_t *build_id;
    uint32_t build_id_len;  /* 0: unknown */
    uint32_t pe_image_size; /* a Windows module's SizeOfImage as recorded; 0: not checked */
};

/* Look for the binary and debug files of a module. A file whose build id
 * (or, for a PE, size of image) differs from the recorded one is never
 * used. A Windows path other than Z:\\ is looked for through wine
 * (ana_sym_wine_search) before --debug-dir. Returns 0 (look at what was
 * found) or -ENOMEM. */
int ana_sym_find_files(const struct ana_sym_options *opts, const struct ana_sym_wine *wine,
                       const struct ana_sym_module_id *id, struct ana_sym_found *out);
void ana_sym_found_release(struct ana_sym_found *f);

/* Does elf carry DWARF debug info (a .debug_info with contents)? */
bool ana_sym_elf_has_dwarf(Elf *elf);

/* Ask debuginfod (only called when DEBUGINFOD_URLS is set and not empty)
 * for a debug file (want_executable false) or the binary. Returns an open
 * fd and sets *path (malloc'd), or -errno. */
int ana_sym_debuginfod_find(const uint8_t *build_id, uint32_t build_id_len, bool want_executable,
                            char **path);

/* ---- PDB files (ana_sym_msf.c, ana_sym_pdb.c, ana_sym_pdb_find.c) */

/* An MSF container over data (which must outlive it): numbered streams. */
struct ana_sym_msf {
    const uint8_t *data;
    size_t size;
    uint32_t block_size, nr_blocks, nr_streams;
    uint8_t *dir; /* the stream directory, gathered */
    uint32_t dir_size;
    uint32_t *lists; /* per stream: offset in dir of its block list */
};

/* Read the superblock and stream directory. Returns 0, -EPROTO (*why: what
 * is wrong) or -ENOMEM. */
int ana_sym_msf_open(struct ana_sym_msf *m, const uint8_t *data, size_t size, const char **why);
/* Stream index, gathered into a malloc'd buffer. 0, -EPROTO or -ENOMEM. */
int ana_sym_msf_stream(const struct ana_sym_msf *m, uint32_t index, uint8_t **out, uint32_t *size,
                       const char **why);
void ana_sym_msf_close(struct ana_sym_msf *m);

struct ana_sym_pdb;

#define ANA_SYM_PDB_MAX_INLINE 16 /* deeper inline chains keep their innermost frames */

/* What a PDB says about one RVA. */
struct ana_sym_pdb_hit {
    const char *function; /* NULL: no procedure or public symbol holds it */
    uint32_t function_rva;
    const char *file; /* NULL: no line row holds it */
    uint32_t line;
    /* The functions inlined at rva (S_INLINESITE), innermost first; the
     * procedure's own line (above) is the call of the outermost one. */
    struct {
        const char *function, *file;
        uint32_t line;
    } inl[ANA_SYM_PDB_MAX_INLINE];
    uint32_t nr_inline;
};

/* Read a PDB from memory (size bytes, copied as needed: data may go after
 * the call). id: the recorded CodeView GUID (16 bytes) and age (4, little
 * endian); id_len 0: not checked. Returns 0, -EPROTO (*why: what is
 * wrong), -ESTALE (another GUID or age) or -ENOMEM. */
int ana_sym_pdb_parse(struct ana_sym_pdb **out, const uint8_t *data, size_t size, const uint8_t *id,
                      uint32_t id_len, const char **why);
/* The function and line at rva. 0, or -ENOENT when neither is known. */
int ana_sym_pdb_lookup(const struct ana_sym_pdb *p, uint64_t rva, struct ana_sym_pdb_hit *out);
void ana_sym_pdb_close(struct ana_sym_pdb *p);

/* Find and read the PDB of a Windows module (docs/windows.md, "Symbols"):
 * pdb_name from the PE's CodeView record (NULL: unknown, then the module's
 * name with .pdb), module_path as recorded, pe_path the PE file used (or
 * NULL). Only a PDB with the recorded GUID and age is taken. Returns 0
 * with *out set and *path its file (malloc'd), or *out NULL (then *note,
 * malloc'd, may say why), or -ENOMEM. */
int ana_sym_pdb_find(const struct ana_sym_options *opts, const char *module_path,
                     const char *pe_path, const char *pdb_name, const uint8_t *id, uint32_t id_len,
                     struct ana_sym_pdb **out, char **path, char **note);

/* ---- the symbol cache on disk (ana_symbolize.h, ana_sym_options.cache;
 * the file's layout: ana_sym_cache.c) */

struct ana_sym_cache;

/* Open path (made 0600 if missing) for a symbolizer whose frames depend on
 * key. A symbolic link at path is followed only if it is the caller's or
 * root's (/dev/fd/N); the file must be a regular one of the caller's, and
 * empty or a cache (never another file written over). Returns 0, or
 * -errno with why (a phrase) set; *out NULL then. */
int ana_sym_cache_open(struct ana_sym_cache **out, const char *path, uint64_t key, char *why,
                       size_t why_size);

/* The frames cached for (build id, offset, kind) into f[0 ..) (at most
 * ANA_SYM_MAX_INLINE), each with base's address, module and offset and
 * the rest from the file (above), their strings copied into a: their
 * count; 0 when not cached (f may be written then), or -ENOMEM. */
int ana_sym_cache_find(struct ana_sym_cache *c, const uint8_t *build_id, uint32_t build_id_len,
                       uint64_t offset, unsigned kind, const struct ana_sym_frame *base,
                       struct ana_sym_frame *f, struct ana_sym_arena *a);

/* Was the module read by a symbolizer that wrote here: true with *note its
 * note (NULL for none; valid until ana_sym_cache_close). */
bool ana_sym_cache_module(struct ana_sym_cache *c, const uint8_t *build_id, uint32_t build_id_len,
                          const char **note);

/* Keep n frames of an address, or a module's note, for the append at
 * close. 0 or -ENOMEM. */
int ana_sym_cache_add(struct ana_sym_cache *c, const uint8_t *build_id, uint32_t build_id_len,
                      uint64_t offset, unsigned kind, const struct ana_sym_frame *f, uint32_t n);
int ana_sym_cache_add_module(struct ana_sym_cache *c, const uint8_t *build_id,
                             uint32_t build_id_len, const char *note);

/* The key of the options frames depend on (--debug-dir, --sysroot,
 * --symbol-path) and of this memscribe. */
uint64_t ana_sym_cache_key(const struct ana_sym_options *o);

/* Append what was added and close. Nothing is lost to the caller when the
 * append fails: the cache is only a shortcut. */
void ana_sym_cache_close(struct ana_sym_cache *c);

#endif
