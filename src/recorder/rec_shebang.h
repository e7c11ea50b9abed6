/* SPDX-License-Identifier: MIT */
/* The one "#!" resolver: which program really runs when a script is
 * executed. Used by the checks before recording (rec_check.c) and by the
 * choice of collector (rec_class.c), so both judge a script alike. */
#ifndef REC_SHEBANG_H
#define REC_SHEBANG_H

#include <stddef.h>

/* Reads the start of path. Returns 0 when it is no "#!" script; 1 when it
 * is, with the program that runs it in next: the interpreter, or for
 * "#!/usr/bin/env prog" (any interpreter named env) prog as found on PATH
 * (env's options, or a prog not on PATH, leave env itself); -1 when the
 * "#!" line names no interpreter, -2 when next is too small for it. An unreadable path
 * is no script (0): the caller's own open reports it. */
int rec_shebang_next(const char *path, char *next, size_t next_size);

#endif
