/* SPDX-License-Identifier: MIT */
/* Traced process images and their rings: taking in the segments the
 * collector announces, copying records out of shared memory (validating
 * each one: a wild program may scribble on it), and closing an image. */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "recorder/rec_counters.h"
#include "recorder/rec_internal.h"
#include "util/util_array.h"

struct rec_image *rec_stream_find_pid(struct rec_session *s, uint32_t pid)
{
    for (uint32_t i = s->nr_images; i-- > 0;)
        if (s->images[i]->open && s->images[i]->pid == pid)
            return s->images[i];
    return NULL;
}

static struct rec_image *rec_stream_find_id(struct rec_session *s, uint64_t stream_id)
{
    for (uint32_t i = s->nr_images; i-- > 0;)
        if (s->images[i]->open && s->images[i]->stream_id == stream_id)
            return s->images[i];
    return NULL;
}

int rec_stream_segment_early(struct rec_session *s, const struct fmt_shm_hello *hello)
{
    struct rec_image *img;

    if (hello->kind != FMT_SHM_HELLO_SEGMENT || !(img = rec_stream_find_id(s, hello->stream_id)))
        return 0;
    return hello->segment_index > img->nr_segs;
}

/* Read a whole small /proc file into a malloc'd buffer. */
static char *rec_read_proc(uint32_t pid, const char *what, uint32_t *len)
{
    char path[64];
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    int fd;

    *len = 0;
    snprintf(path, sizeof(path), "/proc/%u/%s", pid, what);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || !buf) {
        if (fd >= 0)
            close(fd);
        free(buf);
        return NULL;
    }
    for (;;) {
        ssize_t r;

        if (n == cap) {
            char *nb = realloc(buf, cap * 2);

            if (!nb)
                break;
            buf = nb;
            cap *= 2;
        }
        r = read(fd, buf + n, cap - n);
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    *len = (uint32_t)n;
    return buf;
}

/* info: a private copy of the segment's info area (FMT_SHM_INFO_OFFSET to
 * FMT_SHM_HEADER_SIZE); h: the private copy of its header. */
static void rec_queue_start(struct rec_session *s, struct rec_image *img,
                            const struct fmt_shm_header *h, const char *info, uint64_t ts)
{
    struct fmt_event ev = {0};
    uint32_t room = FMT_SHM_HEADER_SIZE - FMT_SHM_INFO_OFFSET;
    uint32_t exe_len = h->exe_len, argv_len = h->argv_len;
    char *exe = NULL, *argv = NULL;

    /* Lengths count bytes of the copy, whatever they hold (a NUL inside
     * the path included): no string function decides how much is read. */
    if (exe_len <= room && argv_len <= room - exe_len) {
        exe = exe_len ? malloc(exe_len) : NULL;
        argv = argv_len ? malloc(argv_len) : NULL;
        if (exe)
            memcpy(exe, info, exe_len);
        if (argv)
            memcpy(argv, info + exe_len, argv_len);
    }
    if (!exe) {
        /* Not sent: ask /proc while the process is there. */
        char path[64], buf[4096];
        ssize_t n;

        snprintf(path, sizeof(path), "/proc/%u/exe", img->pid);
        n = readlink(path, buf, sizeof(buf) - 1);
        exe_len = n > 0 ? (uint32_t)n : 0;
        exe = n > 0 ? strndup(buf, (size_t)n) : NULL;
        if (!exe)
            exe_len = 0;
    }
    if (!argv)
        argv = rec_read_proc(img->pid, "cmdline", &argv_len);
    if (!argv)
        argv_len = 0;
    ev.kind = FMT_EV_PROCESS_START;
    ev.image = img->index;
    ev.pid = img->pid;
    ev.tid = img->pid;
    ev.thread = img->main_thread;
    ev.arg[0] = img->ppid;
    ev.arg[1] = (uint64_t)img->how;
    /* cmdline ends with a NUL; the trace keeps NUL-separated words. */
    if (argv && argv_len && argv[argv_len - 1] == 0)
        argv_len--;
    rec_merge_synth(s, &ev, ts, exe, exe_len, argv, argv_len);
}

