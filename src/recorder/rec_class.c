/* SPDX-License-Identifier: MIT */
/* Pick the collector matching the program's ELF class: a 64-bit
 * libmemscribe.so cannot be preloaded into a 32-bit program (ld.so
 * ignores it with "wrong ELF class"). */
#include "recorder/rec_class.h"
#include "recorder/rec_shebang.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ELFCLASS32, ELFCLASS64, or 0; a script by the program that runs it
 * (rec_shebang_next: "#!/usr/bin/env prog" is prog's class). */
static int rec_elf_class(const char *prog)
{
    unsigned char h[EI_NIDENT];
    char cur[512], next[512];
    ssize_t n;
    int fd;

    for (int depth = 0; depth < 4; depth++) {
        if (rec_shebang_next(prog, next, sizeof(next)) != 1)
            break;
        memcpy(cur, next, sizeof(cur));
        prog = cur;
    }
    fd = open(prog, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    n = read(fd, h, sizeof(h));
    close(fd);
    if (n == EI_NIDENT && !memcmp(h, ELFMAG, SELFMAG))
        return h[EI_CLASS];
    return 0;
}

/* Every name ld.so may put in place of $PLATFORM, ':'-separated: x86_64,
 * haswell and xeon_phi (glibc names Intel CPUs by their features) for a
 * 64-bit process, i686 and i586 for a 32-bit one. The build and the install
 * make a symlink for each (top CMakeLists.txt, MEMSCRIBE_PLATFORMS64/32). */
#ifndef REC_PLATFORMS
#error "REC_PLATFORMS comes from src/recorder/CMakeLists.txt"
#endif

const char *rec_platform_names(void)
{
    return REC_PLATFORMS;
}

/* Is there a collector under dir by every name of REC_PLATFORMS? A missing
 * one (an install older than the list) would make ld.so ignore LD_PRELOAD on
 * the CPUs it names, and record nothing. */
static int rec_have_platform_dirs(const char *dir, int len)
{
    const char *name = REC_PLATFORMS;

    while (*name) {
        int n = (int)strcspn(name, ":");
        char *path;
        int ok;

        if (asprintf(&path, "%.*s/%.*s/libmemscribe.so", len, dir, n, name) < 0)
            return 0;
        ok = access(path, R_OK) == 0;
        free(path);
        if (!ok)
            return 0;
        name += n + (name[n] == ':');
    }
    return 1;
}

char *rec_collector_for(char *collector, const char *prog)
{
    const char *slash = strrchr(collector, '/');
    char *alt;

    /* One LD_PRELOAD entry for both classes: ld.so puts the process's own
     * platform in place of $PLATFORM, so a program that execs one of the
     * other class is traced by the right collector, silently. */
    if (slash && rec_have_platform_dirs(collector, (int)(slash - collector)) &&
        asprintf(&alt, "%.*s/$PLATFORM/libmemscribe.so", (int)(slash - collector), collector) >=
            0) {
        free(collector);
        return alt;
    }
    if (rec_elf_class(prog) != ELFCLASS32 || !slash)
        return collector;
    if (asprintf(&alt, "%.*s/i386/libmemscribe.so", (int)(slash - collector), collector) < 0)
        return collector;
    if (access(alt, R_OK) != 0) {
        free(alt);
        return collector;
    }
    free(collector);
    return alt;
}

char *rec_collector_path(char *msg, size_t msg_size)
{
    const char *env = getenv("MEMSCRIBE_COLLECTOR");
    char self[PATH_MAX], *slash, *path, *guess;
    ssize_t n;

    if (env && *env) {
        if (!(path = realpath(env, NULL)))
            snprintf(msg, msg_size, "MEMSCRIBE_COLLECTOR=%s: %s", env, strerror(errno));
        return path;
    }
    n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n <= 0) {
        snprintf(msg, msg_size, "cannot find my own executable: %s", strerror(errno));
        return NULL;
    }
    self[n] = 0;
    slash = strrchr(self, '/');
    *slash = 0;
    if (asprintf(&guess, "%s/../lib/memscribe/libmemscribe.so", self) < 0) {
        snprintf(msg, msg_size, "out of memory");
        return NULL;
    }
    if (!(path = realpath(guess, NULL)))
        snprintf(msg, msg_size, "collector %s: %s (set MEMSCRIBE_COLLECTOR)", guess,
                 strerror(errno));
    free(guess);
    return path;
}
