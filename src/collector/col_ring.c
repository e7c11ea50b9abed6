/* SPDX-License-Identifier: MIT */
/* Segments of per-thread rings in shared memory (docs/protocol.md): making
 * them, announcing them to the recorder, claiming a ring for a thread, and
 * writing records into it with lossless back-pressure. */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "collector/col_internal.h"

struct col_segment {
    struct fmt_shm_header *hdr;
    uint64_t size;
    uint32_t nr_rings;
    struct col_ring rings[COL_MAX_RINGS_PER_SEGMENT];
};

/* Rings in segment `index`: 1, 1, 2, 4, 8, then 16. A program's address
 * space grows with its threads, one 4 MiB ring per thread alive at most
 * in the first segments, instead of 64 MiB up front (an RLIMIT_AS
 * program keeps what it could allocate untraced, less one ring). */
static uint32_t col_segment_rings(uint32_t index)
{
    return index == 0 ? 1u : index <= 4 ? 1u << (index - 1) : COL_MAX_RINGS_PER_SEGMENT;
}

static struct col_segment col_segs[COL_MAX_SEGMENTS];
static _Atomic uint32_t col_nr_segs;
static _Atomic int col_seg_lock;

/* The socket name and the recording's secret, read at init: the program
 * may change or clear its environment before it starts its next thread. */
static char col_sock_name[108];
static uint8_t col_secret[FMT_SHM_SECRET_BYTES];

int col_channel_init(void)
{
    const char *name = getenv(FMT_SHM_ENV_SOCKET), *secret = getenv(FMT_SHM_ENV_SECRET);

    if (!name && !secret) /* no recorder: MEMSCRIBE_OUTPUT may ask for our own */
        return col_selfrec_start(col_sock_name, sizeof(col_sock_name), col_secret);
    if (!name || !*name || strlen(name) >= sizeof(col_sock_name) - 1 || !secret ||
        fmt_shm_secret_parse(secret, col_secret) != 0)
        return -1;
    strcpy(col_sock_name, name);
    return 0;
}

/* Send one message over a fresh connection: connect, send, close, so a
 * program that closes every fd cannot break the channel. A hello for
 * segment `index` carries its memfd; a SAY carries text instead. */
static int col_send(int memfd, uint16_t kind, uint32_t index, const char *text, size_t text_len)
{
    const char *name = col_sock_name;
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    struct fmt_shm_hello hello = {
        .magic = FMT_SHM_HELLO_MAGIC,
        .version = FMT_SHM_VERSION,
        .kind = kind,
        .pid = (uint32_t)getpid(),
        .ppid = (uint32_t)getppid(),
        .segment_index = index,
        .stream_id = col_proc ? col_proc->stream_id : 0,
        .ts_ns = col_now_slow(), /* also said from outside a hook (col_say) */
    };
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } ctl;
    struct iovec iov[2] = {{.iov_base = &hello, .iov_len = sizeof(hello)},
                           {.iov_base = (void *)text, .iov_len = text_len}};
    struct msghdr msg = {.msg_iov = iov, .msg_iovlen = text_len ? 2 : 1};
    struct cmsghdr *cm;
    size_t len;
    int fd, rc;

    memcpy(hello.secret, col_secret, sizeof(hello.secret));
    if (!*name || (len = strlen(name)) >= sizeof(sa.sun_path) - 1) {
        errno = EINVAL;
        return -1;
    }
    memcpy(sa.sun_path + 1, name, len); /* abstract: leading NUL */
    fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    do {
        rc = connect(fd, (struct sockaddr *)&sa,
                     (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + len));
    } while (rc != 0 && errno == EINTR);
    if (rc == 0) {
        if (memfd >= 0) {
            memset(ctl.buf, 0, sizeof(ctl.buf));
            msg.msg_control = ctl.buf;
            msg.msg_controllen = sizeof(ctl.buf);
            cm = CMSG_FIRSTHDR(&msg);
            cm->cmsg_level = SOL_SOCKET;
            cm->cmsg_type = SCM_RIGHTS;
            cm->cmsg_len = CMSG_LEN(sizeof(int));
            memcpy(CMSG_DATA(cm), &memfd, sizeof(int));
        }
        do {
            rc = (int)sendmsg(fd, &msg, MSG_NOSIGNAL);
        } while (rc < 0 && errno == EINTR);
        rc = rc == (int)(sizeof(hello) + text_len) ? 0 : -1;
    }
    {
        int saved = errno;

        close(fd);
        errno = saved;
    }
    return rc;
}

