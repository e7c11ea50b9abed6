/* SPDX-License-Identifier: MIT */
/* memscribe-replay: runs the heap calls `memscribe replay` streams to its
 * stdin (rpl_op.h) under whatever malloc is loaded (LD_PRELOAD), one
 * thread per traced thread, and writes what it measured to stdout as
 * lines the CLI parses (docs/replay.md):
 *   A <path of the module whose malloc is called>
 *   F <function the allocator lacks, emulated (rpl_exec.c)>
 *   S <sample id> <rss bytes> <minor faults> <major faults>
 *   T <thread> <calls> <failed> <cpu ns> <waits> <blocks written only in part>
 *   E <peak rss bytes> <rss bytes> <minor faults> <major faults> <live blocks>
 *     <live bytes> <bookkeeping bytes>
 * Output is written with write(2) from stack buffers: no stdio, no heap. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "replay/rpl_internal.h"

#define MAX_THREADS (1u << 20)
#define READ_OPS 2048

static struct rpl_thread **threads; /* by thread index; mmap'd */
static uint32_t nr_threads;         /* indexes seen so far */

__attribute__((format(printf, 1, 2))) static void out(const char *fmt, ...)
{
    char buf[4200];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (n > (int)sizeof(buf) - 1)
        n = (int)sizeof(buf) - 1;
    for (int off = 0; off < n;) {
        ssize_t w = write(1, buf + off, (size_t)(n - off));

        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            _exit(1);
        off += (int)w;
    }
}

__attribute__((noreturn, format(printf, 1, 2))) static void die(const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    int n = snprintf(buf, sizeof(buf), "memscribe-replay: ");

    va_start(ap, fmt);
    n += vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof(buf) - 2)
        n = (int)sizeof(buf) - 2;
    buf[n++] = '\n';
    if (write(2, buf, (size_t)n) < 0)
        _exit(1);
    _exit(1);
}

/* The CPU clock of a replay thread runs only while it runs operations. */
struct clock {
    struct rpl_thread *t;
    int running;
    uint64_t since;
};

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void clock_pause(void *arg)
{
    struct clock *c = arg;

    if (c->running) {
        c->t->st.cpu_ns += thread_cpu_ns() - c->since;
        c->running = 0;
    }
}

static void clock_resume(void *arg)
{
    struct clock *c = arg;

    if (!c->running) {
        c->since = thread_cpu_ns();
        c->running = 1;
    }
}

static void *thread_main(void *arg)
{
    struct rpl_thread *t = arg;
    struct clock c = {.t = t};

    for (;;) {
        const struct rpl_op *op = rpl_ring_peek(t->ring, clock_pause, &c);

        if (op->kind == RPL_OP_THREAD_EXIT) {
            clock_pause(&c);
            rpl_ring_done(t->ring);
            return NULL;
        }
        clock_resume(&c);
        rpl_exec(op, &t->st, clock_pause, clock_resume, &c);
        rpl_ring_done(t->ring);
    }
}

static struct rpl_thread *thread_get(uint32_t index)
{
    struct rpl_thread *t;

    if (index >= MAX_THREADS)
        die("stdin: thread index %" PRIu32 " out of range", index);
    if (threads[index])
        return threads[index];
    if (index < nr_threads)
        die("stdin: an operation of thread %" PRIu32 " after it ended", index);
    t = rpl_map(sizeof(*t));
    if (!t || !(t->ring = rpl_map(sizeof(*t->ring))))
        die("out of memory for thread %" PRIu32, index);
    t->index = index;
    if (pthread_create(&t->pt, NULL, thread_main, t))
        die("cannot create thread %" PRIu32, index);
    threads[index] = t;
    nr_threads = index + 1 > nr_threads ? index + 1 : nr_threads;
    return t;
}

static void thread_end(uint32_t index)
{
    struct rpl_thread *t = threads[index];
    struct rpl_op op = {.kind = RPL_OP_THREAD_EXIT, .thread = index};

    rpl_ring_push(t->ring, &op);
    rpl_ring_flush(t->ring);
    pthread_join(t->pt, NULL);
    out("T %" PRIu32 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", index,
        t->st.calls, t->st.failed, t->st.cpu_ns, t->st.waits, t->st.partly);
    rpl_unmap(t->ring, sizeof(*t->ring));
    rpl_unmap(t, sizeof(*t));
    threads[index] = NULL;
}

static void flush_all(void)
{
    for (uint32_t i = 0; i < nr_threads; i++)
        if (threads[i])
            rpl_ring_flush(threads[i]->ring);
}

/* The largest resident size read so far: the peak reported is never below
 * an RSS the samples or the end report (the kernel's counters are read
 * approximately, and VmHWM was seen below a later statm). */
static uint64_t rss_seen;

/* Resident bytes (statm's second field) and the peak (VmHWM), read with
 * raw syscalls into stack buffers. */
