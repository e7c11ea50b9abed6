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

char *rec_collector_for(char *collector, const char *prog)
{
    const char *slash = strrchr(collector, '/');
    char *alt;

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
