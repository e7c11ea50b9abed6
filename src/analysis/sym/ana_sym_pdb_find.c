/* SPDX-License-Identifier: MIT */
/* Where a Windows module's PDB is looked for (docs/windows.md, "Symbols"),
 * in order: the path in the PE's CodeView record (Wine's Z:\ is /), beside
 * the PE file and beside the recorded module path, each --debug-dir
 * (flat, and as a symbol store: NAME.pdb/GUIDAGE/NAME.pdb), and each
 * directory of --symbol-path and then of _NT_SYMBOL_PATH (plain
 * directories, and the local cache or store directories of srv*, symsrv*
 * and cache* elements; the network is never asked). Only a PDB with the
 * recorded GUID and age is used. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/sym/ana_sym_internal.h"

struct pdb_want {
    const uint8_t *id;
    uint32_t id_len;
    char base[256]; /* the PDB's file name */
    char store[80]; /* GUID and age as a symbol store names the directory; "" unknown */
    struct ana_sym_pdb **out;
    char **path; /* the file taken */
    char **note; /* the first bad or foreign PDB met */
};

/* Open and read path. 1: taken, 0: go on, -ENOMEM. */
static int try_pdb(struct pdb_want *w, const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    const char *why = NULL;
    int rc;

    if (fd < 0)
        return 0;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        close(fd);
        return 0;
    }
    if (st.st_size == 0) {
        why = "empty file";
        rc = -EPROTO;
    } else {
        void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map == MAP_FAILED) {
            why = strerror(errno);
            rc = -EPROTO;
        } else {
            rc = ana_sym_pdb_parse(w->out, map, (size_t)st.st_size, w->id, w->id_len, &why);
            munmap(map, (size_t)st.st_size);
        }
    }
    close(fd);
    if (!rc && !(*w->path = strdup(path))) {
        ana_sym_pdb_close(*w->out);
        *w->out = NULL;
        return -ENOMEM;
    }
    if (!rc || rc == -ENOMEM)
        return rc ? rc : 1;
    if (!*w->note &&
        asprintf(w->note, "%s: %s; not used", path,
                 rc == -ESTALE ? "another GUID or age than the module's CodeView record"
                 : why         ? why
                               : "unreadable PDB") < 0) {
        *w->note = NULL;
        return -ENOMEM;
    }
    return 0;
}

__attribute__((format(printf, 2, 3))) static int try_fmt(struct pdb_want *w, const char *fmt, ...)
{
    va_list ap;
    char *p;

    va_start(ap, fmt);
    int n = vasprintf(&p, fmt, ap);
    va_end(ap);
    if (n < 0)
        return -ENOMEM;
    int rc = try_pdb(w, p);
    free(p);
    return rc;
}

/* A recorded Windows path as a host path (malloc'd), or NULL when it has
 * none (another drive, or a relative path). */
static char *host_path(const char *path)
{
    if (path[0] == '/')
        return strdup(path);
    if ((path[0] != 'Z' && path[0] != 'z') || path[1] != ':' || path[2] != '\\')
        return NULL;
    char *p = strdup(path);
    if (p)
        ana_sym_win_host_path(p);
    return p;
}

/* dir/base, and dir as a symbol store. */
static int try_dir(struct pdb_want *w, const char *dir)
{
    char *d = host_path(dir);
    int rc;

    if (!d && dir[0] && dir[1] != ':')
        d = strdup(dir); /* relative: as the host sees it */
    if (!d)
        return 0;
    rc = try_fmt(w, "%s/%s", d, w->base);
    if (!rc && w->store[0])
        rc = try_fmt(w, "%s/%s/%s/%s", d, w->base, w->store, w->base);
    free(d);
    return rc;
}

/* The directory part of path (host form) and base. */
static int try_beside(struct pdb_want *w, const char *path)
{
    char *p = path ? host_path(path) : NULL;
    char *slash = p ? strrchr(p, '/') : NULL;
    int rc = 0;

    if (slash) {
        *slash = '\0';
        rc = try_fmt(w, "%s/%s", p, w->base);
    }
    free(p);
    return rc;
}

/* One _NT_SYMBOL_PATH element: "dir", "srv*cache*url", "srv*dir",
 * "symsrv*dll*cache*url", "cache*dir". Every local directory in it. */
