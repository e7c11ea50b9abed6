/* SPDX-License-Identifier: MIT */
/* record --only: is this process image one to trace? */
#include <fnmatch.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collector/col_internal.h"

static const char *col_basename(const char *path)
{
    const char *slash = strrchr(path, '/');

    return slash ? slash + 1 : path;
}

/* 1 unless FMT_SHM_ENV_ONLY holds a glob that matches neither the name of
 * the executable file (/proc/self/exe, symbolic links followed) nor the
 * last part of argv[0]: "cc1", or "gcc" for /usr/bin/gcc, a link to
 * x86_64-linux-gnu-gcc-12. Runs in col_init, where our own allocations
 * pass straight through. */
int col_only_wanted(void)
{
    extern char *program_invocation_name;
    const char *pat = getenv(FMT_SHM_ENV_ONLY);
    char exe[PATH_MAX];
    ssize_t n;

    if (!pat || !*pat)
        return 1;
    n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n > 0) {
        exe[n] = 0;
        if (fnmatch(pat, col_basename(exe), 0) == 0)
            return 1;
    }
    return program_invocation_name && fnmatch(pat, col_basename(program_invocation_name), 0) == 0;
}