/* img's process exec'd at ts (the new image's hello): an RSS sample the
 * recorder took for img at ts or later read the new image (the sampler
 * cannot tell an exec from outside), and would date img's end after the
 * new image's start (rec_stream_close ends an image after its last
 * sample). Drop those still waiting in the merge, which holds back what
 * is dated after a hello not yet in (docs/protocol-order.md, "Time order"); one
 * already written keeps the end after it. */
static void rec_drop_rss_after(struct rec_session *s, struct rec_image *img, uint64_t ts)
{
    uint32_t kept = 0;
    bool rss_written = true; /* the latest sample, unless found waiting */

    for (uint32_t i = 0; i < s->nr_synth; i++) {
        struct rec_synth *n = &s->synth[i];

        if (n->ev.kind == FMT_EV_RSS && n->ev.image == img->index && n->ev.ts_ns >= ts) {
            rss_written &= n->ev.ts_ns != img->rss_sample_ns;
            continue; /* (an RSS event carries no strings) */
        }
        s->synth[kept++] = *n;
    }
    s->nr_synth = kept;
    if (img->rss_sample_ns >= ts && !rss_written)
        img->rss_sample_ns = 0; /* every sample left is older */
}

/* Check h, the private copy of a segment's header, against the hello and
 * the segment's size. */
static int rec_check_segment(const struct fmt_shm_hello *hello, const struct fmt_shm_header *h,
                             size_t size)
{
    if (h->magic != FMT_SHM_SEG_MAGIC || h->version != FMT_SHM_VERSION)
        return -EPROTO;
    if (h->nr_rings == 0 || h->nr_rings > REC_MAX_RINGS_PER_SEGMENT || h->ring_size < 4096 ||
        h->ring_size > (256u << 20) || (h->ring_size & (h->ring_size - 1)))
        return -EPROTO;
    if (h->ctl_offset != FMT_SHM_HEADER_SIZE ||
        h->data_offset != fmt_shm_data_offset(h->nr_rings) ||
        fmt_shm_segment_bytes(h->segment_index, h->nr_rings, h->ring_size) != size ||
        h->counters_offset !=
            (h->segment_index ? 0 : fmt_shm_segment_size(h->nr_rings, h->ring_size)))
        return -EPROTO;
    if (h->pid != hello->pid || h->stream_id != hello->stream_id ||
        h->segment_index != hello->segment_index || h->segment_index >= REC_MAX_SEGMENTS)
        return -EPROTO;
    return 0;
}

