/* SPDX-License-Identifier: MIT */
/* memscribe replay: one process of a trace as the worker's operation
 * stream, and the worker runs. The stream names blocks by slot, reusing
 * the slot freed longest ago, so this side and the worker both hold one
 * entry per live block, never one per event. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analysis/core/ana_map.h"
#include "cli/cli.h"
#include "cli/cli_replay.h"

#define OUT_OPS 2048

extern char **environ;

struct gen {
    struct cli_replay_plan *plan;
    int fd;
    int err;
    struct ana_map blocks; /* serial -> slot */
    uint32_t *seq;         /* per slot */
    uint64_t *size;        /* per slot */
    uint64_t cap_slots, nr_slots;
    uint32_t *fifo; /* free slots, the oldest first */
    uint64_t fifo_head, fifo_nr, fifo_cap;
    uint32_t *local; /* trace thread index -> stream thread, UINT32_MAX: none */
    uint32_t nr_local;
    uint64_t heap, blocks_live, call, next_sample_ns, interval_ns;
    struct rpl_op out[OUT_OPS];
    size_t nr_out;
};

static int put_point(struct gen *g, uint64_t ts_ns)
{
    struct cli_replay_plan *p = g->plan;
    struct cli_replay_point *pts = realloc(p->points, (p->nr_points + 1) * sizeof(*pts));

    if (!pts)
        return -ENOMEM;
    p->points = pts;
    pts[p->nr_points].ts_ns = ts_ns;
    pts[p->nr_points].heap = g->heap;
    return 0;
}

static void flush_out(struct gen *g)
{
    size_t len = g->nr_out * sizeof(g->out[0]), off = 0;

    while (!g->err && off < len) {
        ssize_t n = write(g->fd, (char *)g->out + off, len - off);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            g->err = -errno;
        else
            off += (size_t)n;
    }
    g->nr_out = 0;
}

static void emit(struct gen *g, const struct rpl_op *op)
{
    if (g->fd < 0)
        return;
    g->out[g->nr_out++] = *op;
    if (g->nr_out == OUT_OPS)
        flush_out(g);
}

static void emit_sample(struct gen *g, uint64_t ts_ns)
{
    struct rpl_op op = {.kind = RPL_OP_SAMPLE, .a = g->plan->nr_points};

    if (g->fd < 0)
        return;
    if (put_point(g, ts_ns))
        g->err = -ENOMEM;
    g->plan->nr_points++;
    emit(g, &op);
}

static int grow_slots(struct gen *g)
{
    uint64_t cap = g->cap_slots ? g->cap_slots * 2 : 1024;
    uint32_t *seq = realloc(g->seq, cap * sizeof(*seq));

    if (!seq)
        return -ENOMEM;
    g->seq = seq;
    uint64_t *size = realloc(g->size, cap * sizeof(*size));
    if (!size)
        return -ENOMEM;
    g->size = size;
    uint32_t *fifo = realloc(g->fifo, cap * sizeof(*fifo));
    if (!fifo)
        return -ENOMEM;
    /* Slots are added only when none is free: the queue is empty. */
    g->fifo = fifo;
    g->fifo_head = 0;
    g->cap_slots = cap;
    g->fifo_cap = cap;
    return 0;
}

/* A slot for a new block: the one freed longest ago, or a new one. */
static int take_slot(struct gen *g, uint32_t *slot)
{
    if (g->fifo_nr) {
        *slot = g->fifo[g->fifo_head];
        g->fifo_head = (g->fifo_head + 1) & (g->fifo_cap - 1);
        g->fifo_nr--;
        return 0;
    }
    if (g->nr_slots == UINT32_MAX - 1)
        return -EOVERFLOW;
    if (g->nr_slots == g->cap_slots) {
        int rc = grow_slots(g);

        if (rc)
            return rc;
    }
    *slot = (uint32_t)g->nr_slots++;
    g->seq[*slot] = 0;
    g->size[*slot] = 0;
    return 0;
}

static void give_slot(struct gen *g, uint32_t slot)
{
    g->fifo[(g->fifo_head + g->fifo_nr) & (g->fifo_cap - 1)] = slot;
    g->fifo_nr++;
}

static int thread_of(struct gen *g, uint32_t thread, uint32_t *out)
{
    if (thread >= g->nr_local) {
        uint32_t n = thread + 64;
        uint32_t *l = realloc(g->local, n * sizeof(*l));

        if (!l)
            return -ENOMEM;
        for (uint32_t i = g->nr_local; i < n; i++)
            l[i] = UINT32_MAX;
        g->local = l;
        g->nr_local = n;
    }
    if (g->local[thread] == UINT32_MAX)
        g->local[thread] = (uint32_t)g->plan->nr_threads++;
    *out = g->local[thread];
    return 0;
}

