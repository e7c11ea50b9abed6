/* SPDX-License-Identifier: MIT */
/* Following a script's "#!" line to the program that runs it. */
#include "recorder/rec_shebang.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "recorder/rec_internal.h"

/* The next word of s (blanks skipped), NUL-terminated in place. */
static char *rec_shebang_word(char *s, char **rest)
{
    char *end;

    s += strspn(s, " \t");
    end = s + strcspn(s, " \t\n");
    *rest = *end ? end + 1 : end;
    *end = 0;
    return s;
}

int rec_shebang_next(const char *path, char *next, size_t next_size)
{
    char line[512], *interp, *rest, *word, *base, *resolved;
    ssize_t n;
    int fd = open(path, O_RDONLY | O_CLOEXEC);

    if (fd < 0)
        return 0;
    n = pread(fd, line, sizeof(line) - 1, 0);
    close(fd);
    if (n < 2 || line[0] != '#' || line[1] != '!')
        return 0;
    line[n] = 0;
    line[strcspn(line, "\n")] = 0; /* the "#!" line only */
    interp = rec_shebang_word(line + 2, &rest);
    if (!*interp)
        return -1;
    base = strrchr(interp, '/') ? strrchr(interp, '/') + 1 : interp;
    if (!strcmp(base, "env")) {
        word = rec_shebang_word(rest, &rest);
        if (*word && *word != '-' && (resolved = rec_resolve_command(word))) {
            int fits = strlen(resolved) < next_size;

            if (fits)
                strcpy(next, resolved);
            free(resolved);
            return fits ? 1 : -2;
        }
    }
    if (strlen(interp) >= next_size)
        return -2;
    strcpy(next, interp);
    return 1;
}