int rec_stream_attach(struct rec_session *s, const struct fmt_shm_hello *hello, void *seg,
                      size_t size, int pidfd, uint64_t now_ns)
{
    /* The program can write its segment at any time: the header and the
     * info after it are copied once, checked, and only the copies are
     * used from here on (docs/protocol.md, Validation). */
    struct fmt_shm_header h;
    char info[FMT_SHM_HEADER_SIZE - FMT_SHM_INFO_OFFSET];
    struct rec_ring *fresh[REC_MAX_RINGS_PER_SEGMENT];
    struct rec_image *img;
    uint64_t hello_ns;
    int rc;

    if (hello->magic != FMT_SHM_HELLO_MAGIC || hello->version != FMT_SHM_VERSION ||
        size < FMT_SHM_HEADER_SIZE)
        return -EPROTO;
    memcpy(&h, seg, sizeof(h));
    memcpy(info, (const char *)seg + FMT_SHM_INFO_OFFSET, sizeof(info));
    rc = rec_check_segment(hello, &h, size);
    if (rc)
        return rc;
    /* The hello was sent after the recording began and before now. */
    hello_ns = rec_clock_ns(&s->clock, hello->ts_ns, h.clock_tsc != 0);
    if (hello_ns < s->start_mono_ns)
        hello_ns = s->start_mono_ns;
    if (hello_ns > now_ns)
        hello_ns = now_ns;
    /* Everything that can fail for want of memory first, before any
     * image changes: a segment is taken whole or not at all. */
    for (uint32_t i = 0; i < h.nr_rings; i++)
        if (!(fresh[i] = calloc(1, sizeof(*fresh[i])))) {
            while (i-- > 0)
                free(fresh[i]);
            return -ENOMEM;
        }
    if (hello->kind == FMT_SHM_HELLO_SEGMENT) {
        img = rec_stream_find_id(s, hello->stream_id);
        if (!img || hello->segment_index != img->nr_segs || img->clock_tsc != (h.clock_tsc != 0)) {
            rc = -EPROTO;
            goto fail;
        }
        if (pidfd >= 0)
            close(pidfd);
    } else if (hello->kind == FMT_SHM_HELLO_IMAGE || hello->kind == FMT_SHM_HELLO_FORK) {
        struct rec_image *old = rec_stream_find_pid(s, hello->pid);
        int how = FMT_START_FORK;

        if (hello->segment_index != 0) {
            rc = -EPROTO;
            goto fail;
        }
        if (hello->kind == FMT_SHM_HELLO_IMAGE)
            how = (hello->pid == (uint32_t)s->root_pid && !old && s->nr_images == 0)
                      ? FMT_START_INITIAL
                      : FMT_START_EXEC;
        if (old) {
            /* exec: the earlier image of this pid is finished. Keep its
             * pidfd for the new image (same process). */
            if (pidfd < 0) {
                pidfd = old->pidfd;
                old->pidfd = -1;
            }
            /* It ended when the new image began, not when we noticed;
             * and the new image begins no earlier than it ended: its
             * hello's time may be the round's start (the clamp above)
             * while the earlier image's last events come after that. */
            old->over = 1;
            rec_drop_rss_after(s, old, hello_ns);
            uint64_t ended = rec_stream_close(s, old, 0, 0, hello_ns);
            if (ended > hello_ns)
                hello_ns = ended;
        }
        if (UTIL_ARRAY_RESERVE(s->images, s->cap_images, (size_t)s->nr_images + 1, 8)) {
            rc = -ENOMEM;
            goto fail;
        }
        img = calloc(1, sizeof(*img));
        if (!img) {
            rc = -ENOMEM;
            goto fail;
        }
        img->index = s->nr_images;
        img->pid = hello->pid;
        img->ppid = hello->ppid;
        img->stream_id = hello->stream_id;
        img->how = how;
        img->pidfd = pidfd;
        img->open = 1;
        img->clock_tsc = h.clock_tsc != 0;
        img->start_ns = hello_ns;
        img->main_thread = s->next_thread++;
        s->images[s->nr_images++] = img;
        rec_queue_start(s, img, &h, info, hello_ns);
    } else {
        rc = -EPROTO;
        goto fail;
    }
    if (img->nr_rings + h.nr_rings > img->cap_rings) {
        uint32_t cap = img->nr_rings + h.nr_rings;
        struct rec_ring **nr = realloc(img->rings, cap * sizeof(*nr));

        if (!nr) {
            if (img->nr_segs == 0) {
                /* A new image without its segment: it gives the pidfd
                 * back to the caller and ends here. */
                img->pidfd = -1;
                img->open = 0;
            }
            rc = -ENOMEM;
            goto fail;
        }
        img->rings = nr;
        img->cap_rings = cap;
    }
    for (uint32_t i = 0; i < h.nr_rings; i++) {
        struct rec_ring *r = fresh[i];

        r->img = img;
        r->ctl = (struct fmt_shm_ring_ctl *)((char *)seg + h.ctl_offset) + i;
        r->data = (unsigned char *)seg + h.data_offset + (uint64_t)i * h.ring_size;
        r->size = h.ring_size;
        r->tail = atomic_load_explicit(&r->ctl->tail, memory_order_acquire);
        r->last_ts = hello_ns; /* its events come after the hello */
        img->rings[img->nr_rings++] = r;
    }
    img->segs[img->nr_segs].base = seg;
    img->segs[img->nr_segs].size = size;
    img->nr_segs++;
    /* From the checked copy: the area's place, not the program's word. */
    if (h.segment_index == 0) {
        img->seg0 = seg;
        img->ctr_area =
            (const struct fmt_shm_counters *)((const char *)seg + size - FMT_SHM_COUNTERS_BYTES);
    }
    atomic_store_explicit(&((struct fmt_shm_header *)seg)->recorder_pid, s->recorder_pid,
                          memory_order_relaxed);
    return 0;
fail:
    for (uint32_t i = 0; i < h.nr_rings; i++)
        free(fresh[i]);
    return rc;
}

/* Turn a ring's stream off after a malformed record. */
static void rec_ring_turn_off(struct rec_ring *r)
{
    r->off = 1;
    r->nr_bad++;
}

/* Room for len more bytes at the end of the ring's buffer (r->buf +
 * r->buf_len). Returns 0 or -ENOMEM. */
