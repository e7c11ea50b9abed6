/* SPDX-License-Identifier: MIT */
/* Scratch files (ana_export_internal.h): what an exporter keeps of the
 * processes of a tree that ended, out of memory until the end: written
 * through a buffer, read back through a window. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/export/ana_export_internal.h"
#include "util/util_array.h"

/* Reads fill a window of this many bytes at least. */
#define WINDOW_SIZE (1u << 20)

int ana_xscratch_open(const char *what)
{
    const char *dir = getenv("TMPDIR");
    char path[4096];
    int fd;

    if (!dir || !*dir)
        dir = "/tmp";
    if ((fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600)) >= 0)
        return fd;
    if ((size_t)snprintf(path, sizeof(path), "%s/memscribe-%s-XXXXXX", dir, what) >= sizeof(path))
        return -ENAMETOOLONG;
    if ((fd = mkostemp(path, O_CLOEXEC)) < 0)
        return -errno;
    unlink(path);
    return fd;
}

int ana_xscratch_write(int fd, uint64_t pos, const void *p, size_t n)
{
    while (n) {
        ssize_t w = pwrite(fd, p, n, (off_t)pos);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return w < 0 ? -errno : -EIO;
        pos += (uint64_t)w;
        p = (const char *)p + w;
        n -= (size_t)w;
    }
    return 0;
}

int ana_xscratch_read(int fd, uint64_t pos, void *p, size_t n)
{
    while (n) {
        ssize_t got = pread(fd, p, n, (off_t)pos);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return got < 0 ? -errno : -EIO;
        pos += (uint64_t)got;
        p = (char *)p + got;
        n -= (size_t)got;
    }
    return 0;
}

int ana_xscratch_flush(struct ana_xscratch_out *o)
{
    int rc = ana_xscratch_write(o->fd, o->len, o->buf, o->nr);

    o->len += o->nr;
    o->nr = 0;
    return rc;
}

int ana_xscratch_append(struct ana_xscratch_out *o, const void *p, size_t n)
{
    int rc;

    if (o->nr + n > sizeof(o->buf) && (rc = ana_xscratch_flush(o)))
        return rc;
    if (n > sizeof(o->buf)) {
        rc = ana_xscratch_write(o->fd, o->len, p, n);
        o->len += n;
        return rc;
    }
    memcpy(o->buf + o->nr, p, n);
    o->nr += n;
    return 0;
}

int ana_xscratch_read_back(const struct ana_xscratch_out *o, uint64_t pos, void *p, size_t n)
{
    size_t in_file = pos >= o->len ? 0 : o->len - pos < n ? (size_t)(o->len - pos) : n;
    int rc = in_file ? ana_xscratch_read(o->fd, pos, p, in_file) : 0;

    if (rc || in_file == n)
        return rc;
    pos += in_file;
    if (pos + (n - in_file) > o->len + o->nr)
        return -EIO;
    memcpy((char *)p + in_file, o->buf + (pos - o->len), n - in_file);
    return 0;
}

int ana_xscratch_get(struct ana_xscratch_win *w, uint64_t pos, size_t n, const void **p)
{
    int rc;

    if (pos < w->pos || pos + n > w->pos + w->nr) {
        if (UTIL_ARRAY_RESERVE(w->buf, w->cap, n > WINDOW_SIZE ? n : WINDOW_SIZE, WINDOW_SIZE))
            return -ENOMEM;
        if (pos > w->len || w->len - pos < n)
            return -EIO;
        w->nr = w->len - pos < w->cap ? (size_t)(w->len - pos) : w->cap;
        w->pos = pos;
        if ((rc = ana_xscratch_read(w->fd, pos, w->buf, w->nr))) {
            w->nr = 0;
            return rc;
        }
    }
    *p = w->buf + (pos - w->pos);
    return 0;
}
