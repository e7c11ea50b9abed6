/* SPDX-License-Identifier: MIT */
/* The Wine channel (rec_win.h): the launcher's event file read as it grows,
 * each process's records put back in their seq order, converted by
 * windows/win_conv.c and written in time order through the recorder. */
#include "recorder/rec_win.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/util_array.h"
#include "windows/win_conv.h"
#include "windows/win_file.h"

/* Events younger than this wait: a record is complete in the launcher's
 * shared memory before its call returns, but reaches the file up to one
 * drain round (2 ms) and one of our rounds later; a thread preempted
 * between its rdtsc and its commit comes later still. A later record is
 * written at the time of the last one written (order within a process is
 * its seq order whatever the times). */
#define REC_WIN_GUARD_NS (200 * 1000 * 1000ull)
/* A seq missing this long is given up (a record the ring could not hold). */
#define REC_WIN_GAP_NS (1000 * 1000 * 1000ull)
#define REC_WIN_READ (1u << 20)
/* Consumed bytes are punched out of the file in steps of this. */
#define REC_WIN_PUNCH (8u << 20)

struct rw_item {
    struct win_rec *r;
    uint64_t ts;
};

struct rw_proc {
    uint32_t pid;
    uint64_t next_seq; /* the seq that moves to ready next */
    uint64_t gap_since;
    struct win_rec **pend; /* min-heap by seq */
    size_t nr_pend, cap_pend;
    struct rw_item *ready; /* FIFO in seq order, times never going back */
    size_t head, len, cap;
    uint64_t last_ts;
    int exited;
    char *exe; /* its first module's path: PROCESS_START's string */
    size_t exe_len;
    int exe_known;
};

struct rec_win {
    struct rec_session *s;
    struct win_conv *conv;
    int fd;
    const char *name;
    uint32_t depth;
    unsigned char *buf;
    size_t len, cap;
    uint64_t off;     /* file offset of buf[0] */
    uint64_t punched; /* file bytes given back */
    int head_ok;
    int broken; /* a bad record: nothing more is read */
    struct rw_proc *procs;
    uint32_t nr_procs, cap_procs;
};

unsigned rec_win_pe_machine(const char *path)
{
    unsigned char h[64], pe[6];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    unsigned machine = 0;

    if (fd < 0)
        return 0;
    if (pread(fd, h, sizeof(h), 0) == (ssize_t)sizeof(h) && h[0] == 'M' && h[1] == 'Z') {
        uint32_t lfanew =
            (uint32_t)h[60] | (uint32_t)h[61] << 8 | (uint32_t)h[62] << 16 | (uint32_t)h[63] << 24;

        if (pread(fd, pe, sizeof(pe), lfanew) == (ssize_t)sizeof(pe) && !memcmp(pe, "PE\0\0", 4))
            machine = (unsigned)pe[4] | (unsigned)pe[5] << 8;
    }
    close(fd);
    return machine;
}

static int sink_stack(void *ctx, uint32_t image, const uint64_t *frames, uint32_t nr, uint32_t *id)
{
    struct rec_win *w = ctx;

    *id = 0;
    if (w->s->write_err)
        return 0; /* counted, not written, as the recorder does */
    int rc = fmt_writer_stack(w->s->w, image, frames, nr < w->depth ? nr : w->depth, id);

    if (rc < 0)
        w->s->write_err = rc;
    return 0;
}

static int sink_event(void *ctx, struct fmt_event *ev)
{
    struct rec_win *w = ctx;

    rec_merge_write(w->s, ev, ev->ts_ns);
    return 0;
}

struct rec_win *rec_win_new(struct rec_session *s, int fd, const char *name, uint32_t depth)
{
    struct rec_win *w = calloc(1, sizeof(*w));

    if (!w)
        return NULL;
    *w = (struct rec_win){.s = s, .fd = fd, .name = name, .depth = depth};
    struct win_conv_sink sink = {w, sink_stack, sink_event};
    if (!(w->conv = win_conv_new(&sink))) {
        free(w);
        return NULL;
    }
    return w;
}

static struct rw_proc *proc_of(struct rec_win *w, uint32_t pid)
{
    for (uint32_t i = 0; i < w->nr_procs; i++)
        if (w->procs[i].pid == pid)
            return &w->procs[i];
    if (UTIL_ARRAY_RESERVE(w->procs, w->cap_procs, (size_t)w->nr_procs + 1, 8))
        return NULL;
    w->procs[w->nr_procs] = (struct rw_proc){.pid = pid, .next_seq = 1};
    return &w->procs[w->nr_procs++];
}