static int rec_buf_room(struct rec_ring *r, uint32_t len)
{
    if (r->buf_pos && r->buf_pos == r->buf_len) {
        r->buf_pos = r->buf_len = 0;
        r->exit_at = 0;
    }
    if (__builtin_expect(r->buf_len + len <= r->buf_cap, 1))
        return 0;
    if (r->buf_pos > r->buf_cap / 2) {
        memmove(r->buf, r->buf + r->buf_pos, r->buf_len - r->buf_pos);
        r->buf_len -= r->buf_pos;
        r->exit_at = r->exit_at > r->buf_pos ? r->exit_at - r->buf_pos : 0;
        r->buf_pos = 0;
    }
    if (r->buf_len + len > r->buf_cap) {
        size_t cap = r->buf_cap ? r->buf_cap * 2 : 1 << 16;
        unsigned char *nb;

        while (cap < r->buf_len + len)
            cap *= 2;
        nb = realloc(r->buf, cap);
        if (!nb)
            return -ENOMEM;
        r->buf = nb;
        r->buf_cap = cap;
    }
    return 0;
}

/* How far ahead of the record being copied the drain asks for the ring's
 * lines (bytes). */
#define REC_DRAIN_AHEAD 512

/* Copy len bytes out of the shared ring. Most records are 32 to 64 bytes:
 * word copies, not the `rep movs` an inlined memcpy of unknown size
 * becomes (slow to start). */
static inline void rec_copy_record(unsigned char *dst, const unsigned char *src, uint32_t len)
{
    if (len > 64) {
        memcpy(dst, src, len);
        return;
    }
    for (uint32_t i = 0; i < len; i += 8) {
        uint64_t w;

        memcpy(&w, src + i, 8);
        memcpy(dst + i, &w, 8);
    }
}

static void rec_stack_define(struct rec_session *s, struct rec_image *img,
                             const struct fmt_shm_stack *st)
{
    uint32_t gid = 0;

    if (st->id == 0)
        return;
    if (s->write_err == 0) {
        int rc = fmt_writer_stack(s->w, img->index, st->frames, st->nr_frames, &gid);

        if (rc < 0)
            s->write_err = rc;
    }
    /* Out of memory: the events naming it get stack 0 and are counted. */
    (void)rec_stackmap_put(&img->stack_map, st->id, gid);
}

/* Length of the record at p with `avail` bytes before the ring end or the
 * head, or 0 if it is malformed. */
static uint32_t rec_record_len(const unsigned char *p, uint64_t avail)
{
    uint8_t type = p[0];
    uint32_t len;

    if (avail < 8)
        return 0;
    if (type == FMT_SHM_REC_EVENT || type == FMT_SHM_REC_RELEASE) {
        const struct fmt_shm_event *e = (const void *)p;
        unsigned nargs = e->origin_nargs >> 4;
        int want = fmt_shm_event_nargs(e->kind);

        if (type == FMT_SHM_REC_RELEASE) {
            if (nargs != 0 || (e->kind != FMT_EV_REALLOC && e->kind != FMT_EV_REALLOCARRAY &&
                               e->kind != FMT_EV_MREMAP))
                return 0;
        } else if (want < 0 || (unsigned)want != nargs) {
            return 0;
        }
        /* No call that succeeded spans more than the address space. */
        if (!(e->flags & FMT_EVF_FAILED) && e->size > REC_MAX_EVENT_SIZE)
            return 0;
        len = FMT_SHM_EVENT_SIZE(nargs);
    } else if (type >= FMT_SHM_REC_PAD && type <= FMT_SHM_REC_MAX) {
        len = ((const struct fmt_shm_sized *)(const void *)p)->len;
        if (len < 8 || (len & 7))
            return 0;
    } else {
        return 0;
    }
    if (len > avail)
        return 0;
    switch (type) {
    case FMT_SHM_REC_STACK: {
        const struct fmt_shm_stack *st = (const void *)p;

        if (len < sizeof(*st) || st->nr_frames > FMT_SHM_MAX_DEPTH ||
            fmt_shm_stack_size(st->nr_frames) != len)
            return 0;
        break;
    }
    case FMT_SHM_REC_THREAD_START:
    case FMT_SHM_REC_THREAD_EXIT:
    case FMT_SHM_REC_THREAD_NAME: {
        const struct fmt_shm_thread *t = (const void *)p;

        if (len < sizeof(*t) || t->name_len > 256 || fmt_shm_thread_size(t->name_len) != len)
            return 0;
        break;
    }
    case FMT_SHM_REC_MODULE_LOAD:
    case FMT_SHM_REC_MODULE_UNLOAD: {
        const struct fmt_shm_module *m = (const void *)p;

        if (len < sizeof(*m) || m->nr_segments > FMT_MAX_SEGMENTS ||
            m->path_len >= FMT_SHM_MAX_PATH || m->build_id_len > FMT_MAX_BUILD_ID ||
            fmt_shm_module_size(m->nr_segments, m->path_len) != len)
            return 0;
        break;
    }
    case FMT_SHM_REC_POOL: {
        const struct fmt_shm_pool *pl = (const void *)p;

        if (len < sizeof(*pl) || pl->name_len > FMT_SHM_MAX_POOL_NAME ||
            fmt_shm_pool_size(pl->name_len) != len || !fmt_shm_pool_kind(pl->kind) ||
            pl->size > REC_MAX_EVENT_SIZE)
            return 0;
        break;
    }
    default:
        break;
    }
    return len;
}

