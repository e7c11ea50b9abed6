/* SPDX-License-Identifier: MIT */
/* The exporters' output sink: a 64 KiB buffer in front of write(2), with
 * gzip (zlib) or zstd compression in between when asked. Errors stick so
 * that an exporter can write freely and check once at the end. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "analysis/core/ana_json.h"
#include "analysis/export/ana_export_internal.h"

#define XOUT_BUF_SIZE (64 * 1024)

struct ana_xout {
    int fd;
    int err;
    enum ana_export_compress compress;
    size_t len;
    unsigned char buf[XOUT_BUF_SIZE];
    unsigned char zbuf[XOUT_BUF_SIZE];
    z_stream gz;
    ZSTD_CCtx *zc;
};

static int write_all(struct ana_xout *o, const unsigned char *p, size_t n)
{
    while (n) {
        ssize_t w = write(o->fd, p, n);

        if (w < 0) {
            if (errno == EINTR)
                continue;
            return o->err = -errno;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int flush_gzip(struct ana_xout *o, int flush)
{
    o->gz.next_in = o->buf;
    o->gz.avail_in = (uInt)o->len;
    do {
        o->gz.next_out = o->zbuf;
        o->gz.avail_out = sizeof(o->zbuf);
        int rc = deflate(&o->gz, flush);
        if (rc == Z_STREAM_ERROR)
            return o->err = -EIO;
        if (write_all(o, o->zbuf, sizeof(o->zbuf) - o->gz.avail_out))
            return o->err;
    } while (o->gz.avail_out == 0);
    return 0;
}

static int flush_zstd(struct ana_xout *o, ZSTD_EndDirective end)
{
    ZSTD_inBuffer in = {o->buf, o->len, 0};
    size_t left;

    do {
        ZSTD_outBuffer zo = {o->zbuf, sizeof(o->zbuf), 0};
        left = ZSTD_compressStream2(o->zc, &zo, &in, end);
        if (ZSTD_isError(left))
            return o->err = -EIO;
        if (write_all(o, o->zbuf, zo.pos))
            return o->err;
    } while (end == ZSTD_e_end ? left != 0 : in.pos < in.size);
    return 0;
}

/* Push the buffer on; last ends the compressed stream. */
static int xout_flush(struct ana_xout *o, bool last)
{
    int rc = 0;

    if (o->err)
        return o->err;
    switch (o->compress) {
    case ANA_COMPRESS_NONE:
    case ANA_COMPRESS_BY_SUFFIX: /* a format's policy, resolved before: never here */
    case ANA_COMPRESS_DATABASE:
        rc = write_all(o, o->buf, o->len);
        break;
    case ANA_COMPRESS_GZIP:
        rc = flush_gzip(o, last ? Z_FINISH : Z_NO_FLUSH);
        break;
    case ANA_COMPRESS_ZSTD:
        rc = flush_zstd(o, last ? ZSTD_e_end : ZSTD_e_continue);
        break;
    }
    o->len = 0;
    return rc;
}

int ana_xout_open(struct ana_xout **out, int fd, enum ana_export_compress c)
{
    struct ana_xout *o = calloc(1, sizeof(*o));

    *out = NULL;
    if (!o)
        return -ENOMEM;
    if (c != ANA_COMPRESS_NONE && c != ANA_COMPRESS_GZIP && c != ANA_COMPRESS_ZSTD) {
        free(o);
        return -EINVAL; /* not a stream's */
    }
    o->fd = fd;
    o->compress = c;
    if (c == ANA_COMPRESS_GZIP) {
        /* windowBits 15 + 16: a gzip header and trailer, as gunzip and Go's
         * compress/gzip expect. */
        if (deflateInit2(&o->gz, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
                         Z_DEFAULT_STRATEGY) != Z_OK) {
            free(o);
            return -ENOMEM;
        }
    } else if (c == ANA_COMPRESS_ZSTD) {
        o->zc = ZSTD_createCCtx();
        if (!o->zc) {
            free(o);
            return -ENOMEM;
        }
        ZSTD_CCtx_setParameter(o->zc, ZSTD_c_compressionLevel, 3);
    }
    *out = o;
    return 0;
}

int ana_xout_write(struct ana_xout *o, const void *p, size_t n)
{
    const unsigned char *s = p;

    while (n && !o->err) {
        size_t k = sizeof(o->buf) - o->len;

        if (k > n)
            k = n;
        memcpy(o->buf + o->len, s, k);
        o->len += k;
        s += k;
        n -= k;
        if (o->len == sizeof(o->buf))
            xout_flush(o, false);
    }
    return o->err;
}

int ana_xout_printf(struct ana_xout *o, const char *fmt, ...)
{
    char small[512];
    va_list ap;
    int n;

    if (o->err)
        return o->err;
    va_start(ap, fmt);
    n = vsnprintf(small, sizeof(small), fmt, ap);
    va_end(ap);
    if (n < 0)
        return o->err = -EINVAL;
    if ((size_t)n < sizeof(small))
        return ana_xout_write(o, small, (size_t)n);
    char *big = malloc((size_t)n + 1);
    if (!big)
        return o->err = -ENOMEM;
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    ana_xout_write(o, big, (size_t)n);
    free(big);
    return o->err;
}

static void put_xout(void *o, const char *s, size_t len)
{
    ana_xout_write(o, s, len);
}

int ana_xout_json_strn(struct ana_xout *o, const char *s, size_t len)
{
    ana_json_escape(s, len, put_xout, o);
    return o->err;
}

int ana_xout_close(struct ana_xout *o)
{
    int rc;

    if (!o)
        return 0;
    xout_flush(o, true);
    rc = o->err;
    if (o->compress == ANA_COMPRESS_GZIP)
        deflateEnd(&o->gz);
    ZSTD_freeCCtx(o->zc);
    free(o);
    return rc;
}