static void thread_exit(struct gen *g, uint32_t thread)
{
    struct rpl_op op = {.kind = RPL_OP_THREAD_EXIT};

    if (thread >= g->nr_local || g->local[thread] == UINT32_MAX)
        return;
    op.thread = g->local[thread];
    g->local[thread] = UINT32_MAX;
    emit(g, &op);
}

/* The block ev ends, if this process allocated it: its slot, removed from
 * the map, with the heap counters lowered. */
static int end_block(struct gen *g, const struct fmt_event *ev, uint32_t *slot)
{
    uint32_t *v = ev->ref ? ana_map_get(&g->blocks, ev->ref) : NULL;

    if (!v)
        return 0;
    *slot = *v;
    ana_map_del(&g->blocks, ev->ref);
    g->heap -= g->size[*slot];
    g->blocks_live--;
    return 1;
}

static int start_block(struct gen *g, const struct fmt_event *ev, uint32_t slot)
{
    uint32_t *v;

    if (!ev->serial || !ev->addr) {
        give_slot(g, slot);
        return 0;
    }
    v = ana_map_put(&g->blocks, ev->serial, NULL);
    if (!v)
        return -ENOMEM;
    *v = slot;
    g->size[slot] = ev->size;
    g->heap += ev->size;
    g->blocks_live++;
    return 0;
}

static int heap_event(struct gen *g, const struct fmt_event *ev)
{
    struct cli_replay_plan *p = g->plan;
    struct rpl_op op = {.kind = (uint8_t)ev->kind, .a = ev->size};
    uint32_t slot = RPL_NO_SLOT;
    int rc;

    if (ev->flags & FMT_EVF_FAILED) {
        p->failed++;
        return 0;
    }
    if (ev->kind == FMT_EV_FREE) {
        if (!end_block(g, ev, &slot) && ev->addr) {
            p->unknown_frees++;
            return 0;
        }
    } else if (ev->kind == FMT_EV_REALLOC || ev->kind == FMT_EV_REALLOCARRAY) {
        if (!end_block(g, ev, &slot)) {
            p->unknown_reallocs += ev->old_addr != 0;
            if ((rc = take_slot(g, &slot)))
                return rc;
        }
    } else if ((rc = take_slot(g, &slot))) {
        return rc;
    }
    if ((rc = thread_of(g, ev->thread, &op.thread)))
        return rc;
    switch (ev->kind) {
    case FMT_EV_CALLOC:
    case FMT_EV_REALLOCARRAY:
        op.a = ev->arg[0];
        op.b = ev->arg[1];
        break;
    case FMT_EV_MEMALIGN:
    case FMT_EV_POSIX_MEMALIGN:
    case FMT_EV_ALIGNED_ALLOC:
        op.b = ev->arg[0];
        break;
    default:
        break;
    }
    op.slot = slot;
    if (slot != RPL_NO_SLOT)
        op.seq = g->seq[slot]++;
    emit(g, &op);
    if (ev->kind == FMT_EV_FREE) {
        if (slot != RPL_NO_SLOT)
            give_slot(g, slot);
    } else if ((rc = start_block(g, ev, slot))) {
        return rc;
    }
    p->nr_calls = ++g->call;
    return 0;
}

/* Samples by trace time, and one right after the heap peak. */
static void after_call(struct gen *g, uint64_t ts_ns)
{
    struct cli_replay_plan *p = g->plan;

    if (g->fd < 0) {
        if (g->heap > p->peak_heap) {
            p->peak_heap = g->heap;
            p->peak_ns = ts_ns;
            p->peak_call = g->call;
        }
        if (!p->first_ns && g->call == 1)
            p->first_ns = ts_ns;
        p->last_ns = ts_ns;
        return;
    }
    if (g->call == p->peak_call) {
        p->peak_point = p->nr_points;
        emit_sample(g, ts_ns);
    } else if (ts_ns >= g->next_sample_ns) {
        emit_sample(g, ts_ns);
    }
    while (g->next_sample_ns <= ts_ns)
        g->next_sample_ns += g->interval_ns;
}

static void gen_free(struct gen *g)
{
    ana_map_release(&g->blocks);
    free(g->seq);
    free(g->size);
    free(g->fifo);
    free(g->local);
}

