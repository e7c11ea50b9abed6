/* SPDX-License-Identifier: MIT */
/* Gzip for the server's answers (see cli_serve_gzip.h), with zlib. */
#include "cli/cli_serve_gzip.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

#include "util/util_array.h"

/* zlib's windowBits for a gzip header and trailer around deflate data. */
#define GZIP_WBITS (15 + 16)
/* JSON compresses about tenfold at zlib's fastest level, at several
 * hundred MB/s: an answer is not held up by its compression. */
#define GZIP_LEVEL 1

/* Run deflate over what z holds with flush, growing g's buffer. */
static int deflate_all(struct cli_gzip *g, z_stream *z, int flush)
{
    for (;;) {
        if (UTIL_ARRAY_RESERVE(g->buf, g->cap, g->len + 65536, 65536))
            return -ENOMEM;
        z->next_out = (Bytef *)g->buf + g->len;
        z->avail_out = (uInt)(g->cap - g->len);
        int rc = deflate(z, flush);
        g->len = g->cap - z->avail_out;
        if (rc == Z_STREAM_END || (rc == Z_OK && z->avail_out && !z->avail_in))
            return 0;
        if (rc != Z_OK && rc != Z_BUF_ERROR)
            return -ENOMEM;
    }
}

int cli_gzip_add(struct cli_gzip *g, const void *data, size_t len)
{
    z_stream *z = g->z;

    if (!z) {
        if (!(z = calloc(1, sizeof(*z))))
            return -ENOMEM;
        if (deflateInit2(z, GZIP_LEVEL, Z_DEFLATED, GZIP_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
            free(z);
            return -ENOMEM;
        }
        g->z = z;
    }
    z->next_in = (Bytef *)data;
    z->avail_in = (uInt)len;
    return deflate_all(g, z, Z_NO_FLUSH);
}

void cli_gzip_release(struct cli_gzip *g)
{
    if (g->z) {
        deflateEnd(g->z);
        free(g->z);
    }
    free(g->buf);
    memset(g, 0, sizeof(*g));
}

int cli_gzip_finish(struct cli_gzip *g, char **out, size_t *out_len)
{
    int rc = g->z ? 0 : cli_gzip_add(g, "", 0); /* an empty answer is gzip data too */

    if (!rc) {
        ((z_stream *)g->z)->avail_in = 0;
        rc = deflate_all(g, g->z, Z_FINISH);
    }
    if (rc) {
        cli_gzip_release(g);
        return rc;
    }
    *out = g->buf;
    *out_len = g->len;
    g->buf = NULL;
    cli_gzip_release(g);
    return 0;
}

int cli_gzip_inflate(const char *in, size_t in_len, char **out, size_t *out_len)
{
    z_stream z = {.next_in = (Bytef *)in, .avail_in = (uInt)in_len};
    char *buf = NULL;
    size_t len = 0, cap = 0;
    int rc = Z_OK;

    if (inflateInit2(&z, GZIP_WBITS) != Z_OK)
        return -ENOMEM;
    while (rc == Z_OK) {
        if (UTIL_ARRAY_RESERVE(buf, cap, len + 4 * in_len + 65536, 65536)) {
            rc = Z_MEM_ERROR;
            break;
        }
        z.next_out = (Bytef *)buf + len;
        z.avail_out = (uInt)(cap - len);
        rc = inflate(&z, Z_NO_FLUSH);
        len = cap - z.avail_out;
        if (rc == Z_BUF_ERROR && z.avail_out) /* input ended before its trailer */
            rc = Z_DATA_ERROR;
        else if (rc == Z_BUF_ERROR)
            rc = Z_OK;
    }
    inflateEnd(&z);
    if (rc != Z_STREAM_END) {
        free(buf);
        return rc == Z_MEM_ERROR ? -ENOMEM : -EINVAL;
    }
    *out = buf;
    *out_len = len;
    return 0;
}

bool cli_gzip_accepted(const char *accept_encoding)
{
    const char *p = accept_encoding;

    /* A list of codings, each maybe with a weight: gzip, unless q=0. */
    while (p && (p = strcasestr(p, "gzip"))) {
        const char *q = p + 4 + strspn(p + 4, " ");
        if (*q == ',' || !*q)
            return true;
        if (*q == ';') {
            q++;
            q += strspn(q, " ");
            return strncasecmp(q, "q=", 2) || strtod(q + 2, NULL) > 0;
        }
        p = q;
    }
    return false;
}
