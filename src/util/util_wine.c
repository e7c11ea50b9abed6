/* SPDX-License-Identifier: MIT */
/* Wine's prefix and DLL folders on this host (see util_wine.h). */
#include "util/util_wine.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *util_wine_prefix(void)
{
    const char *env = getenv("WINEPREFIX"), *home = getenv("HOME");
    char cwd[PATH_MAX], *p;
    int n;

    if (env && *env == '/')
        return strdup(env);
    if (env && *env)
        n = getcwd(cwd, sizeof(cwd)) ? asprintf(&p, "%s/%s", cwd, env) : -1;
    else if (home && *home)
        n = asprintf(&p, "%s/.wine", home);
    else
        return NULL;
    return n < 0 ? NULL : p;
}

/* Where a loader's DLL folders are, from the loader's own folder D: Debian
 * (/usr/lib/wine/wine64 -> /usr/lib/x86_64-linux-gnu/wine/x86_64-windows),
 * upstream and WineHQ (bin/wine64 -> lib64/wine/x86_64-windows,
 * lib/wine/i386-windows) and D itself. */
static const char *const beside_loader[] = {
    "/../x86_64-linux-gnu/wine",
    "/../i386-linux-gnu/wine",
    "/../lib64/wine",
    "/../lib/wine",
    "/../lib32/wine",
    "/../lib/x86_64-linux-gnu/wine",
    "/../lib/i386-linux-gnu/wine",
    "",
};

static const char *const usual_loaders[] = {
    "/usr/lib/wine/wine64",
    "/usr/lib/wine/wine",
    "/usr/bin/wine64",
    "/usr/bin/wine",
};

/* The first folder ARCH beside loader that holds ntdll.dll, into out
 * (PATH_MAX bytes); false if none. */
static bool find_arch(const char *loader, const char *arch, char *out)
{
    char real[PATH_MAX], cand[PATH_MAX + 64], probe[PATH_MAX + 80];

    if (!loader || !*loader || !realpath(loader, real))
        return false;
    *strrchr(real, '/') = '\0';
    for (size_t i = 0; i < sizeof(beside_loader) / sizeof(beside_loader[0]); i++) {
        snprintf(cand, sizeof(cand), "%s%s/%s", real, beside_loader[i], arch);
        snprintf(probe, sizeof(probe), "%s/ntdll.dll", cand);
        if (access(probe, R_OK) == 0 && realpath(cand, out))
            return true;
    }
    return false;
}

char *util_wine_dll_dirs(const char *loader, bool i386_first, size_t *len)
{
    const char *arches[2] = {"x86_64-windows", "i386-windows"};
    const char *loaders[2 + sizeof(usual_loaders) / sizeof(usual_loaders[0])];
    size_t nr_loaders = 0, used = 0;
    char *out = NULL, dir[PATH_MAX];

    *len = 0;
    loaders[nr_loaders++] = loader;
    loaders[nr_loaders++] = getenv("MEMSCRIBE_WINE");
    for (size_t i = 0; i < sizeof(usual_loaders) / sizeof(usual_loaders[0]); i++)
        loaders[nr_loaders++] = usual_loaders[i];
    for (int a = 0; a < 2; a++) {
        const char *arch = arches[i386_first ? 1 - a : a];
        size_t k;

        for (k = 0; k < nr_loaders && !find_arch(loaders[k], arch, dir); k++)
            ;
        if (k == nr_loaders)
            continue;
        size_t n = strlen(dir) + 1;
        char *grown = realloc(out, used + n);
        if (!grown) {
            free(out);
            return NULL;
        }
        out = grown;
        memcpy(out + used, dir, n);
        used += n;
    }
    *len = used;
    return out;
}