static int try_element(struct pdb_want *w, char *el)
{
    bool starred = strchr(el, '*') != NULL;
    bool symsrv = !strncasecmp(el, "symsrv*", 7);
    int rc = 0, i = 0;

    if (!starred)
        return try_dir(w, el);
    for (char *save = NULL, *part = strtok_r(el, "*", &save); part && !rc;
         part = strtok_r(NULL, "*", &save), i++) {
        if (i == 0 || (symsrv && i == 1) || strstr(part, "://"))
            continue; /* srv, symsrv, cache, the symsrv DLL, a server */
        rc = try_dir(w, part);
    }
    return rc;
}

/* Each element of a symbol path (--symbol-path, _NT_SYMBOL_PATH). */
static int try_symbol_path(struct pdb_want *w, const char *path)
{
    int rc = 0;

    if (!path || !*path)
        return 0;
    char *copy = strdup(path);
    if (!copy)
        return -ENOMEM;
    for (char *save = NULL, *el = strtok_r(copy, ";", &save); el && !rc;
         el = strtok_r(NULL, ";", &save))
        rc = try_element(w, el);
    free(copy);
    return rc;
}

static void set_base(struct pdb_want *w, const char *pdb_name, const char *module_path)
{
    const char *name = pdb_name && *pdb_name ? pdb_name : module_path;
    const char *b = name;

    for (const char *c = name; *c; c++)
        if (*c == '/' || *c == '\\')
            b = c + 1;
    snprintf(w->base, sizeof(w->base), "%s", b);
    if (name == module_path) { /* foo.exe -> foo.pdb */
        char *dot = strrchr(w->base, '.');
        if (!dot)
            dot = w->base + strlen(w->base);
        snprintf(dot, sizeof(w->base) - (size_t)(dot - w->base), ".pdb");
    }
}

int ana_sym_pdb_find(const struct ana_sym_options *opts, const char *module_path,
                     const char *pe_path, const char *pdb_name, const uint8_t *id, uint32_t id_len,
                     struct ana_sym_pdb **out, char **path, char **note)
{
    struct pdb_want w = {.id = id, .id_len = id_len, .out = out, .path = path, .note = note};
    int rc = 0;

    *out = NULL;
    *path = NULL;
    *note = NULL;
    set_base(&w, pdb_name, module_path);
    if (!w.base[0] || !strcmp(w.base, ".pdb"))
        return 0;
    if (id_len == 20) {
        const uint8_t *g = id;
        snprintf(w.store, sizeof(w.store), "%08X%04X%04X%02X%02X%02X%02X%02X%02X%02X%02X%X",
                 (unsigned)(g[0] | g[1] << 8 | g[2] << 16 | (uint32_t)g[3] << 24),
                 (unsigned)(g[4] | g[5] << 8), (unsigned)(g[6] | g[7] << 8), g[8], g[9], g[10],
                 g[11], g[12], g[13], g[14], g[15],
                 (unsigned)(g[16] | g[17] << 8 | g[18] << 16 | (uint32_t)g[19] << 24));
    }
    if (pdb_name && *pdb_name) {
        char *p = host_path(pdb_name);
        rc = p ? try_pdb(&w, p) : 0;
        free(p);
    }
    if (!rc)
        rc = try_beside(&w, pe_path);
    if (!rc)
        rc = try_beside(&w, module_path);
    for (size_t i = 0; !rc && i < opts->nr_debug_dirs; i++)
        rc = try_dir(&w, opts->debug_dirs[i]);
    if (!rc)
        rc = try_symbol_path(&w, opts->symbol_path);
    if (!rc)
        rc = try_symbol_path(&w, getenv("_NT_SYMBOL_PATH"));
    if (rc == 1) {
        free(*note); /* a bad copy elsewhere does not matter now */
        *note = NULL;
    } else if (!rc && !*note && pdb_name && *pdb_name &&
               asprintf(note,
                        "%s: its PDB %s not found (CodeView path, beside the module, --debug-dir, "
                        "--symbol-path, _NT_SYMBOL_PATH); frames without DWARF show "
                        "module+offset",
                        module_path, pdb_name) < 0) {
        *note = NULL;
        rc = -ENOMEM;
    }
    return rc < 0 ? rc : 0;
}
