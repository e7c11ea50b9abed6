/* SPDX-License-Identifier: MIT */
/* The server's answers kept gzipped (docs/serve.md, "Scale"): a command's
 * JSON is compressed as it comes out of its pipe, so the server never
 * holds it whole (report's answer on a build of a thousand processes is
 * 67 MB of JSON, 6 MB gzipped), and sent as it is to a browser, which
 * accepts gzip; a client that does not gets it inflated for its request. */
#ifndef CLI_SERVE_GZIP_H
#define CLI_SERVE_GZIP_H

#include <stdbool.h>
#include <stddef.h>

struct cli_gzip {
    void *z; /* zlib's stream, NULL before the first byte */
    char *buf;
    size_t len, cap; /* the gzip data so far */
};

/* Compress len bytes of data onto g's gzip data (a zeroed g starts one).
 * Returns 0 or -ENOMEM. */
int cli_gzip_add(struct cli_gzip *g, const void *data, size_t len);

/* End the gzip data: *out (malloc'd, *out_len bytes) is it, and g is
 * zeroed. Returns 0 or -ENOMEM (g released then). */
int cli_gzip_finish(struct cli_gzip *g, char **out, size_t *out_len);

/* Free what g holds (after a failure). */
void cli_gzip_release(struct cli_gzip *g);

/* The bytes of gzip data in (in_len bytes), in a fresh malloc'd *out of
 * *out_len bytes. Returns 0, -ENOMEM or -EINVAL (not gzip data). */
int cli_gzip_inflate(const char *in, size_t in_len, char **out, size_t *out_len);

/* Whether a request's Accept-Encoding header (NULL: none) takes gzip. */
bool cli_gzip_accepted(const char *accept_encoding);

#endif