/* A producer sleeps on wake_seq when its ring is full: ring it. The store
 * of tail comes first (seq_cst), then the read of waiters, so either the
 * producer sees the new tail or we see it waiting. */
static void rec_ring_wake(struct rec_ring *r)
{
    if (atomic_load(&r->ctl->waiters)) {
        atomic_store(&r->ctl->waiters, 0);
        atomic_fetch_add(&r->ctl->wake_seq, 1);
        syscall(SYS_futex, &r->ctl->wake_seq, FUTEX_WAKE, INT32_MAX, NULL, NULL, 0);
    }
}

/* A record just copied to the buffer: its time in ns from here on. A
 * stream's times never go back, and no record published before the
 * recorder read t_max was stamped after it: a scribbled time is clamped
 * into [previous time, t_max]. */
static inline void rec_stamp_copy(struct rec_session *s, struct rec_ring *r, unsigned char *d,
                                  uint64_t t_max)
{
    uint64_t *ts = rec_record_ts(d);

    *ts = rec_clock_ns(&s->clock, *ts, r->img->clock_tsc);
    if (*ts < r->last_ts)
        *ts = r->last_ts;
    if (*ts > t_max)
        *ts = t_max > r->last_ts ? t_max : r->last_ts;
    r->last_ts = *ts;
}

/* The record just appended at `at` came after its thread's exit record,
 * which is still in the buffer: the thread made a call after its exit
 * hook ran (glibc frees its thread-local buffers after the key
 * destructors). One thread, one exit: the exit record moves after it. */
static void rec_exit_follow(struct rec_ring *r)
{
    size_t at = r->exit_at - 1;
    uint32_t len;

    if (at < r->buf_pos || r->buf[at] != FMT_SHM_REC_THREAD_EXIT) {
        r->exit_at = 0;
        return; /* written out already: the call goes to the ended thread */
    }
    len = ((const struct fmt_shm_sized *)(const void *)(r->buf + at))->len;
    if (rec_buf_room(r, len) != 0) {
        r->exit_at = 0;
        return;
    }
    at = r->exit_at - 1; /* rec_buf_room may have moved the unread bytes */
    memcpy(r->buf + r->buf_len, r->buf + at, len);
    r->buf[at] = FMT_SHM_REC_PAD; /* skipped by the merge */
    *rec_record_ts(r->buf + r->buf_len) = r->last_ts;
    r->exit_at = r->buf_len + 1;
    r->buf_len += len;
}

/* Copy the plain mallocs and frees at the start of the avail bytes at p
 * into the buffer, which has room for all of them; returns the bytes
 * taken (a multiple of a record's), up to the first other record; *stop
 * set if the copy must end there (rec_exit_follow). Not inlined: its loop
 * keeps its own registers. */
