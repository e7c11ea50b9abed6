/* SPDX-License-Identifier: MIT */
/* Where the file of a module Wine recorded at a Windows path lives on
 * Linux (docs/symbols.md, "Windows modules"): under the Wine prefix the
 * program ran in, through its dosdevices (c: is drive_c), with a 32-bit
 * process's system32 also read as syswow64 (Wine redirects it as Windows
 * does); then by name in Wine's own DLL folders. Names are matched
 * without regard to case, as Wine matches them. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "analysis/sym/ana_sym_internal.h"

bool ana_sym_is_win_path(const char *path)
{
    return isalpha((unsigned char)path[0]) && path[1] == ':' && path[2] == '\\';
}

const char *ana_sym_base_name(const char *path)
{
    const char *slash = strrchr(path, ana_sym_is_win_path(path) ? '\\' : '/');

    return slash ? slash + 1 : path;
}

/* dir/rel (rel '/'-separated), each component of rel matched without case
 * where the exact name is not there. Returns the malloc'd path of an
 * existing file, NULL when there is none, or sets *nomem. */
static char *find_nocase(const char *dir, const char *rel, bool *nomem)
{
    char *path;

    if (asprintf(&path, "%s/%s", dir, rel) < 0)
        goto nomem;
    if (access(path, F_OK) == 0)
        return path;
    size_t used = strlen(dir);
    path[used] = '\0';
    for (const char *c = rel; *c;) {
        size_t n = strcspn(c, "/");
        struct dirent *e;
        DIR *d = opendir(path);
        bool found = false;

        while (d && (e = readdir(d))) {
            if (strlen(e->d_name) == n && !strncasecmp(e->d_name, c, n)) {
                snprintf(path + used, n + 2, "/%s", e->d_name);
                found = true;
                break;
            }
        }
        if (d)
            closedir(d);
        if (!found) {
            free(path);
            return NULL;
        }
        used += n + 1;
        c += n + (c[n] == '/');
    }
    return path;
nomem:
    *nomem = true;
    return NULL;
}

/* Offer dir/rel (found without case) to fn. */
static int offer(const char *dir, const char *rel, const char *how, ana_sym_wine_fn *fn, void *arg)
{
    bool nomem = false;
    char *p = find_nocase(dir, rel, &nomem);
    int rc;

    if (!p)
        return nomem ? -ENOMEM : 0;
    rc = fn(arg, p, how);
    free(p);
    return rc;
}

#define SYSTEM32 "windows/system32/"

/* The prefix's candidates for drive letter `drive` and rel. */
static int search_prefix(const struct ana_sym_wine *w, const char *root, char drive,
                         const char *rel, ana_sym_wine_fn *fn, void *arg)
{
    char *dev;
    int rc;

    if (asprintf(&dev, "%s%s/dosdevices/%c:", root, w->prefix, tolower((unsigned char)drive)) < 0)
        return -ENOMEM;
    if (access(dev, F_OK) != 0 && tolower((unsigned char)drive) == 'c') {
        free(dev); /* a prefix without its links: c: is drive_c */
        if (asprintf(&dev, "%s%s/drive_c", root, w->prefix) < 0)
            return -ENOMEM;
    }
    const char *how = w->prefix_recorded ? "the Wine prefix the trace recorded" : "the Wine prefix";
    rc = offer(dev, rel, how, fn, arg);
    if (!rc && !strncasecmp(rel, SYSTEM32, strlen(SYSTEM32))) {
        char *wow; /* a 32-bit process's system32 is syswow64 in a 64-bit prefix */
        if (asprintf(&wow, "windows/syswow64/%s", rel + strlen(SYSTEM32)) < 0)
            rc = -ENOMEM;
        else
            rc = offer(dev, wow, how, fn, arg);
        free(wow);
    }
    free(dev);
    return rc;
}

int ana_sym_wine_search(const struct ana_sym_wine *w, const char *sysroot, const char *win_path,
                        ana_sym_wine_fn *fn, void *arg)
{
    /* recorded folders are recorded paths: under --sysroot, as the others */
    const char *root = w->prefix_recorded && sysroot ? sysroot : "";
    const char *dirs_root = w->dirs_recorded && sysroot ? sysroot : "";
    char *rel = strdup(win_path + 3);
    int rc = 0;

    if (!rel)
        return -ENOMEM;
    for (char *c = rel; *c; c++)
        if (*c == '\\')
            *c = '/';
    if (w->prefix && *rel)
        rc = search_prefix(w, root, win_path[0], rel, fn, arg);
    const char *base = ana_sym_base_name(win_path);
    for (const char *d = w->dll_dirs, *end = d + w->dll_dirs_len; !rc && d && *base && d < end;
         d += strlen(d) + 1) {
        char *dir;
        if (asprintf(&dir, "%s%s", dirs_root, d) < 0) {
            rc = -ENOMEM;
            break;
        }
        rc = offer(dir, base,
                   w->dirs_recorded ? "Wine's DLL folder the trace recorded" : "Wine's DLL folder",
                   fn, arg);
        free(dir);
    }
    free(rel);
    return rc;
}

int ana_sym_wine_places(const struct ana_sym_wine *w, char **out)
{
    size_t len = 0;
    FILE *f = open_memstream(out, &len);

    if (!f)
        return -ENOMEM;
    if (w->prefix)
        fprintf(f, "the Wine prefix %s%s", w->prefix, w->prefix_recorded ? " (recorded)" : "");
    for (const char *d = w->dll_dirs, *end = d + w->dll_dirs_len; d && d < end;
         d += strlen(d) + 1) {
        bool first = d == w->dll_dirs;
        fprintf(f, "%s%s",
                !first      ? ", "
                : w->prefix ? "; Wine's DLL folders "
                            : "Wine's DLL folders ",
                d);
    }
    if (w->dll_dirs_len && w->dirs_recorded)
        fputs(" (recorded)", f);
    return fclose(f) ? -ENOMEM : 0;
}
