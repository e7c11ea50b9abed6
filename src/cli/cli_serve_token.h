/* SPDX-License-Identifier: MIT */
/* The token every request to memscribe serve carries (docs/serve.md,
 * "Safety"): a random one, or one kept in a file of the user's alone for a
 * scraper's credentials_file (serve --token-file, record
 * --metrics-token-file). */
#ifndef CLI_SERVE_TOKEN_H
#define CLI_SERVE_TOKEN_H

#include <stddef.h>

/* A buffer that holds any token (64 characters at most) and its NUL. */
#define CLI_SERVE_TOKEN_SIZE 80

/* The token into out (size CLI_SERVE_TOKEN_SIZE): file NULL: 32 random hex digits;
 * else the token in file, or, if there is no such file, a random one
 * written to it, made new and 0600. A file that is a link, not regular,
 * not the user's or readable by others, or holds anything but 16 to 64
 * characters of [A-Za-z0-9._~+/=-], is refused: the command dies saying
 * why. */
void cli_serve_token(const char *file, char *out, size_t size);

#endif
