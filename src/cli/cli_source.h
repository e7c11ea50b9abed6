/* SPDX-License-Identifier: MIT */
/* A source file named by a trace's debug information, opened only as its
 * owner could open it (memscribe source, and serve's page through it): a
 * trace is a file anyone may craft, and its #line may name /etc/shadow or
 * a link to it. docs/serve.md, "Source". */
#ifndef CLI_SOURCE_H
#define CLI_SOURCE_H

#include <stddef.h>
#include <sys/types.h>
#include <time.h>

/* The largest source file read. */
#define CLI_SOURCE_MAX_BYTES (8u << 20)

struct cli_source {
    char *text; /* the file's bytes, NUL-terminated */
    size_t len;
    time_t mtime;
};

/* Read path into *out if the user owner (the trace's) could read it:
 * path absolute, with no '.' or '..' part and no symbolic link on the way
 * (each part opened with O_NOFOLLOW, so nothing can swap one in between
 * the check and the read), each folder searchable and the file readable
 * by owner, a regular file of at most CLI_SOURCE_MAX_BYTES. Returns 0, or
 * -errno with *why saying which rule refused it. */
int cli_source_read(const char *path, uid_t owner, struct cli_source *out, const char **why);
void cli_source_release(struct cli_source *s);

#endif