const char *cli_replay_refuses(const struct fmt_reader *r)
{
    /* The worker makes every call again, each block at its place: the
     * blocks an aggregated trace counts per call site have neither
     * addresses nor an order (docs/aggregate.md). */
    return fmt_reader_info(r)->aggregate_ns
               ? "an aggregated trace cannot be replayed: the blocks born and freed inside "
                 "an interval are counted per call site, without their calls (docs/aggregate.md); "
                 "record without --aggregate to replay it"
               : NULL;
}

int cli_replay_stream(struct fmt_reader *r, struct cli_replay_plan *p, int fd)
{
    struct gen g = {.plan = p, .fd = fd};
    struct fmt_event ev;
    int rc;

    if (cli_replay_refuses(r))
        return -ENOTSUP;

    ana_map_init(&g.blocks, sizeof(uint32_t));
    p->nr_calls = p->nr_threads = 0;
    p->unknown_frees = p->unknown_reallocs = p->failed = 0;
    p->nr_points = 0;
    if (fd >= 0) {
        struct rpl_op head = {
            .kind = RPL_OP_HEADER,
            .a = RPL_MAGIC,
            .b = p->nr_slots,
            .slot = p->touch,
            .thread =
                (uint32_t)(p->touch_limit >> 20 > UINT32_MAX ? UINT32_MAX : p->touch_limit >> 20)};
        uint64_t span = p->last_ns - p->first_ns;

        g.interval_ns = span / (p->nr_want_samples ? p->nr_want_samples : 1);
        g.interval_ns = g.interval_ns ? g.interval_ns : 1;
        g.next_sample_ns = p->first_ns + g.interval_ns;
        emit(&g, &head);
        emit_sample(&g, p->first_ns);
    } else {
        p->peak_heap = p->peak_ns = p->peak_call = 0;
        p->first_ns = p->last_ns = 0;
    }
    rc = fmt_reader_seek_chunk(r, 0);
    while (!rc && !g.err && (rc = fmt_reader_next(r, &ev)) == 1) {
        rc = 0;
        if (ev.image != p->image)
            continue;
        if (ev.kind == FMT_EV_THREAD_EXIT) {
            thread_exit(&g, ev.thread);
        } else if (fmt_kind_is_heap_alloc(ev.kind) || ev.kind == FMT_EV_FREE) {
            uint64_t before = g.call;

            rc = heap_event(&g, &ev);
            if (!rc && g.call != before)
                after_call(&g, ev.ts_ns);
        }
    }
    if (!rc && !g.err && fd >= 0) {
        struct rpl_op end = {.kind = RPL_OP_END};

        emit_sample(&g, p->last_ns);
        emit(&g, &end);
        flush_out(&g);
    }
    p->nr_slots = g.nr_slots > p->nr_slots ? g.nr_slots : p->nr_slots;
    p->end_heap = g.heap;
    p->end_blocks = g.blocks_live;
    gen_free(&g);
    return rc ? rc : g.err;
}

void cli_replay_plan_free(struct cli_replay_plan *plan)
{
    free(plan->points);
    plan->points = NULL;
}

/* <dir of memscribe>/../lib/memscribe/memscribe-replay, as record finds
 * the collector. */
static char *worker_path(void)
{
    char self[PATH_MAX], *slash, *guess, *path;
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

    if (n <= 0)
        cli_die("replay: cannot find my own executable: %s", strerror(errno));
    self[n] = 0;
    slash = strrchr(self, '/');
    if (slash)
        *slash = 0;
    if (asprintf(&guess, "%s/../lib/memscribe/memscribe-replay", self) < 0)
        cli_die("replay: out of memory");
    path = realpath(guess, NULL);
    if (!path)
        cli_die("replay: worker %s: %s", guess, strerror(errno));
    free(guess);
    return path;
}

/* Our environment with LD_PRELOAD = what we have there (a collector
 * recording us stays first), then the allocator. */
static char **worker_env(const char *preload)
{
    const char *old = getenv("LD_PRELOAD");
    size_t n = 0, k = 0;
    char **env;

    while (environ[n])
        n++;
    env = calloc(n + 2, sizeof(*env));
    if (!env)
        cli_die("replay: out of memory");
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "LD_PRELOAD=", 11))
            env[k++] = environ[i];
    if ((old && *old) || preload) {
        int has_old = old && *old;

        if (asprintf(&env[k++], "LD_PRELOAD=%s%s%s", has_old ? old : "",
                     has_old && preload ? ":" : "", preload ? preload : "") < 0)
            cli_die("replay: out of memory");
    }
    env[k] = NULL;
    return env;
}

