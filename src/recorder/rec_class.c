/* SPDX-License-Identifier: MIT */
/* Pick the collector matching the program's ELF class: a 64-bit
 * libmemscribe.so cannot be preloaded into a 32-bit program (ld.so
 * ignores it with "wrong ELF class"). */
#include "recorder/rec_class.h"

#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ELFCLASS32, ELFCLASS64, or 0; follows one #! line. */
static int rec_elf_class(const char *prog, int depth)
{
    unsigned char h[256];
    ssize_t n;
    int fd = open(prog, O_RDONLY | O_CLOEXEC);

    if (fd < 0)
        return 0;
    n = read(fd, h, sizeof(h) - 1);
    close(fd);
    if (n >= EI_NIDENT && !memcmp(h, ELFMAG, SELFMAG))
        return h[EI_CLASS];
    if (n > 2 && h[0] == '#' && h[1] == '!' && depth == 0) {
        char *s = (char *)h + 2, *e;

        h[n] = 0;
        while (*s == ' ' || *s == '\t')
            s++;
        e = s + strcspn(s, " \t\n");
        *e = 0;
        return *s ? rec_elf_class(s, 1) : 0;
    }
    return 0;
}

char *rec_collector_for(char *collector, const char *prog)
{
    const char *slash = strrchr(collector, '/');
    char *alt;

    if (rec_elf_class(prog, 0) != ELFCLASS32 || !slash)
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
