/* SPDX-License-Identifier: MIT */
/* The recorder's cost without a program: a trace's heap events go again,
 * as the collector's records, through rings in memory, the recorder's
 * drain and time-ordered merge (src/recorder) and the trace writer, in one
 * process and one thread. Under callgrind the instructions per event are
 * the same under any load (bench/notes/recorder.md, "The recorder's own cost").
 *
 * usage: rec_replay TRACE OUT [PERIOD_NS [KEEP_NS]]
 * Replays the heap calls (malloc family and free) of TRACE's first process,
 * each thread on a ring of its own, stacks defined at their first use, with
 * the options `memscribe record` writes (with PERIOD_NS, those of `record
 * --aggregate=PERIOD_NS`: through the aggregator, src/recorder/rec_agg.h;
 * with KEEP_NS too, `record --keep-last`'s segments in OUT.last/,
 * src/recorder/rec_keep.h; with REC_REPLAY_TOTALS=1 in the environment,
 * those of `record --totals`);
 * prints the events written and the CPU time per heap call replayed
 * (records put in the rings excluded). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "format/fmt_writer.h"
#include "memscribe/trace.h"
#include "recorder/rec_internal.h"

#define RINGS 16
#define RING_SIZE (4u << 20)
#define MAX_FRAMES 512
/* Records put in the rings between two drains: as many as a recorder's
 * round (a millisecond of a busy program) takes. */
#define BATCH 4096

/* The records to replay, each with its ring, made before the timing. */
struct rec {
    uint32_t ring, len;
    uint64_t off; /* in bytes */
};

static unsigned char *bytes;
static size_t nr_bytes, cap_bytes;
static struct rec *recs;
static size_t nr_recs, cap_recs;

static void *add(uint32_t ring, uint32_t len)
{
    if (nr_bytes + len > cap_bytes) {
        cap_bytes = cap_bytes ? cap_bytes * 2 : 1 << 24;
        if (!(bytes = realloc(bytes, cap_bytes)))
            exit(1);
    }
    if (nr_recs == cap_recs) {
        cap_recs = cap_recs ? cap_recs * 2 : 1 << 20;
        if (!(recs = realloc(recs, cap_recs * sizeof(*recs))))
            exit(1);
    }
    recs[nr_recs++] = (struct rec){ring, len, nr_bytes};
    memset(bytes + nr_bytes, 0, len);
    nr_bytes += len;
    return bytes + nr_bytes - len;
}

static int heap_kind(unsigned kind)
{
    return fmt_kind_is_heap_alloc(kind) || kind == FMT_EV_FREE;
}

/* The collector's EVENT record of a heap call (the inverse of the
 * recorder's rec_convert_event). */
static void add_event(uint32_t ring, const struct fmt_event *ev)
{
    int nargs = fmt_shm_event_nargs(ev->kind);
    struct fmt_shm_event *e = add(ring, FMT_SHM_EVENT_SIZE((unsigned)nargs));

    e->type = FMT_SHM_REC_EVENT;
    e->kind = (uint8_t)ev->kind;
    e->flags = (uint8_t)ev->flags;
    e->origin_nargs = (uint8_t)(ev->origin | nargs << 4);
    e->stack = ev->stack;
    e->ts_ns = ev->ts_ns;
    e->addr = ev->addr;
    e->size = ev->size;
    switch (ev->kind) {
    case FMT_EV_REALLOC:
        e->extra[0] = ev->old_addr;
        break;
    case FMT_EV_REALLOCARRAY:
        e->extra[0] = ev->old_addr;
        e->extra[1] = ev->arg[0];
        e->extra[2] = ev->arg[1];
        break;
    default:
        for (int i = 0; i < nargs; i++)
            e->extra[i] = ev->arg[i];
        break;
    }
}

static void add_thread(uint32_t ring, uint64_t ts, uint32_t tid)
{
    struct fmt_shm_thread *t = add(ring, fmt_shm_thread_size(0));

    t->h.type = FMT_SHM_REC_THREAD_START;
    t->h.len = fmt_shm_thread_size(0);
    t->ts_ns = ts;
    t->tid = tid;
}