static void parse_output(int fd, const char *trace, const char *name,
                         const struct cli_replay_plan *plan, struct cli_replay_run *run)
{
    FILE *f;
    char *line = NULL;
    size_t cap = 0;
    int ended = 0;

    if (lseek(fd, 0, SEEK_SET) < 0 || !(f = fdopen(fd, "r")))
        cli_die("replay: %s under %s: cannot read the worker's output: %s", trace, name,
                strerror(errno));
    run->rss = calloc(plan->nr_points + 1, sizeof(*run->rss));
    run->flt = calloc(plan->nr_points + 1, sizeof(*run->flt));
    if (!run->rss || !run->flt)
        cli_die("replay: out of memory");
    while (getline(&line, &cap, f) > 0) {
        uint64_t id, rss, minflt, majflt, t, calls, failed, cpu, waits, partly;

        line[strcspn(line, "\n")] = 0;
        if (line[0] == 'A' && line[1] == ' ') {
            snprintf(run->library, sizeof(run->library), "%s", line + 2);
        } else if (line[0] == 'F' && line[1] == ' ') {
            size_t len = strlen(run->emulated);

            snprintf(run->emulated + len, sizeof(run->emulated) - len, "%s%s", len ? " " : "",
                     line + 2);
        } else if (sscanf(line, "S %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64, &id, &rss,
                          &minflt, &majflt) == 4) {
            if (id < plan->nr_points) {
                run->rss[id] = rss;
                run->flt[id] = minflt;
                run->nr_rss = id + 1 > run->nr_rss ? id + 1 : run->nr_rss;
            }
        } else if (sscanf(line,
                          "T %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64,
                          &t, &calls, &failed, &cpu, &waits, &partly) == 6) {
            run->partly += partly;
            run->calls += calls;
            run->failed += failed;
            run->cpu_ns += cpu;
            run->waits += waits;
        } else if (sscanf(line,
                          "E %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64
                          " %" SCNu64,
                          &run->peak_rss, &run->end_rss, &run->minflt, &run->majflt,
                          &run->live_blocks, &run->live_bytes, &run->bookkeeping) == 7) {
            ended = 1;
        } else {
            cli_die("replay: %s under %s: unexpected worker output '%s'", trace, name, line);
        }
    }
    free(line);
    fclose(f);
    if (!ended || run->nr_rss != plan->nr_points)
        cli_die("replay: %s under %s: the worker's output is incomplete", trace, name);
}

void cli_replay_run(const char *trace, struct fmt_reader *r, struct cli_replay_plan *plan,
                    const char *preload, const char *name, struct cli_replay_run *run)
{
    char *path = worker_path();
    char *argv[] = {path, NULL};
    char **env = worker_env(preload);
    posix_spawn_file_actions_t fa;
    int pipefd[2], out, status, rc;
    pid_t pid;

    memset(run, 0, sizeof(*run));
    out = memfd_create("memscribe-replay", MFD_CLOEXEC);
    if (out < 0 || pipe2(pipefd, O_CLOEXEC))
        cli_die("replay: cannot make the worker's pipes: %s", strerror(errno));
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, pipefd[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out, 1);
    rc = posix_spawn(&pid, path, &fa, NULL, argv, env);
    posix_spawn_file_actions_destroy(&fa);
    if (rc)
        cli_die("replay: cannot start %s: %s", path, strerror(rc));
    close(pipefd[0]);
    signal(SIGPIPE, SIG_IGN);
    rc = cli_replay_stream(r, plan, pipefd[1]);
    close(pipefd[1]);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (WIFSIGNALED(status))
        cli_die("replay: %s under %s: the worker died of signal %d", trace, name, WTERMSIG(status));
    if (WEXITSTATUS(status))
        cli_die("replay: %s under %s: the worker failed (exit %d, message above)", trace, name,
                WEXITSTATUS(status));
    if (rc == -EPROTO)
        cli_die("replay: %s", fmt_reader_error(r));
    if (rc)
        cli_die("replay: %s: %s", trace, strerror(-rc));
    parse_output(out, trace, name, plan, run);
    for (size_t i = 0; env[i]; i++)
        if (!strncmp(env[i], "LD_PRELOAD=", 11))
            free(env[i]);
    free(env);
    free(path);
}

void cli_replay_run_free(struct cli_replay_run *run)
{
    free(run->rss);
    free(run->flt);
    run->rss = run->flt = NULL;
}
