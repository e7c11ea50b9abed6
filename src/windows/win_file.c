/* SPDX-License-Identifier: MIT */
/* Reading the interim Windows event file on the host (win_file.h). */
#include "win_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int by_pid_seq(const void *a, const void *b)
{
    const struct win_rec *x = *(const struct win_rec *const *)a;
    const struct win_rec *y = *(const struct win_rec *const *)b;

    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void clock_set(struct win_file *f, const struct win_rec *r)
{
    if (r->a[2] > r->a[0] && r->a[3] > r->a[1] && r->a[4]) {
        double seconds = (double)(r->a[3] - r->a[1]) / (double)r->a[4];

        f->ns_per_tick = seconds * 1e9 / (double)(r->a[2] - r->a[0]);
        f->tsc_zero = r->a[0];
    }
}

static int fail(struct win_file *f, char *err, size_t err_size, const char *path, const char *why)
{
    snprintf(err, err_size, "%s: %s", path, why);
    win_file_release(f);
    return -1;
}

int win_file_load(struct win_file *f, const char *path, char *err, size_t err_size)
{
    FILE *in = fopen(path, "rb");

    if (!in) {
        memset(f, 0, sizeof(*f));
        return fail(f, err, err_size, path, strerror(errno));
    }
    return win_file_read(f, in, path, err, err_size);
}

int win_file_read(struct win_file *f, FILE *in, const char *path, char *err, size_t err_size)
{
    struct win_file_head fh;
    struct stat st;
    size_t cap = 0;

    memset(f, 0, sizeof(*f));
    if (fstat(fileno(in), &st) || st.st_size < 0) {
        fclose(in);
        return fail(f, err, err_size, path, strerror(errno));
    }
    f->len = (size_t)st.st_size;
#ifdef _WIN32
    f->mtime_ns = (uint64_t)st.st_mtime * 1000000000u;
#else
    f->mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec;
#endif
    f->buf = malloc(f->len + 1);
    if (!f->buf || fread(f->buf, 1, f->len, in) != f->len) {
        fclose(in);
        return fail(f, err, err_size, path, "cannot read");
    }
    fclose(in);
    memcpy(&fh, f->buf, f->len < sizeof(fh) ? f->len : sizeof(fh));
    if (f->len < sizeof(fh) || memcmp(fh.magic, WIN_FILE_MAGIC, 8) != 0 || fh.version != 1 ||
        fh.head_size != sizeof(fh))
        return fail(f, err, err_size, path, "not a memscribe Windows event file (version 1)");
    for (size_t off = sizeof(fh); off < f->len;) {
        const struct win_rec *r = (const struct win_rec *)(f->buf + off);

        if (f->len - off < WIN_REC_HEAD_SIZE || r->size > f->len - off || !win_rec_valid(r)) {
            char why[64];

            snprintf(why, sizeof(why), "corrupt record at byte %zu", off);
            return fail(f, err, err_size, path, why);
        }
        if (f->nr == cap) {
            const struct win_rec **v;

            cap = cap ? 2 * cap : 1024;
            if (!(v = realloc(f->recs, cap * sizeof(*v))))
                return fail(f, err, err_size, path, "out of memory");
            f->recs = v;
        }
        f->recs[f->nr++] = r;
        if (r->kind == WIN_REC_CLOCK)
            clock_set(f, r);
        off += r->size;
    }
    if (f->nr)
        qsort(f->recs, f->nr, sizeof(*f->recs), by_pid_seq);
    return 0;
}

int win_rec_valid(const struct win_rec *r)
{
    return r->size >= WIN_REC_HEAD_SIZE && r->size <= WIN_SHM_SEG_SIZE && r->size % 8 == 0 &&
           r->kind != 0 && r->kind <= WIN_REC_KIND_MAX && r->nr_frames <= WIN_REC_MAX_FRAMES &&
           WIN_REC_HEAD_SIZE + 8u * r->nr_frames <= r->size;
}

void win_file_release(struct win_file *f)
{
    free(f->recs);
    free(f->buf);
    memset(f, 0, sizeof(*f));
}

uint64_t win_file_ns(const struct win_file *f, const struct win_rec *r)
{
    if (f->ns_per_tick <= 0 || r->tsc < f->tsc_zero)
        return 0;
    return (uint64_t)((double)(r->tsc - f->tsc_zero) * f->ns_per_tick);
}

void win_rec_module_text(const struct win_rec *r, const char **path, size_t *path_len,
                         const char **pdb, size_t *pdb_len)
{
    const char *text = (const char *)(win_rec_frames(r) + r->nr_frames);
    size_t room = r->size - WIN_REC_HEAD_SIZE - 8u * r->nr_frames;

    *path = text;
    *path_len = strnlen(text, room);
    *pdb = *path_len < room ? text + *path_len + 1 : "";
    *pdb_len = *path_len < room ? strnlen(*pdb, room - *path_len - 1) : 0;
}