static int col_send_hello(int memfd, uint16_t kind, uint32_t index)
{
    return col_send(memfd, kind, index, NULL, 0);
}

void col_send_say(const char *text, size_t len)
{
    int saved = errno;

    if (col_sock_name[0])
        (void)col_send(-1, FMT_SHM_HELLO_SAY, 0, text,
                       len < FMT_SHM_SAY_MAX ? len : FMT_SHM_SAY_MAX);
    errno = saved;
}

/* Segment 0 carries the program's path and argv for the recorder. */
static void col_segment_info(struct fmt_shm_header *h)
{
    char *out = (char *)h + FMT_SHM_INFO_OFFSET;
    uint32_t room = FMT_SHM_HEADER_SIZE - FMT_SHM_INFO_OFFSET;
    long n = col_sys_readlink("/proc/self/exe", out, (long)room / 2);
    int fd;

    h->exe_len = n > 0 ? (uint32_t)n : 0;
    fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t r = read(fd, out + h->exe_len, room - h->exe_len);

        h->argv_len = r > 0 ? (uint32_t)r : 0;
        close(fd);
    }
}

/* Make segment number index, map it and announce it. Caller holds the
 * segment lock (or is the only thread, at process start). */
static int col_segment_new(uint32_t index, uint16_t kind)
{
    uint32_t nr_rings = col_segment_rings(index);
    uint64_t size = fmt_shm_segment_bytes(index, nr_rings, COL_RING_SIZE);
    struct col_segment *s = &col_segs[index];
    struct fmt_shm_header *h;
    int fd, saved;
    long p;

    {
        /* A memfd counts against the file size limit, and growing past it
         * would raise SIGXFSZ in the program: refuse instead. */
        struct rlimit fs;

        if (getrlimit(RLIMIT_FSIZE, &fs) == 0 && fs.rlim_cur != RLIM_INFINITY &&
            fs.rlim_cur < size) {
            errno = EFBIG;
            return -1;
        }
    }
    fd = (int)syscall(SYS_memfd_create, col_sock_name, (long)(MFD_CLOEXEC | MFD_ALLOW_SEALING));
    if (fd < 0)
        return -1;
    /* Sealed at its size: the recorder maps only a segment nobody can
     * shrink under it (a read past the end would be its SIGBUS). */
    if (ftruncate(fd, (off_t)size) != 0 ||
        fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0)
        goto fail;
    p = syscall(COL_SYS_MMAP, 0L, (long)size, (long)(PROT_READ | PROT_WRITE), (long)MAP_SHARED,
                (long)fd, 0L);
    if (p < 0 && p > -4096) {
        errno = (int)-p;
        goto fail;
    }
    h = (struct fmt_shm_header *)p;
    fmt_shm_header_layout(h, index, nr_rings, COL_RING_SIZE);
    h->pid = (uint32_t)getpid();
    h->stream_id = col_proc->stream_id;
    h->segment_index = index;
    h->max_frames = col_depth;
    h->clock_tsc = (uint32_t)col_clock_tsc;
    if (index == 0) {
        col_segment_info(h);
        col_reach_publish(h);
        col_count_start(h);
    }
    for (uint32_t i = 0; i < nr_rings; i++) {
        struct col_ring *r = &s->rings[i];

        r->ctl = fmt_shm_ring_ctl(h, i);
        r->data = fmt_shm_ring_data(h, i);
        r->seg = h;
        r->index = i;
        r->head = 0;
        r->cached_tail = 0;
        r->room = 0;
    }
    if (col_send_hello(fd, kind, index) != 0) {
        saved = errno;
        syscall(SYS_munmap, p, (long)size);
        errno = saved;
        goto fail;
    }
    close(fd); /* the mapping stays */
    s->size = size;
    s->nr_rings = nr_rings;
    s->hdr = h;
    atomic_store_explicit(&col_nr_segs, index + 1, memory_order_release);
    return 0;
fail:
    saved = errno;
    close(fd);
    errno = saved;
    return -1;
}

