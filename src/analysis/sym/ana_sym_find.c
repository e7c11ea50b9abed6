/* SPDX-License-Identifier: MIT */
/* Finding a module's files: the binary at its recorded path (under
 * --sysroot; a Windows path through Wine's prefix and DLL folders,
 * ana_sym_wine.c), then a debug file by build id (--debug-dir, the system's
 * /usr/lib/debug/.build-id), by name in --debug-dir, by .gnu_debuglink,
 * and last by debuginfod when the user configured it. A file is used only
 * when its build id is the recorded one (and a PE's size of image): a
 * wrong file gives wrong names. */
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
    uint32_t pe_image_size; /* 0: not checked */
    const char *how;        /* the search under way, for --verbose */
    const char *mismatch;   /* why the last candidate was refused */
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
    f->pe_image_size = 0;
    if (f->elf && elf_kind(f->elf) != ELF_K_ELF) { /* a Windows PE? */
        struct ana_sym_pe_info pe;
        int efd;
        Elf *e;
        if (!ana_sym_pe_open(f->fd, &efd, &e, &pe)) {
            elf_end(f->elf);
            close(f->fd);
            f->fd = efd;
            f->elf = e;
            f->pe_base = pe.image_base;
            f->pe_image_size = pe.image_size;
            f->pdb_name = pe.pdb_name;
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

/* Is the open file f the recorded module's? */
static enum check check_identity(struct want *w, struct ana_sym_file *f)
{
    w->mismatch = NULL;
    if (w->build_id_len && !same_build_id(f->elf, w->build_id, w->build_id_len))
        w->mismatch = "build id differs from the recorded one";
    else if (w->pe_image_size && f->pe_base && f->pe_image_size != w->pe_image_size)
        w->mismatch = "size of image differs from the recorded one";
    if (!w->mismatch)
        return CHECK_OK;
    file_close(f);
    return CHECK_MISMATCH;
}

/* Open a candidate and check it is the recorded module's. */
static enum check try_file(struct want *w, const char *path, struct ana_sym_file *f)
{
    if (file_open(path, f))
        return CHECK_MISSING;
    return check_identity(w, f);
}

static char *join(const char *a, const char *b, const char *c)
{
    char *s;

    if (asprintf(&s, "%s%s%s", a ? a : "", b ? b : "", c ? c : "") < 0)
        return NULL;
    return s;
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
static bool adopt(const struct want *w, struct ana_sym_found *out, struct ana_sym_file *f)
{
    if (ana_sym_elf_has_dwarf(f->elf)) {
        out->dbg = *f;
        out->dbg_how = w->how;
        return true;
    }
    if (!out->bin.elf) {
        out->bin = *f;
        out->bin_how = w->how;
    } else {
        file_close(f);
    }
    return false;
}

/* Try a path built from parts; -ENOMEM, 1 when the search is over, 0 to go on. */
static int try_candidate(struct want *w, struct ana_sym_found *out, const char *a, const char *b,
                         const char *c)
{
    char *p = join(a, b, c);
    struct ana_sym_file f;

    if (!p)
        return -ENOMEM;
    int found = try_file(w, p, &f) == CHECK_OK;
    free(p);
    if (!found)
        return 0;
    return adopt(w, out, &f) ? 1 : 0;
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

static int search_build_id(struct want *w, struct ana_sym_found *out)
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
static int search_debug_dirs_by_name(struct want *w, struct ana_sym_found *out)
{
    const char *base = ana_sym_base_name(w->path);
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
static int try_debuglink(struct want *w, struct ana_sym_found *out, uint32_t crc, const char *a,
                         const char *b, const char *c)
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
    return adopt(w, out, &f) ? 1 : 0;
}

static int search_debuglink(struct want *w, struct ana_sym_found *out)
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

static int search_debuginfod(struct want *w, struct ana_sym_found *out)
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
        if (ck == CHECK_OK && adopt(w, out, &f))
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

/* A search through Wine's folders (ana_sym_wine_search): the best answer a
 * candidate got, and why one was refused. */
struct wine_try {
    struct want *w;
    struct ana_sym_found *out;
    enum check seen; /* CHECK_OK, else CHECK_MISMATCH if a file was refused */
    const char *mismatch;
};

static int wine_try(void *arg, const char *path, const char *how)
{
    struct wine_try *t = arg;
    struct ana_sym_file f;

    t->w->how = how;
    enum check ck = try_file(t->w, path, &f);
    if (ck == CHECK_MISMATCH && t->seen == CHECK_MISSING) {
        t->seen = CHECK_MISMATCH;
        t->mismatch = t->w->mismatch;
    }
    if (ck != CHECK_OK)
        return 0;
    t->seen = CHECK_OK;
    return adopt(t->w, t->out, &f) ? 1 : 0;
}

/* The file at the recorded path (under --sysroot; Wine's Z:\ is /), or,
 * for another drive, through Wine's prefix and DLL folders. Sets *check
 * (and *err, the errno of a missing file). Returns 1 when the search is
 * over, 0 or -ENOMEM. */
static int search_recorded(struct want *w, const struct ana_sym_wine *wine,
                           struct ana_sym_found *out, enum check *check, int *err)
{
    const char *path = w->path;
    struct ana_sym_file f;

    if (ana_sym_is_win_path(path) && path[0] != 'Z' && path[0] != 'z') {
        struct wine_try t = {.w = w, .out = out, .seen = CHECK_MISSING};
        int rc = ana_sym_wine_search(wine, w->opts->sysroot, path, wine_try, &t);
        *check = t.seen;
        w->mismatch = t.mismatch;
        return rc;
    }
    char *p = join(w->opts->sysroot, path, NULL);
    if (!p)
        return -ENOMEM;
    if (ana_sym_is_win_path(path))
        ana_sym_win_host_path(p + (w->opts->sysroot ? strlen(w->opts->sysroot) : 0));
    w->how = w->opts->sysroot ? "the recorded path under --sysroot" : "the recorded path";
    int orc = file_open(p, &f);
    free(p);
    if (orc) {
        *err = -orc;
        return 0;
    }
    *check = check_identity(w, &f);
    return *check == CHECK_OK ? adopt(w, out, &f) : 0;
}

/* Why nothing was used, as a note. */
static int note_unused(struct want *w, const struct ana_sym_wine *wine, enum check main_check,
                       int main_errno, struct ana_sym_found *out)
{
    const char *shown = w->path[0] ? w->path : "(module with no path)";
    const char *used = out->dbg.elf ? out->dbg.path : out->bin.elf ? out->bin.path : NULL;
    bool by_wine = ana_sym_is_win_path(w->path) && w->path[0] != 'Z' && w->path[0] != 'z';
    char *places = NULL;
    int rc;

    if (main_check == CHECK_MISMATCH && used)
        return set_note(out, "%s: %s (changed since recording?); using %s", shown, w->mismatch,
                        used);
    if (used)
        return 0;
    if (by_wine && (rc = ana_sym_wine_places(wine, &places)))
        return rc;
    if (main_check == CHECK_MISMATCH && by_wine)
        rc = set_note(out, "%s: %s in %s (another Wine?); not used, frames show module+offset",
                      shown, w->mismatch, places);
    else if (main_check == CHECK_MISMATCH)
        rc = set_note(out, "%s: %s (changed since recording?); not used, frames show module+offset",
                      shown, w->mismatch);
    else if (by_wine && !*places)
        rc = set_note(out,
                      "%s: no Wine prefix or DLL folder to look in (none recorded, none on this "
                      "host), and not in --debug-dir; frames show module+offset",
                      shown);
    else if (by_wine)
        rc = set_note(out, "%s: not found in %s, or --debug-dir; frames show module+offset", shown,
                      places);
    else
        rc = set_note(out, "%s: %s; frames show module+offset", shown,
                      main_check == CHECK_MISSING ? strerror(main_errno) : "no usable file");
    free(places);
    return rc;
}

int ana_sym_find_files(const struct ana_sym_options *opts, const struct ana_sym_wine *wine,
                       const struct ana_sym_module_id *id, struct ana_sym_found *out)
{
    struct want w = {.opts = opts,
                     .path = id->path,
                     .build_id = id->build_id,
                     .build_id_len = id->build_id_len,
                     .pe_image_size = id->pe_image_size};
    enum check main_check = CHECK_MISSING;
    int main_errno = ENOENT;
    int rc = 0;

    memset(out, 0, sizeof(*out));
    out->bin.fd = out->dbg.fd = -1;

    if (w.path[0])
        rc = search_recorded(&w, wine, out, &main_check, &main_errno);
    const char *mismatch = w.mismatch;
    w.how = "by build id";
    if (!rc && w.build_id_len)
        rc = search_build_id(&w, out);
    w.how = "by name in --debug-dir";
    if (!rc)
        rc = search_debug_dirs_by_name(&w, out);
    w.how = "by .gnu_debuglink";
    if (!rc && out->bin.elf)
        rc = search_debuglink(&w, out);
    w.how = "from debuginfod";
    if (!rc)
        rc = search_debuginfod(&w, out);
    if (rc < 0) {
        ana_sym_found_release(out);
        return rc;
    }
    w.mismatch = mismatch;
    return note_unused(&w, wine, main_check, main_errno, out);
}

void ana_sym_found_release(struct ana_sym_found *f)
{
    file_close(&f->bin);
    file_close(&f->dbg);
    free(f->note);
    f->note = NULL;
}
