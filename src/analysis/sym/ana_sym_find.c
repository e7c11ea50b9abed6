/* SPDX-License-Identifier: MIT */
/* Finding a module's files: the binary at its recorded path (under
 * --sysroot), then a debug file by build id (--debug-dir, the system's
 * /usr/lib/debug/.build-id), by name in --debug-dir, by .gnu_debuglink,
 * and last by debuginfod when the user configured it. A file is used only
 * when its build id is the recorded one: a wrong file gives wrong names. */
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/sym/ana_sym_internal.h"

#define SYSTEM_DEBUG_DIR "/usr/lib/debug"

struct want {
    const struct ana_sym_options *opts;
    const char *path; /* as recorded */
    const uint8_t *build_id;
    uint32_t build_id_len;
};

enum check {
    CHECK_OK = 0,
    CHECK_MISSING = 1,  /* cannot open, or not ELF */
    CHECK_MISMATCH = 2, /* opened, but another build id */
};

static void file_close(struct ana_sym_file *f)
{
    if (f->elf)
        elf_end(f->elf);
    if (f->fd >= 0)
        close(f->fd);
    free(f->path);
    free(f->pdb_name);
    f->elf = NULL;
    f->fd = -1;
    f->path = NULL;
    f->pdb_name = NULL;
}

/* Open path as an ELF file. Returns 0 or -errno (-ENOEXEC: not ELF). */
static int file_open(const char *path, struct ana_sym_file *f)
{
    f->fd = open(path, O_RDONLY | O_CLOEXEC);
    f->elf = NULL;
    f->path = NULL;
    f->pdb_name = NULL;
    if (f->fd < 0)
        return -errno;
    f->elf = elf_begin(f->fd, ELF_C_READ_MMAP, NULL);
    f->path = strdup(path);
    f->pe_base = 0;
    if (f->elf && elf_kind(f->elf) != ELF_K_ELF) { /* a Windows PE? */
        int efd;
        Elf *e;
        if (!ana_sym_pe_open(f->fd, &efd, &e, &f->pe_base, &f->pdb_name)) {
            elf_end(f->elf);
            close(f->fd);
            f->fd = efd;
            f->elf = e;
        }
    }
    if (!f->elf || elf_kind(f->elf) != ELF_K_ELF || !f->path) {
        int rc = f->path ? -ENOEXEC : -ENOMEM;
        file_close(f);
        return rc;
    }
    return 0;
}

bool ana_sym_elf_has_dwarf(Elf *elf)
{
    size_t shstrndx;
    Elf_Scn *scn = NULL;

    if (elf_getshdrstrndx(elf, &shstrndx) != 0)
        return false;
    while ((scn = elf_nextscn(elf, scn))) {
        GElf_Shdr sh;
        const char *name;

        if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS || sh.sh_size == 0)
            continue;
        name = elf_strptr(elf, shstrndx, sh.sh_name);
        if (name && (!strcmp(name, ".debug_info") || !strcmp(name, ".zdebug_info")))
            return true;
    }
    return false;
}

static bool same_build_id(Elf *elf, const uint8_t *id, uint32_t len)
{
    const void *fid;
    ssize_t flen = dwelf_elf_gnu_build_id(elf, &fid);

    return flen == (ssize_t)len && memcmp(fid, id, len) == 0;
}

/* The CRC-32 that .gnu_debuglink stores (polynomial 0xedb88320, as zlib's
 * crc32), over the whole debug file. Only needed when no build id is known. */
static int file_crc32(int fd, uint32_t *out)
{
    static uint32_t table[256];
    static bool have_table;
    unsigned char buf[65536];
    uint32_t crc = 0xffffffffu;
    off_t pos = 0;
    ssize_t n;

    if (!have_table) {
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int k = 0; k < 8; k++)
                c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
            table[i] = c;
        }
        have_table = true;
    }
    while ((n = pread(fd, buf, sizeof(buf), pos)) > 0) {
        for (ssize_t i = 0; i < n; i++)
            crc = table[(crc ^ buf[i]) & 0xff] ^ (crc >> 8);
        pos += n;
    }
    if (n < 0)
        return -errno;
    *out = crc ^ 0xffffffffu;
    return 0;
}

/* Open a candidate and check it is the recorded module's. */
static enum check try_file(const struct want *w, const char *path, struct ana_sym_file *f)
{
    if (file_open(path, f))
        return CHECK_MISSING;
    if (w->build_id_len && !same_build_id(f->elf, w->build_id, w->build_id_len)) {
        file_close(f);
        return CHECK_MISMATCH;
    }
    return CHECK_OK;
}

static char *join(const char *a, const char *b, const char *c)
{
    char *s;

    if (asprintf(&s, "%s%s%s", a ? a : "", b ? b : "", c ? c : "") < 0)
        return NULL;
    return s;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, path[0] && path[1] == ':' ? '\\' : '/');

    return slash ? slash + 1 : path;
}