int col_segments_start(uint16_t kind)
{
    uint64_t id = 0;

    if (getrandom(&id, sizeof(id), GRND_NONBLOCK) != (ssize_t)sizeof(id))
        id = col_now_slow() ^ ((uint64_t)getpid() << 32);
    col_proc->stream_id = id | 1;
    atomic_store(&col_nr_segs, 0);
    return col_segment_new(0, kind);
}

/* In a forked child: drop the parent's mappings so nothing of ours can
 * write into the parent's rings. */
void col_segments_forget(void)
{
    uint32_t n = atomic_load(&col_nr_segs);

    for (uint32_t i = 0; i < n; i++) {
        for (uint32_t j = 0; j < col_segs[i].nr_rings; j++)
            col_stack_cache_free(col_segs[i].rings[j].cache);
        col_sys_munmap(col_segs[i].hdr, col_segs[i].size);
    }
    memset(col_segs, 0, sizeof(col_segs));
    atomic_store(&col_nr_segs, 0);
    atomic_store(&col_seg_lock, 0);
}

static int col_try_take(struct col_thread *t, struct col_ring *r, uint32_t expect)
{
    if (!atomic_compare_exchange_strong(&r->ctl->owner_tid, &expect, (uint32_t)t->tid))
        return 0;
    /* A previous owner may have died mid-hook: its pending word is stale. */
    r->head = atomic_load_explicit(&r->ctl->head, memory_order_relaxed);
    r->cached_tail = atomic_load_explicit(&r->ctl->tail, memory_order_acquire);
    r->room = 0;
    atomic_store_explicit(&r->ctl->pending, 0, memory_order_release);
    if (!r->cache)
        r->cache = col_stack_cache_new();
    t->ring = r;
    return 1;
}

/* The process generation in which this thread found no ring: it then
 * stays untraced (each call counted as dropped) instead of searching and
 * complaining on every call. */
static COL_TLS uint32_t col_claim_failed_gen;

int col_ring_claim(struct col_thread *t)
{
    uint32_t n = atomic_load_explicit(&col_nr_segs, memory_order_acquire);
    pid_t pid = getpid();

    if (COL_UNLIKELY(col_claim_failed_gen == col_proc->gen)) {
        if (n && col_segs[0].hdr)
            atomic_fetch_add_explicit(&col_segs[0].hdr->nr_dropped, 1, memory_order_relaxed);
        return -1;
    }

    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < col_segs[i].nr_rings; j++) {
            struct col_ring *r = &col_segs[i].rings[j];
            uint32_t owner = atomic_load_explicit(&r->ctl->owner_tid, memory_order_relaxed);

            if (owner == 0 && col_try_take(t, r, 0))
                return 0;
            /* An exited thread's ring, free once the thread is gone. */
            if ((owner & FMT_SHM_OWNER_EXITING) &&
                syscall(SYS_tgkill, (long)pid, (long)(owner & ~FMT_SHM_OWNER_EXITING), 0L) != 0 &&
                errno == ESRCH && col_try_take(t, r, owner))
                return 0;
        }
    /* Reclaim a ring whose owner died without its exit hook (raw clone). */
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < col_segs[i].nr_rings; j++) {
            struct col_ring *r = &col_segs[i].rings[j];
            uint32_t owner = atomic_load(&r->ctl->owner_tid);

            if (owner &&
                syscall(SYS_tgkill, (long)pid, (long)(owner & ~FMT_SHM_OWNER_EXITING), 0L) != 0 &&
                errno == ESRCH && col_try_take(t, r, owner))
                return 0;
        }
    /* Slow path: one more segment. */
    while (atomic_exchange_explicit(&col_seg_lock, 1, memory_order_acquire))
        sched_yield();
    if (atomic_load(&col_nr_segs) == n) {
        if (n >= COL_MAX_SEGMENTS || col_segment_new(n, FMT_SHM_HELLO_SEGMENT) != 0) {
            atomic_store_explicit(&col_seg_lock, 0, memory_order_release);
            col_claim_failed_gen = col_proc->gen;
            if (col_segs[0].hdr)
                atomic_fetch_add_explicit(&col_segs[0].hdr->nr_dropped, 1, memory_order_relaxed);
            {
                static _Atomic int said; /* once per process is enough */

                if (!atomic_exchange(&said, 1))
                    col_say(n >= COL_MAX_SEGMENTS ? "more threads than rings; threads beyond "
                                                    "them are not traced (counted as dropped)"
                                                  : "cannot add a ring segment; threads beyond "
                                                    "the existing rings are not traced",
                            n >= COL_MAX_SEGMENTS ? 0 : errno);
            }
            return -1;
        }
    }
    atomic_store_explicit(&col_seg_lock, 0, memory_order_release);
    return col_ring_claim(t);
}