static __attribute__((noinline)) uint64_t rec_drain_run(struct rec_session *s, struct rec_ring *r,
                                                        const unsigned char *p, uint64_t avail,
                                                        uint64_t t_max, int *stop)
{
    const uint32_t len = FMT_SHM_EVENT_SIZE(0);
    unsigned char *d = r->buf + r->buf_len;
    uint64_t done = 0;

    for (; avail - done >= len; done += len, d += len) {
        /* The producer's core has the lines: ask for them early (only
         * written ones: a line it is still writing would bounce). */
        if (avail - done > REC_DRAIN_AHEAD)
            __builtin_prefetch(p + done + REC_DRAIN_AHEAD);
        memcpy(d, p + done, FMT_SHM_EVENT_SIZE(0)); /* a constant size: two vector moves */
        if (d[0] != FMT_SHM_REC_EVENT || d[3] != 0 ||
            (d[1] != FMT_EV_MALLOC && d[1] != FMT_EV_FREE) ||
            ((const struct fmt_shm_event *)(const void *)d)->size > REC_MAX_EVENT_SIZE)
            break;
        r->buf_len += len;
        rec_stamp_copy(s, r, d, t_max);
        if (__builtin_expect(r->exit_at != 0, 0)) {
            /* It may move what the buffer holds: go on one at a time. */
            rec_exit_follow(r);
            *stop = 1;
            return done + len;
        }
    }
    return done;
}

/* The plain mallocs and frees at the start of the avail bytes at p, and
 * the reallocs among them (one extra word, the old address; 7 % of
 * sqlite3's heap calls), into the buffer, which has room for all of them;
 * returns the bytes taken, up to the first other record. */
static uint64_t rec_drain_plain(struct rec_session *s, struct rec_ring *r, const unsigned char *p,
                                uint64_t avail, uint64_t t_max)
{
    const uint32_t len = FMT_SHM_EVENT_SIZE(1);
    uint64_t done = 0;
    int stop = 0;

    for (;;) {
        done += rec_drain_run(s, r, p + done, avail - done, t_max, &stop);
        if (stop || avail - done < len)
            return done;
        unsigned char *d = r->buf + r->buf_len;
        memcpy(d, p + done, len);
        if (d[0] != FMT_SHM_REC_EVENT || d[3] != 1 << 4 || d[1] != FMT_EV_REALLOC ||
            ((const struct fmt_shm_event *)(const void *)d)->size > REC_MAX_EVENT_SIZE)
            return done;
        r->buf_len += len;
        done += len;
        rec_stamp_copy(s, r, d, t_max);
        if (r->exit_at != 0) {
            rec_exit_follow(r);
            return done;
        }
    }
}

static void rec_ring_drain(struct rec_session *s, struct rec_ring *r)
{
    uint64_t head, tail = r->tail, t_max;

    if (!r->ctl)
        return;
    head = atomic_load_explicit(&r->ctl->head, memory_order_acquire);
    if (head == tail)
        return;
    t_max = rec_clock_now(&s->clock); /* after head: every record below it is older */
    if (head < tail || head - tail > r->size) {
        /* Scribbled control block: nothing here can be trusted. */
        if (!r->off)
            rec_ring_turn_off(r);
        r->tail = head;
        atomic_store(&r->ctl->tail, head);
        rec_ring_wake(r);
        return;
    }
    while (tail < head) {
        uint64_t pos = tail & (r->size - 1);
        uint64_t to_end = r->size - pos;
        uint64_t avail = head - tail < to_end ? head - tail : to_end;
        unsigned char *p = r->data + pos;
        uint32_t len;

        if (r->off) {
            /* Discard, but keep the producer moving. */
            r->nr_bad += avail / 32 ? avail / 32 : 1;
            tail += avail;
            continue;
        }
        /* Every record is copied out of the shared ring before it is
         * checked, and only the copy is used: the program can write its
         * ring at any time, and a length or count that changed between the
         * check and the use would take us out of bounds. First the common
         * case, a plain malloc or free of 32 bytes. */
        if (avail >= FMT_SHM_EVENT_SIZE(0) && rec_buf_room(r, (uint32_t)avail) == 0) {
            /* Room for all of them at once, so the loop over a run of
             * them checks nothing else. */
            uint64_t done = rec_drain_plain(s, r, p, avail, t_max);

            tail += done;
            if (done)
                continue;
        }
        len = rec_record_len(p, avail); /* how much to copy; checked again below */
        if (len == 0) {
            rec_ring_turn_off(r);
            continue;
        }
        if (p[0] == FMT_SHM_REC_PAD) {
            if (len != to_end)
                rec_ring_turn_off(r);
            else
                tail += len;
            continue;
        }
        if (p[0] == FMT_SHM_REC_STACK) {
            _Alignas(8) unsigned char st[sizeof(struct fmt_shm_stack) + 8 * FMT_SHM_MAX_DEPTH];

            if (len > sizeof(st)) {
                rec_ring_turn_off(r);
                continue;
            }
            rec_copy_record(st, p, len);
            if (st[0] != FMT_SHM_REC_STACK || rec_record_len(st, len) != len) {
                rec_ring_turn_off(r);
                continue;
            }
            rec_stack_define(s, r->img, (const void *)st);
        } else {
            unsigned char *d;

            if (rec_buf_room(r, len) != 0) {
                rec_ring_turn_off(r);
                continue;
            }
            d = r->buf + r->buf_len;
            rec_copy_record(d, p, len);
            if (d[0] == FMT_SHM_REC_PAD || d[0] == FMT_SHM_REC_STACK ||
                rec_record_len(d, len) != len) {
                rec_ring_turn_off(r);
                continue;
            }
            r->buf_len += len;
            rec_stamp_copy(s, r, d, t_max);
            if (d[0] == FMT_SHM_REC_THREAD_EXIT)
                r->exit_at = (size_t)(d - r->buf) + 1;
            else if (d[0] == FMT_SHM_REC_THREAD_START)
                r->exit_at = 0;
            else if (r->exit_at)
                rec_exit_follow(r);
        }
        tail += len;
    }
    s->nr_copied += tail - r->tail;
    r->tail = tail;
    atomic_store(&r->ctl->tail, tail);
    rec_ring_wake(r);
}

