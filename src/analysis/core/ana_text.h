/* SPDX-License-Identifier: MIT */
/* Strings from a trace (function names, paths, argv, thread names) made
 * safe for every output: a program's bytes must not reach a terminal as
 * escape sequences, nor a JSON or CSV reader as invalid UTF-8. */
#ifndef ANA_TEXT_H
#define ANA_TEXT_H

#include <stddef.h>
#include <stdio.h>

/* Copy len bytes of s to out (size bytes, always NUL-terminated if size >
 * 0) as valid UTF-8 without control characters: C0 and C1 controls, DEL
 * and bytes that are not UTF-8 become the four characters \xHH (a C1
 * control, two bytes in UTF-8, becomes two of them). Returns the length
 * the whole result needs, without the NUL (as snprintf does). */
size_t ana_text_escape(char *out, size_t size, const char *s, size_t len);

/* The same for a NUL-separated list of words (argv, a trace's command):
 * each word escaped, one space between words, a final NUL dropped. */
size_t ana_text_escape_words(char *out, size_t size, const char *s, size_t len);

/* The same, written to f. */
void ana_text_put(FILE *f, const char *s, size_t len);

#endif