static uint64_t read_rss(void)
{
    char buf[256];
    int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
    unsigned long size = 0, res = 0;
    uint64_t rss;

    if (fd >= 0)
        close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    if (sscanf(buf, "%lu %lu", &size, &res) != 2)
        return 0;
    rss = (uint64_t)res * (uint64_t)sysconf(_SC_PAGESIZE);
    if (rss > rss_seen)
        rss_seen = rss;
    return rss;
}

static uint64_t read_hwm(void)
{
    char buf[4096];
    int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
    char *p;
    unsigned long kb = 0;

    if (fd >= 0)
        close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    p = strstr(buf, "VmHWM:");
    if (!p || sscanf(p + 6, "%lu", &kb) != 1)
        return rss_seen;
    return (uint64_t)kb * 1024 > rss_seen ? (uint64_t)kb * 1024 : rss_seen;
}

static void faults(uint64_t *minflt, uint64_t *majflt)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    *minflt = (uint64_t)ru.ru_minflt;
    *majflt = (uint64_t)ru.ru_majflt;
}

static void sample(uint64_t id)
{
    uint64_t minflt, majflt;

    flush_all();
    for (uint32_t i = 0; i < nr_threads; i++)
        if (threads[i])
            rpl_ring_drain(threads[i]->ring);
    faults(&minflt, &majflt);
    out("S %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", id, read_rss(), minflt, majflt);
}

/* Read whole operations; 0 at the end of input. */
static size_t read_ops(struct rpl_op *buf, size_t max)
{
    size_t want = max * sizeof(*buf), got = 0;

    while (got < want) {
        ssize_t n = read(0, (char *)buf + got, want - got);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            die("stdin: %s", strerror(errno));
        if (n == 0)
            break;
        got += (size_t)n;
        if (got % sizeof(*buf) == 0)
            break;
    }
    if (got % sizeof(*buf))
        die("stdin: the stream ends inside an operation");
    return got / sizeof(*buf);
}

static void report_emulated(const char *name)
{
    out("F %s\n", name);
}

static void report_allocator(void)
{
    Dl_info info;
    void *(*fn)(size_t) = malloc;

    if (dladdr((void *)fn, &info) && info.dli_fname)
        out("A %s\n", info.dli_fname);
    else
        out("A unknown\n");
}

/* Returns 1 at RPL_OP_END. */
static int dispatch(const struct rpl_op *op)
{
    switch (op->kind) {
    case RPL_OP_SAMPLE:
        sample(op->a);
        return 0;
    case RPL_OP_THREAD_EXIT:
        if (op->thread < nr_threads && threads[op->thread]) {
            flush_all();
            thread_end(op->thread);
        }
        return 0;
    case RPL_OP_END:
        return 1;
    default:
        if (op->kind < RPL_OP_MALLOC || op->kind > RPL_OP_PVALLOC)
            die("stdin: unknown operation %u", op->kind);
        if (op->slot != RPL_NO_SLOT && !rpl_slot_valid(op->slot))
            die("stdin: slot %" PRIu32 " out of range", op->slot);
        rpl_ring_push(thread_get(op->thread)->ring, op);
        return 0;
    }
}

int main(int argc, char **argv)
{
    static struct rpl_op buf[READ_OPS];
    uint64_t live_blocks, live_bytes, minflt, majflt, end_rss;
    size_t n;
    int end = 0;

    if (argc != 1) {
        die("usage: memscribe-replay < OPERATIONS (run by memscribe replay; docs/replay.md)");
    }
    (void)argv;
    if (read_ops(buf, 1) != 1 || buf[0].kind != RPL_OP_HEADER || buf[0].a != RPL_MAGIC)
        die("stdin: not a replay stream from this version of memscribe");
    if (buf[0].b > UINT32_MAX ||
        rpl_slots_init(buf[0].b, buf[0].slot, (uint64_t)buf[0].thread << 20))
        die("cannot map %" PRIu64 " slots", buf[0].b);
    threads = rpl_map(MAX_THREADS * sizeof(*threads));
    if (!threads)
        die("out of memory for the thread table");
    report_allocator();
    rpl_exec_init(report_emulated);
    while (!end && (n = read_ops(buf, READ_OPS)) > 0) {
        for (size_t i = 0; i < n && !end; i++)
            end = dispatch(&buf[i]);
        flush_all();
    }
    if (!end)
        die("stdin: the stream ends without its end mark");
    for (uint32_t i = 0; i < nr_threads; i++)
        if (threads[i])
            thread_end(i);
    rpl_slots_live(&live_blocks, &live_bytes);
    faults(&minflt, &majflt);
    end_rss = read_rss(); /* first: the peak takes it in */
    out("E %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
        read_hwm(), end_rss, minflt, majflt, live_blocks, live_bytes,
        (uint64_t)(rpl_slots_size() + MAX_THREADS * sizeof(*threads)));
    return 0;
}