/* A path Wine recorded, "Z:\\dir\\file", as the host's "/dir/file", in
 * place (no longer than it was). Other drives are left as they are: their
 * files are found by name in --debug-dir directories. */
void ana_sym_win_host_path(char *p)
{
    if (p[0] != 'Z' && p[0] != 'z')
        return;
    memmove(p, p + 2, strlen(p + 2) + 1);
    for (; *p; p++)
        if (*p == '\\')
            *p = '/';
}

/* Take a found file: the debug file if it has DWARF, else the binary if
 * none yet (a stripped copy still has symbols). Returns true when the
 * search is over (DWARF found). */
static bool adopt(struct ana_sym_found *out, struct ana_sym_file *f)
{
    if (ana_sym_elf_has_dwarf(f->elf)) {
        out->dbg = *f;
        return true;
    }
    if (!out->bin.elf)
        out->bin = *f;
    else
        file_close(f);
    return false;
}

/* Try a path built from parts; -ENOMEM, 1 when the search is over, 0 to go on. */
static int try_candidate(const struct want *w, struct ana_sym_found *out, const char *a,
                         const char *b, const char *c)
{
    char *p = join(a, b, c);
    struct ana_sym_file f;

    if (!p)
        return -ENOMEM;
    int found = try_file(w, p, &f) == CHECK_OK;
    free(p);
    if (!found)
        return 0;
    return adopt(out, &f) ? 1 : 0;
}

/* xx/yyyy of a build id, as .build-id directories name files. */
static char *build_id_rel(const uint8_t *id, uint32_t len)
{
    char *s = malloc(2 * len + 2);

    if (!s)
        return NULL;
    char *p = s;
    for (uint32_t i = 0; i < len; i++) {
        p += sprintf(p, "%02x", id[i]);
        if (i == 0)
            *p++ = '/';
    }
    *p = '\0';
    return s;
}

static int search_build_id(const struct want *w, struct ana_sym_found *out)
{
    char *rel = build_id_rel(w->build_id, w->build_id_len);
    int rc = 0;

    if (!rel)
        return -ENOMEM;
    for (size_t i = 0; i < w->opts->nr_debug_dirs && !rc; i++) {
        const char *dir = w->opts->debug_dirs[i];
        char *p = join(dir, "/.build-id/", rel);

        if (!p) {
            rc = -ENOMEM;
            break;
        }
        rc = try_candidate(w, out, p, ".debug", NULL);
        if (!rc)
            rc = try_candidate(w, out, p, NULL, NULL);
        free(p);
    }
    if (!rc && w->opts->sysroot)
        rc = try_candidate(w, out, w->opts->sysroot, SYSTEM_DEBUG_DIR "/.build-id/", rel);
    if (!rc) {
        /* The host's debug file with this build id is the same file. */
        char *p = join(SYSTEM_DEBUG_DIR "/.build-id/", rel, ".debug");
        rc = p ? try_candidate(w, out, p, NULL, NULL) : -ENOMEM;
        free(p);
    }
    free(rel);
    return rc;
}

/* --debug-dir by name: a directory holding copies of the binaries, flat
 * or mirroring their paths, with or without a .debug suffix. */
static int search_debug_dirs_by_name(const struct want *w, struct ana_sym_found *out)
{
    const char *base = base_name(w->path);
    int rc = 0;

    for (size_t i = 0; i < w->opts->nr_debug_dirs && !rc; i++) {
        const char *dir = w->opts->debug_dirs[i];

        if (*base) {
            char *p = join(dir, "/", base);

            if (!p)
                return -ENOMEM;
            rc = try_candidate(w, out, p, NULL, NULL);
            if (!rc)
                rc = try_candidate(w, out, p, ".debug", NULL);
            free(p);
        }
        if (!rc && w->path[0] == '/') {
            rc = try_candidate(w, out, dir, w->path, NULL);
            if (!rc)
                rc = try_candidate(w, out, dir, w->path, ".debug");
        }
    }
    return rc;
}

static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');

    if (!slash)
        return strdup(".");
    return strndup(path, (size_t)(slash - path));
}

/* A debuglink candidate: the build id decides when known, else the CRC. */
static int try_debuglink(const struct want *w, struct ana_sym_found *out, uint32_t crc,
                         const char *a, const char *b, const char *c)
{
    char *p = join(a, b, c);
    struct ana_sym_file f;
    uint32_t fcrc;

    if (!p)
        return -ENOMEM;
    enum check ck = try_file(w, p, &f);
    free(p);
    if (ck != CHECK_OK)
        return 0;
    if (!w->build_id_len && (file_crc32(f.fd, &fcrc) || fcrc != crc)) {
        file_close(&f);
        return 0;
    }
    return adopt(out, &f) ? 1 : 0;
}