static int add_stack(struct fmt_reader *r, uint32_t ring, uint32_t id)
{
    static uint64_t frames[MAX_FRAMES];
    uint32_t image;
    int n = fmt_reader_stack(r, id, &image, frames, MAX_FRAMES);
    struct fmt_shm_stack *st;

    if (n < 0)
        return n;
    if (n > FMT_SHM_MAX_DEPTH)
        n = FMT_SHM_MAX_DEPTH;
    st = add(ring, fmt_shm_stack_size((uint32_t)n));
    st->h.type = FMT_SHM_REC_STACK;
    st->h.len = fmt_shm_stack_size((uint32_t)n);
    st->id = id;
    st->nr_frames = (uint32_t)n;
    memcpy(st->frames, frames, (size_t)n * sizeof(*frames));
    return 0;
}

static void *segment(uint32_t pid, size_t *size)
{
    struct fmt_shm_header *h;

    *size = fmt_shm_segment_bytes(0, RINGS, RING_SIZE);
    h = mmap(NULL, *size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (h == MAP_FAILED)
        return NULL;
    fmt_shm_header_layout(h, 0, RINGS, RING_SIZE);
    h->pid = pid;
    h->stream_id = 1;
    h->clock_tsc = 1; /* as on x86-64: the merge converts every time */
    return h;
}

static double cpu_s(void)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

int main(int argc, char **argv)
{
    struct fmt_writer_options opt = REC_WRITER_OPTIONS;
    struct fmt_trace_counts c;
    struct fmt_writer_stats st;
    struct rec_session s = {0};
    struct fmt_reader *r;
    struct fmt_event ev;
    char err[1024];
    uint32_t tid_of[RINGS] = {0}, nr_rings = 0, pid = 0;
    uint8_t *defined;
    size_t size;
    int rc;

    if (argc < 3 || argc > 5) {
        fprintf(stderr, "usage: rec_replay TRACE OUT [PERIOD_NS [KEEP_NS]]\n");
        return 2;
    }
    uint64_t period = argc > 3 ? strtoull(argv[3], NULL, 10) : 0;
    uint64_t keep = argc > 4 ? strtoull(argv[4], NULL, 10) : 0;
    char keep_dir[4096], why[256];
    if (fmt_reader_open(&r, argv[1], err, sizeof(err))) {
        fprintf(stderr, "rec_replay: %s\n", err);
        return 1;
    }
    fmt_reader_counts(r, &c);
    defined = calloc((size_t)c.nr_stacks + 1, 1);
    while ((rc = fmt_reader_next(r, &ev)) == 1) {
        uint32_t ring;

        if (!pid && ev.kind == FMT_EV_PROCESS_START)
            pid = ev.pid;
        if (ev.pid != pid || !heap_kind(ev.kind) || (ev.flags & FMT_EVF_POOL))
            continue;
        for (ring = 0; ring < nr_rings && tid_of[ring] != ev.tid; ring++)
            ;
        if (ring == nr_rings) {
            /* A thread: a ring of its own, or the one it takes over. */
            ring = nr_rings < RINGS ? nr_rings++ : ev.tid % RINGS;
            tid_of[ring] = ev.tid;
            add_thread(ring, ev.ts_ns, ev.tid);
        }
        if (ev.stack && !defined[ev.stack]) {
            if (add_stack(r, ring, ev.stack))
                return 1;
            defined[ev.stack] = 1;
        }
        add_event(ring, &ev);
    }
    if (rc < 0) {
        fprintf(stderr, "rec_replay: %s\n", fmt_reader_error(r));
        return 1;
    }

    int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    struct fmt_trace_info info = *fmt_reader_info(r);
    info.aggregate_ns = period;
    info.aggregate_from_ns = 0;
    opt.aggregate = period != 0;
    /* REC_REPLAY_TOTALS=1: the chunks' totals too (record --totals) */
    opt.totals = getenv("REC_REPLAY_TOTALS") && !strcmp(getenv("REC_REPLAY_TOTALS"), "1");
    info.keep_last_ns = period ? keep : 0;
    snprintf(keep_dir, sizeof(keep_dir), "%s.last", argv[2]);
    if (fd < 0 || (rc = fmt_writer_create(&s.w, fd, &info, &opt)) ||
        (period && (rc = rec_agg_new(&s.agg, s.w, period, 0))) ||
        (period && keep &&
         (rc = rec_keep_new(&s.keep, keep_dir, &info, &opt, keep, period, s.w, s.agg, why,
                            sizeof(why))))) {
        fprintf(stderr, "rec_replay: %s: cannot start the trace\n", argv[2]);
        return 1;
    }
    /* The collector's ticks are the trace's nanoseconds. */
    s.clock = (struct rec_clock){.tsc = 1, .ready = 1, .ns_per_tick = 1, .mult32 = 1ull << 32};
    /* No flush by the clock inside the merge: the trace's chunks are cut
     * where they fill, the same from run to run (rec_ir.sh compares). */
    s.opt.flush_ns = UINT64_MAX;
    s.root_pid = (pid_t)pid;
    s.recorder_pid = (uint32_t)getpid();
    void *seg = segment(pid, &size);
    struct fmt_shm_hello hello = {.magic = FMT_SHM_HELLO_MAGIC,
                                  .version = FMT_SHM_VERSION,
                                  .kind = FMT_SHM_HELLO_IMAGE,
                                  .pid = pid,
                                  .stream_id = 1};
    if (!seg || rec_stream_attach(&s, &hello, seg, size, -1, 0)) {
        fprintf(stderr, "rec_replay: cannot attach the rings\n");
        return 1;
    }
    struct rec_image *img = s.images[0];

    double t0 = cpu_s(), in_rings = 0;
    for (size_t i = 0; i < nr_recs;) {
        double t1 = cpu_s();

        for (size_t end = i + BATCH; i < nr_recs && i < end; i++) {
            struct fmt_shm_ring_ctl *ctl = fmt_shm_ring_ctl(seg, recs[i].ring);
            unsigned char *data = fmt_shm_ring_data(seg, recs[i].ring);
            uint64_t head = atomic_load(&ctl->head), pos = head & (RING_SIZE - 1);

            if (RING_SIZE - pos < recs[i].len) {
                /* A record never wraps: pad to the end, as the collector. */
                struct fmt_shm_sized pad = {.type = FMT_SHM_REC_PAD,
                                            .len = (uint32_t)(RING_SIZE - pos)};

                memcpy(data + pos, &pad, sizeof(pad));
                head += RING_SIZE - pos;
                pos = 0;
            }
            memcpy(data + pos, bytes + recs[i].off, recs[i].len);
            atomic_store(&ctl->head, head + recs[i].len);
        }
        in_rings += cpu_s() - t1;
        rec_stream_drain(&s, img);
        rec_merge_emit(&s, UINT64_MAX);
    }
    rec_stream_close(&s, img, 0, 1, 0);
    rec_merge_emit(&s, UINT64_MAX);
    rec_merge_cut(&s);
    if (s.keep) {
        rec_keep_finish(s.keep);
        rec_keep_free(s.keep);
        s.keep = NULL;
    }
    rc = s.write_err ?: fmt_writer_finish(s.w);
    double t2 = cpu_s();
    fmt_writer_get_stats(s.w, &st);
    printf("%s: %llu events written of %zu records, %.1f ns/record (CPU) in the recorder's "
           "drain, merge and writer\n",
           argv[2], (unsigned long long)st.nr_events, nr_recs,
           (t2 - t0 - in_rings) * 1e9 / (double)(nr_recs ? nr_recs : 1));
    fmt_writer_destroy(s.w);
    rec_session_clear(&s);
    fmt_reader_close(r);
    free(bytes);
    free(recs);
    free(defined);
    return rc || close(fd) ? 1 : 0;
}