void col_ring_release(struct col_thread *t)
{
    struct col_ring *r = t->ring;

    col_emit_thread(t, FMT_SHM_REC_THREAD_EXIT, NULL, 0);
    /* The thread keeps its ring: glibc frees its thread-local buffers
     * after the key destructors, and those calls must not start a second
     * thread. A claimer takes the ring over once the thread is gone. */
    if (r)
        atomic_store_explicit(&r->ctl->owner_tid, (uint32_t)t->tid | FMT_SHM_OWNER_EXITING,
                              memory_order_release);
}

struct fmt_shm_header *col_ring_header0(void)
{
    struct fmt_shm_header *h = col_segs[0].hdr;

    /* Not started in this process (a forked child before its first
     * event: the page of col_proc reads zero), or a vfork child, which
     * shares our memory but not our pid; or off (detached, the recorder
     * gone, a seccomp filter or strict mode that forbids our calls: no
     * system call then). */
    if (!h || !col_proc || !col_proc->gen || atomic_load(&col_state) == COL_OFF ||
        col_proc->pid != (pid_t)syscall(SYS_getpid))
        return NULL;
    return h;
}

void col_ring_stamp_exit(void)
{
    struct fmt_shm_header *h = col_ring_header0();

    /* Any thread may end the process, one that never made a hooked call too. */
    if (h)
        atomic_store_explicit(&h->exit_ts, col_now_slow(), memory_order_release);
}

/* Is the recorder still there? Its pid is in the header once it mapped the
 * segment; before that, ask the socket. */
static int col_recorder_alive(struct col_ring *r, unsigned waited_ms)
{
    uint32_t pid = atomic_load_explicit(&r->seg->recorder_pid, memory_order_relaxed);

    if (pid)
        return !(kill((pid_t)pid, 0) != 0 && errno == ESRCH);
    return waited_ms < 5000;
}

/* Threads inside col_ring_wait (col_ring_quiesce waits for none). */
static _Atomic int col_ring_nr_waiting;

/* Wait until the recorder has made room for need bytes: spin a little,
 * then sleep on the ring's futex, which the recorder rings once it has
 * moved tail (no polling delay, no lost wake-up: waiters and tail are
 * each written before the other is read). Returns 0, or -1 if the recorder
 * is gone (the collector then turns itself off), or if the collector was
 * turned off meanwhile (a detach, a new attach after a killed recorder:
 * the ring is not this stream's any more). */
static int col_ring_wait_room(struct col_thread *t, uint64_t need)
{
    struct col_ring *r = t->ring;
    struct fmt_shm_ring_ctl *c = r->ctl;
    unsigned spins = 0, waited_ms = 0;

    for (;;) {
        uint32_t seq;

        r->cached_tail = atomic_load_explicit(&c->tail, memory_order_acquire);
        if (r->head + need - r->cached_tail <= COL_RING_SIZE)
            return 0;
        if (spins < 2000) {
            spins++;
            ms_arch_relax();
            continue;
        }
        seq = atomic_load(&c->wake_seq);
        atomic_store(&c->waiters, 1);
        r->cached_tail = atomic_load(&c->tail);
        if (r->head + need - r->cached_tail <= COL_RING_SIZE) {
            atomic_store(&c->waiters, 0);
            return 0;
        }
        {
            struct timespec ts = {0, 10 * 1000 * 1000};

            /* Not FUTEX_PRIVATE: the word is shared with the recorder. */
            syscall(SYS_futex, &c->wake_seq, FUTEX_WAIT, seq, &ts, NULL, 0);
        }
        waited_ms += 10; /* at most; checking the recorder now and then is enough */
        if (atomic_load_explicit(&col_state, memory_order_relaxed) == COL_OFF ||
            t->gen != __atomic_load_n(&col_proc->gen, __ATOMIC_RELAXED))
            return -1;
        if (waited_ms % 100 == 0 && !col_recorder_alive(r, waited_ms)) {
            col_turn_off("the recorder is gone; tracing stops here", 0);
#ifdef COL_ATTACH
            col_attach_orphan(); /* record -p was killed: another may attach */
#endif
            return -1;
        }
    }
}

