/* SPDX-License-Identifier: MIT */
/* A process's argv for a command column: shortened in the middle, the
 * program and the files kept. `report`'s process table prints it and its
 * JSON gives it ("command"), which the live page shows, so both read the
 * same: a build's thirty compiles are `cc ... -c src/parse.c -o
 * build/parse.o`, not thirty `cc -O2 -g -I. ... -c ...`. */
#ifndef ANA_ARGV_H
#define ANA_ARGV_H

#include <stddef.h>

/* argv (argv_len bytes of NUL-terminated words) as one line of at most
 * about width characters: the words escaped (ana_text.h) and joined by
 * spaces. When the whole line is longer, words go from the middle out,
 * each run of them replaced by "...": first the options and other words,
 * then the one-letter options just before a file ("-c", "-o"); the
 * program (argv[0]) and the files (a word with a '/' or a name with a
 * letter in its extension, "src/main.c", "out.o", not starting with '-')
 * stay. If that is still too long, files are shortened to their last
 * part, and past 2 x width the end is cut with "...". Writes at most
 * size bytes, NUL-terminated (size >= 4); returns the length written. */
size_t ana_argv_short(char *out, size_t size, const char *argv, size_t argv_len, size_t width);

#endif