static void pend_push(struct rw_proc *p, struct win_rec *r)
{
    size_t i = p->nr_pend++;

    while (i && p->pend[(i - 1) / 2]->seq > r->seq) {
        p->pend[i] = p->pend[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    p->pend[i] = r;
}

static struct win_rec *pend_pop(struct rw_proc *p)
{
    struct win_rec *top = p->pend[0], *last = p->pend[--p->nr_pend];
    size_t i = 0;

    for (;;) {
        size_t c = 2 * i + 1;

        if (c >= p->nr_pend)
            break;
        if (c + 1 < p->nr_pend && p->pend[c + 1]->seq < p->pend[c]->seq)
            c++;
        if (p->pend[c]->seq >= last->seq)
            break;
        p->pend[i] = p->pend[c];
        i = c;
    }
    if (p->nr_pend)
        p->pend[i] = last;
    return top;
}

/* One whole record from the file: kept until its process's order allows. */
static int take(struct rec_win *w, const struct win_rec *src)
{
    struct rw_proc *p;
    struct win_rec *r;

    if (src->kind == WIN_REC_CLOCK)
        return 0; /* times come from the host's TSC line, the same counter */
    if (!(p = proc_of(w, src->pid)) ||
        UTIL_ARRAY_RESERVE(p->pend, p->cap_pend, p->nr_pend + 1, 64) || !(r = malloc(src->size)))
        return -ENOMEM;
    memcpy(r, src, src->size);
    pend_push(p, r);
    if (r->kind == WIN_REC_EXIT)
        p->exited = 1; /* the launcher writes it after the process's last drain */
    return 0;
}

/* Move p's records whose turn has come to its ready FIFO, with times. */
static int settle(struct rec_win *w, struct rw_proc *p, uint64_t now_ns)
{
    while (p->nr_pend) {
        const struct win_rec *top = p->pend[0];

        if (top->seq > p->next_seq && !p->exited) {
            if (!p->gap_since)
                p->gap_since = now_ns;
            if (now_ns - p->gap_since < REC_WIN_GAP_NS)
                return 0;
        }
        p->gap_since = 0;
        if (p->head == p->len)
            p->head = p->len = 0;
        if (UTIL_ARRAY_RESERVE(p->ready, p->cap, p->len + 1, 256))
            return -ENOMEM;
        struct win_rec *r = pend_pop(p);
        uint64_t ts = rec_clock_ns(&w->s->clock, r->tsc, 1);

        /* seq is taken before a free's call, the time after it */
        if (ts < p->last_ts)
            ts = p->last_ts;
        p->last_ts = ts;
        if (r->seq >= p->next_seq)
            p->next_seq = r->seq + 1;
        p->ready[p->len++] = (struct rw_item){r, ts};
        if (r->kind == WIN_REC_MODULE && !p->exe_known) {
            const char *path, *pdb;
            size_t path_len, pdb_len;

            win_rec_module_text(r, &path, &path_len, &pdb, &pdb_len);
            if (!(p->exe = malloc(path_len + 1)))
                return -ENOMEM;
            memcpy(p->exe, path, path_len + 1);
            p->exe_len = path_len;
            p->exe_known = 1;
        }
    }
    return 0;
}

/* p's next record, unless it is the PROCESS record and the program's path
 * (its first module, recorded just after) has not arrived yet. */
static int head_blocked(const struct rw_proc *p)
{
    return p->ready[p->head].r->kind == WIN_REC_PROCESS && !p->exe_known && !p->exited;
}

static int emit(struct rec_win *w, uint64_t limit)
{
    for (;;) {
        struct rw_proc *best = NULL;
        uint64_t bound = limit;

        for (uint32_t i = 0; i < w->nr_procs; i++) {
            struct rw_proc *p = &w->procs[i];

            if (p->head == p->len)
                continue;
            if (head_blocked(p)) {
                bound = p->ready[p->head].ts < bound ? p->ready[p->head].ts : bound;
                continue;
            }
            if (!best || p->ready[p->head].ts < best->ready[best->head].ts)
                best = p;
        }
        if (!best || best->ready[best->head].ts >= bound)
            return 0;
        struct rw_item it = best->ready[best->head++];
        const struct win_rec *r = it.r;
        int rc = win_conv_record(w->conv, r, it.ts, (uint32_t)r->a[1], best->exe, best->exe_len);

        free(it.r);
        if (rc)
            return rc;
    }
}

/* Parse the whole records in buf. Returns 0, 1 on a corrupt record (msg
 * set), or -ENOMEM. */
static int parse(struct rec_win *w, char *msg, size_t msg_size)
{
    size_t pos = 0;
    int rc = 0;

    if (!w->head_ok) {
        struct win_file_head fh;

        if (w->len < sizeof(fh))
            return 0;
        memcpy(&fh, w->buf, sizeof(fh));
        if (memcmp(fh.magic, WIN_FILE_MAGIC, 8) || fh.version != 1 || fh.head_size != sizeof(fh)) {
            snprintf(msg, msg_size, "%s: not a memscribe Windows event file (version 1)", w->name);
            return 1;
        }
        w->head_ok = 1;
        pos = sizeof(fh);
    }
    while (w->len - pos >= WIN_REC_HEAD_SIZE) {
        const struct win_rec *r = (const struct win_rec *)(w->buf + pos);

        if (!win_rec_valid(r)) {
            snprintf(msg, msg_size, "%s: corrupt record at byte %llu", w->name,
                     (unsigned long long)(w->off + pos));
            rc = 1;
            break;
        }
        if (r->size > w->len - pos)
            break;
        if ((rc = take(w, r)))
            break;
        pos += r->size;
    }
    memmove(w->buf, w->buf + pos, w->len - pos);
    w->len -= pos;
    w->off += pos;
    return rc;
}

/* Read what the file holds now. Returns 0, 1 when it is bad (msg set: no
 * more is read from it), or -ENOMEM. */
static int read_more(struct rec_win *w, int final, char *msg, size_t msg_size)
{
    ssize_t n;
    int rc = 0;

    do {
        if (UTIL_ARRAY_RESERVE(w->buf, w->cap, w->len + REC_WIN_READ, REC_WIN_READ))
            return -ENOMEM;
        n = read(w->fd, w->buf + w->len, REC_WIN_READ);
        if (n < 0 && errno != EINTR) {
            snprintf(msg, msg_size, "%s: %s", w->name, strerror(errno));
            return 1;
        }
        if (n > 0) {
            w->len += (size_t)n;
            rc = parse(w, msg, msg_size);
        }
    } while (n != 0 && !rc);
    if (!rc && final && w->len) {
        snprintf(msg, msg_size, "%s: ends inside a record at byte %llu", w->name,
                 (unsigned long long)w->off);
        return 1;
    }
    /* Bytes read are the recorder's: the file need not hold them. */
    if (w->off - w->punched >= REC_WIN_PUNCH) {
        uint64_t to = w->off & ~(uint64_t)(REC_WIN_PUNCH - 1);

        if (fallocate(w->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, (off_t)to) == 0)
            w->punched = to;
        else
            w->punched = w->off; /* not supported here: keep the bytes */
    }
    return rc;
}

int rec_win_poll(struct rec_win *w, uint64_t now_ns, int final, char *msg, size_t msg_size)
{
    int bad = 0, rc = 0;

    if (!w->broken && (rc = read_more(w, final, msg, msg_size)) > 0)
        bad = w->broken = 1;
    /* What came before a bad record is written all the same. */
    for (uint32_t i = 0; i < w->nr_procs && rc >= 0; i++) {
        if (final)
            w->procs[i].exited = 1;
        rc = settle(w, &w->procs[i], now_ns);
    }
    if (rc >= 0)
        rc = emit(w,
                  final ? UINT64_MAX : (now_ns > REC_WIN_GUARD_NS ? now_ns - REC_WIN_GUARD_NS : 0));
    if (rc < 0) {
        snprintf(msg, msg_size, "%s: %s", w->name, strerror(-rc));
        return -1;
    }
    return bad ? -1 : 0;
}

void rec_win_free(struct rec_win *w)
{
    if (!w)
        return;
    for (uint32_t i = 0; i < w->nr_procs; i++) {
        struct rw_proc *p = &w->procs[i];

        for (size_t k = 0; k < p->nr_pend; k++)
            free(p->pend[k]);
        for (size_t k = p->head; k < p->len; k++)
            free(p->ready[k].r);
        free(p->pend);
        free(p->ready);
        free(p->exe);
    }
    free(w->procs);
    free(w->buf);
    win_conv_free(w->conv);
    free(w);
}