int col_ring_wait(struct col_thread *t, uint64_t need)
{
    int rc;

    atomic_fetch_add(&col_ring_nr_waiting, 1);
    rc = col_ring_wait_room(t, need);
    atomic_fetch_sub(&col_ring_nr_waiting, 1);
    return rc;
}

/* Is any ring's hook under way (its pending word set by a live owner)? */
static int col_rings_busy(void)
{
    uint32_t n = atomic_load_explicit(&col_nr_segs, memory_order_acquire);

    if (atomic_load(&col_ring_nr_waiting))
        return 1;
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < col_segs[i].nr_rings; j++) {
            struct fmt_shm_ring_ctl *c = col_segs[i].rings[j].ctl;
            uint32_t owner = atomic_load(&c->owner_tid) & ~FMT_SHM_OWNER_EXITING;

            if (atomic_load(&c->pending) && owner &&
                syscall(SYS_tgkill, (long)col_proc->pid, (long)owner, 0L) == 0)
                return 1;
        }
    return 0;
}

void col_ring_quiesce(void)
{
    int calm = 0;

    for (int ms = 0; ms < 1000 && calm < 2; ms += 10) {
        struct timespec ts = {0, 10 * 1000 * 1000};

        calm = col_rings_busy() ? 0 : calm + 1;
        if (calm < 2)
            nanosleep(&ts, NULL);
    }
}

void *col_ring_reserve_slow(struct col_thread *t, uint32_t len)
{
    struct col_ring *r = t->ring;
    uint64_t pos = r->head & (COL_RING_SIZE - 1);
    uint64_t to_end = COL_RING_SIZE - pos;
    uint64_t need = len <= to_end ? len : to_end + len, lap_end;

    if (r->head + need - r->cached_tail > COL_RING_SIZE && col_ring_wait(t, need) != 0)
        return NULL;
    if (len > to_end) {
        struct fmt_shm_sized *pad = (struct fmt_shm_sized *)(r->data + pos);

        pad->type = FMT_SHM_REC_PAD;
        pad->len = (uint32_t)to_end;
        r->head += to_end; /* published with the record that follows */
        pos = 0;
    }
    lap_end = (r->head & ~(uint64_t)(COL_RING_SIZE - 1)) + COL_RING_SIZE;
    r->room = r->cached_tail + COL_RING_SIZE < lap_end ? r->cached_tail + COL_RING_SIZE : lap_end;
    return r->data + pos;
}

void *col_ring_reserve(struct col_thread *t, uint32_t len)
{
    return col_ring_reserve_inline(t, len);
}

void col_emit_event(struct col_thread *t, uint8_t type, uint8_t kind, uint8_t flags, uint8_t origin,
                    uint32_t stack, uint64_t ts, uint64_t addr, uint64_t size,
                    const uint64_t *extra, unsigned nargs)
{
    col_emit_event_inline(t, type, kind, flags, origin, stack, ts, addr, size, extra, nargs);
}

void col_emit_thread(struct col_thread *t, uint8_t type, const char *name, uint32_t name_len)
{
    uint32_t len = fmt_shm_thread_size(name_len);
    struct fmt_shm_thread *rec;

    if (!t->ring || !(rec = col_ring_reserve(t, len)))
        return;
    rec->h.type = type;
    rec->h.len = len;
    rec->ts_ns = col_now();
    rec->tid = (uint32_t)t->tid;
    rec->name_len = name_len;
    memset(rec->name, 0, FMT_SHM_ALIGN8(name_len));
    if (name_len)
        memcpy(rec->name, name, name_len);
    col_ring_commit(t, len);
}