static int search_debuglink(const struct want *w, struct ana_sym_found *out)
{
    GElf_Word crc;
    const char *link = dwelf_elf_gnu_debuglink(out->bin.elf, &crc);
    int rc = 0;

    if (!link || !*link || strchr(link, '/'))
        return 0;
    char *bindir = dir_of(out->bin.path);
    char *recdir = dir_of(w->path);
    if (!bindir || !recdir) {
        free(bindir);
        free(recdir);
        return -ENOMEM;
    }
    rc = try_debuglink(w, out, crc, bindir, "/", link);
    if (!rc) {
        char *d = join(bindir, "/.debug/", NULL);
        rc = d ? try_debuglink(w, out, crc, d, link, NULL) : -ENOMEM;
        free(d);
    }
    for (size_t i = 0; i < w->opts->nr_debug_dirs && !rc; i++)
        rc = try_debuglink(w, out, crc, w->opts->debug_dirs[i], "/", link);
    if (!rc) {
        char *d = join(w->opts->sysroot, SYSTEM_DEBUG_DIR, recdir);
        rc = d ? try_debuglink(w, out, crc, d, "/", link) : -ENOMEM;
        free(d);
    }
    free(bindir);
    free(recdir);
    return rc;
}

static int search_debuginfod(const struct want *w, struct ana_sym_found *out)
{
    const char *urls = getenv("DEBUGINFOD_URLS");
    struct ana_sym_file f = {.fd = -1};

    /* Never touch the network unless the user asked for it. */
    if (!urls || !*urls || !w->build_id_len)
        return 0;
    out->asked_debuginfod = true;
    for (int exe = 0; exe < 2; exe++) {
        if (exe && out->bin.elf)
            break;
        int fd = ana_sym_debuginfod_find(w->build_id, w->build_id_len, exe, &f.path);
        if (fd < 0)
            continue;
        /* debuginfod files are named by build id; open our own copy. */
        close(fd);
        char *p = f.path;
        enum check ck = try_file(w, p, &f);
        free(p);
        if (ck == CHECK_OK && adopt(out, &f))
            return 1;
    }
    return 0;
}

__attribute__((format(printf, 2, 3))) static int set_note(struct ana_sym_found *out,
                                                          const char *fmt, ...)
{
    va_list ap;
    int n;

    free(out->note);
    va_start(ap, fmt);
    n = vasprintf(&out->note, fmt, ap);
    va_end(ap);
    if (n < 0) {
        out->note = NULL;
        return -ENOMEM;
    }
    return 0;
}

int ana_sym_find_files(const struct ana_sym_options *opts, const char *path,
                       const uint8_t *build_id, uint32_t build_id_len, struct ana_sym_found *out)
{
    struct want w = {
        .opts = opts, .path = path, .build_id = build_id, .build_id_len = build_id_len};
    enum check main_check = CHECK_MISSING;
    int main_errno = ENOENT;
    int rc = 0;

    memset(out, 0, sizeof(*out));
    out->bin.fd = out->dbg.fd = -1;

    if (path[0]) {
        char *p = join(opts->sysroot, path, NULL);
        if (p && path[1] == ':' && path[2] == '\\') /* Windows: Wine's Z: is / */
            ana_sym_win_host_path(p + (opts->sysroot ? strlen(opts->sysroot) : 0));
        struct ana_sym_file f;

        if (!p)
            return -ENOMEM;
        int orc = file_open(p, &f);
        free(p);
        if (orc) {
            main_errno = -orc;
        } else if (build_id_len && !same_build_id(f.elf, build_id, build_id_len)) {
            main_check = CHECK_MISMATCH;
            file_close(&f);
        } else {
            main_check = CHECK_OK;
            rc = adopt(out, &f);
        }
    }
    if (!rc && build_id_len)
        rc = search_build_id(&w, out);
    if (!rc)
        rc = search_debug_dirs_by_name(&w, out);
    if (!rc && out->bin.elf)
        rc = search_debuglink(&w, out);
    if (!rc)
        rc = search_debuginfod(&w, out);
    if (rc < 0) {
        ana_sym_found_release(out);
        return rc;
    }

    const char *shown = path[0] ? path : "(module with no path)";
    const char *used = out->dbg.elf ? out->dbg.path : out->bin.elf ? out->bin.path : NULL;
    if (main_check == CHECK_MISMATCH) {
        if (used)
            return set_note(
                out,
                "%s: build id differs from the recorded one (changed since recording?); using %s",
                shown, used);
        return set_note(out,
                        "%s: build id differs from the recorded one (changed since recording?); "
                        "not used, frames show module+offset",
                        shown);
    }
    if (!used)
        return set_note(out, "%s: %s; frames show module+offset", shown,
                        main_check == CHECK_MISSING ? strerror(main_errno) : "no usable file");
    return 0;
}

void ana_sym_found_release(struct ana_sym_found *f)
{
    file_close(&f->bin);
    file_close(&f->dbg);
    free(f->note);
    f->note = NULL;
}