void rec_stream_drain(struct rec_session *s, struct rec_image *img)
{
    for (uint32_t i = 0; i < img->nr_rings; i++)
        rec_ring_drain(s, img->rings[i]);
}

void rec_stream_drain_ahead(struct rec_session *s, struct rec_image *img)
{
    for (uint32_t i = 0; i < img->nr_rings; i++) {
        struct rec_ring *r = img->rings[i];

        if (r->buf_len - r->buf_pos < r->size)
            rec_ring_drain(s, r);
    }
}

/* The exit time segment 0 of img holds (fmt_shm.h exit_ts), in the
 * recorder's clock; 0: none. */
static uint64_t rec_exit_stamp(struct rec_session *s, const struct rec_image *img)
{
    for (uint32_t i = 0; i < img->nr_segs; i++) {
        struct fmt_shm_header *h = img->segs[i].base;
        uint64_t raw;

        if (h->segment_index != 0)
            continue;
        raw = atomic_load_explicit(&h->exit_ts, memory_order_acquire);
        return raw ? rec_clock_ns(&s->clock, raw, img->clock_tsc) : 0;
    }
    return 0;
}

uint64_t rec_stream_close(struct rec_session *s, struct rec_image *img, int status,
                          int status_known, uint64_t now_ns)
{
    struct fmt_event ev = {0};
    uint64_t dropped = 0, bad = 0, last = 0;

    if (!img->open)
        return 0;
    rec_stream_drain(s, img);
    for (uint32_t i = 0; i < img->nr_rings; i++) {
        bad += img->rings[i]->nr_bad;
        if (img->rings[i]->last_ts > last)
            last = img->rings[i]->last_ts;
        img->rings[i]->ctl = NULL;
        img->rings[i]->data = NULL;
    }
    {
        /* The drop counters live in memory the program can write: it
         * cannot have dropped more than one call per ns on each CPU. */
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        uint64_t end = last > now_ns ? last : now_ns;
        uint64_t ran = (end > img->start_ns ? end - img->start_ns : 0) + 1000 * 1000;
        uint64_t most = ran * (uint64_t)(cpus > 0 ? cpus : 1);

        for (uint32_t i = 0; i < img->nr_segs; i++) {
            struct fmt_shm_header *h = img->segs[i].base;
            uint64_t d = atomic_load(&h->nr_dropped);

            dropped = d > most - dropped ? most : dropped + d;
        }
    }
    {
        /* The collector stamps when the image began to end; we notice only
         * later (a poll round, a busy loop). The stamp is in memory the
         * program can write: used only between its start and now. */
        uint64_t end = rec_exit_stamp(s, img);

        if (end > img->start_ns && end < now_ns)
            now_ns = end;
    }
    uint64_t ctr[FMT_CTR_ALL];
    int has_ctr = rec_counters_read(s, img, ctr);
    for (uint32_t i = 0; i < img->nr_segs; i++)
        munmap(img->segs[i].base, img->segs[i].size);
    img->nr_segs = 0;
    img->ctr_area = NULL;
    img->seg0 = NULL;
    img->open = 0;
    if (img->pidfd >= 0)
        close(img->pidfd);
    img->pidfd = -1;
    /* After the image's last event, never beside it: the merge puts a
     * synthetic event first among equal times, and an exit dated by the
     * collector's stamp can equal the time of a call made after the stamp
     * (a free from a later destructor). */
    if (last)
        last++;
    if (last < now_ns)
        last = now_ns;
    /* Nor before an RSS sample written for it: the process was alive then
     * (rec_sample_rss skips one without an address space). */
    if (last <= img->rss_sample_ns)
        last = img->rss_sample_ns + 1;
    if (last <= img->ctr_ns) /* nor before its counters */
        last = img->ctr_ns + 1;
    if (has_ctr) /* its last counts, before its exit */
        rec_counters_write(s, img, ctr, last);
    ev.image = img->index;
    ev.pid = img->pid;
    ev.tid = img->pid;
    ev.thread = img->main_thread;
    if (dropped + bad + img->nr_unknown_stacks) {
        ev.kind = FMT_EV_DROPPED;
        ev.arg[0] = dropped + bad;
        ev.arg[1] = img->nr_unknown_stacks;
        rec_merge_synth(s, &ev, last, NULL, 0, NULL, 0);
    }
    if (status_known == REC_RUNS_ON)
        return last; /* no exit: the trace does not see it end */
    ev.kind = FMT_EV_PROCESS_EXIT;
    ev.arg[0] = status_known ? (uint64_t)(uint32_t)status : 0;
    ev.arg[1] = status_known ? 1 : 0;
    img->exit_pending = 1; /* the merge ends its open threads then (rec_merge.c) */
    rec_merge_synth(s, &ev, last, NULL, 0, NULL, 0);
    return last;
}

