/* SPDX-License-Identifier: MIT */
/* Pick the collector matching the program's ELF class: a 64-bit
 * libmemscribe.so cannot be preloaded into a 32-bit program (ld.so
 * ignores it with "wrong ELF class"). */
#include "recorder/rec_class.h"
#include "recorder/rec_shebang.h"

#include <elf.h>
#include <fcntl.h>
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

/* Both collectors under dir by the name ld.so gives $PLATFORM (x86_64,
 * i686: symlinks the build and the install make)? */
static int rec_have_platform_dirs(const char *dir, int len)
{
    char *p64, *p32;
    int ok;

    if (asprintf(&p64, "%.*s/x86_64/libmemscribe.so", len, dir) < 0)
        return 0;
    if (asprintf(&p32, "%.*s/i686/libmemscribe.so", len, dir) < 0) {
        free(p64);
        return 0;
    }
    ok = access(p64, R_OK) == 0 && access(p32, R_OK) == 0;
    free(p64);
    free(p32);
    return ok;
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