void rec_stream_retire(struct rec_session *s)
{
    for (uint32_t i = 0; i < s->nr_images; i++) {
        struct rec_image *img = s->images[i];
        int busy = 0;

        if (img->open || img->retired || img->exit_pending)
            continue;
        for (uint32_t j = 0; j < img->nr_rings && !busy; j++)
            busy = img->rings[j]->buf_pos < img->rings[j]->buf_len;
        if (busy)
            continue;
        for (uint32_t j = 0; j < img->nr_rings; j++) {
            free(img->rings[j]->buf);
            free(img->rings[j]);
        }
        free(img->rings);
        img->rings = NULL;
        img->nr_rings = img->cap_rings = 0;
        rec_stackmap_free(&img->stack_map);
        img->nr_released = 0;
        img->retired = 1;
    }
}

void rec_session_clear(struct rec_session *s)
{
    for (uint32_t i = 0; i < s->nr_images; i++) {
        struct rec_image *img = s->images[i];

        for (uint32_t j = 0; j < img->nr_segs; j++)
            munmap(img->segs[j].base, img->segs[j].size);
        if (img->pidfd >= 0)
            close(img->pidfd);
        for (uint32_t j = 0; j < img->nr_rings; j++) {
            free(img->rings[j]->buf);
            free(img->rings[j]);
        }
        free(img->rings);
        rec_stackmap_free(&img->stack_map);
        free(img);
    }
    for (uint32_t i = 0; i < s->nr_conns; i++)
        close(s->conns[i].fd);
    s->nr_conns = 0;
    if (s->queue.marker != REC_MARKER_NONE)
        close(s->queue.marker_fd);
    s->queue.marker = REC_MARKER_NONE;
    for (uint32_t i = 0; i < s->nr_synth; i++) {
        free(s->synth[i].str);
        free(s->synth[i].str2);
    }
    free(s->synth);
    free(s->images);
    free(s->heap);
    rec_agg_free(s->agg);
    s->agg = NULL;
    rec_keep_free(s->keep);
    s->keep = NULL;
    free(s->keep_dir);
    s->keep_dir = NULL;
}
