/* SPDX-License-Identifier: MIT */
/* The page's queries, each one memscribe command run on the served trace
 * (cli_serve_query.h). A command runs in a child process of this binary:
 * its memory ends with it (the server stays small however large the trace),
 * a trace that makes it fail fails one answer, not the server, and its
 * JSON is by construction what the command prints. */
#include "cli/cli_serve_query.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/cli_serve_gzip.h"
#include "cli/cli_serve_index.h"
#include "util/util_array.h"

extern char **environ;

/* What a parameter may hold. */
enum param_kind {
    P_COUNT,  /* digits, at most 7 */
    P_TIME,   /* a time or duration as the commands take it: 1.5s, 250ms, peak, end */
    P_FLAG,   /* 0 or 1 */
    P_PIDS,   /* digits and commas */
    P_NAME,   /* a function's name as tree and report write it: no control character */
    P_CHOICE, /* one of the words of `flag`, a comma-separated list */
    P_LAST,   /* seconds, at most 7 digits: the option gets the trace's last as
                 much (end-Ns,end), the window of Go's ?seconds=N */
};

struct param {
    const char *name;   /* in the URL */
    const char *option; /* the command's option, NULL for a P_FLAG that adds `flag` */
    enum param_kind kind;
    const char *flag; /* P_FLAG: the option it adds when 1; P_CHOICE: the words allowed */
    /* P_COUNT: the values allowed (max 0: any of 7 digits), and the value
     * given when the URL has none (NULL: the command's default). Every
     * answer is bounded in rows and points whatever the URL asks: no
     * "0: all" (docs/serve.md, "Bounded answers"). */
    unsigned long min, max;
    const char *dflt;
};

/* The bounds of the counts a page may ask. */
/* clang-format off */
#define TOP(...) {"top", "--top", P_COUNT, NULL, 1, 200, __VA_ARGS__}
/* clang-format on */

#define MAX_PARAMS 10
struct query {
    const char *name;
    const char *command;
    struct param params[MAX_PARAMS];
    const char *fixed[4]; /* options always given, after --format=json */
    const char *type;     /* of the answer; NULL: JSON */
    bool raw;             /* no --format=json: the command writes its one format (type) */
    bool two;             /* of the base and the trace (serve --base): BASE NEW at the end */
    bool index;           /* --index once the trace's index passed its check */
    bool verify;          /* --verify: a pass checks the index (cli_serve_index.h) */
    bool may_lack;        /* a failure is what was asked not being there: 404, not 500 */
};

static const struct query queries[] = {
    /* index=1: from the chunks' totals (the first view of a trace that has
     * them), without the check --verify makes otherwise */
    {.name = "report",
     .command = "report",
     .verify = true,
     .params = {TOP(NULL),
                {"pid", "--pid", P_PIDS, NULL},
                {"thread", "--thread", P_PIDS, NULL},
                {"index", NULL, P_FLAG, "--index"}}},
    {.name = "timeline",
     .command = "timeline",
     .params = {{"interval", "--interval", P_TIME, NULL},
                {"sites", "--sites", P_COUNT, NULL, 0, 32, NULL},
                {"site_cost", "--site-cost", P_CHOICE, "in-use,allocations,temporary"},
                {"points", "--max-points", P_COUNT, NULL, 1, 4000, "1000"},
                {"from", "--from", P_TIME, NULL},
                {"to", "--to", P_TIME, NULL},
                {"pid", "--pid", P_PIDS, NULL},
                {"thread", "--thread", P_PIDS, NULL},
                {"index", NULL, P_FLAG, "--index"}}},
    {.name = "window",
     .command = "window",
     .index = true,
     .params = {{"from", "--from", P_TIME, NULL},
                {"to", "--to", P_TIME, NULL},
                TOP(NULL),
                {"tree", NULL, P_FLAG, "--tree"},
                {"bottom", NULL, P_FLAG, "--bottom-up"},
                {"depth", "--depth", P_COUNT, NULL, 1, 256, NULL},
                {"sort", "--sort", P_CHOICE, "impacting,size,count"},
                {"by", "--by", P_CHOICE, "stack,function,thread,size-class,heap"},
                {"pid", "--pid", P_PIDS, NULL},
                {"thread", "--thread", P_PIDS, NULL}}},
    {.name = "leaks",
     .command = "leaks",
     .index = true,
     .params = {{"at", "--at", P_TIME, NULL},
                TOP(NULL),
                {"pid", "--pid", P_PIDS, NULL},
                {"thread", "--thread", P_PIDS, NULL},
                {"index", NULL, P_FLAG, "--index"}}},
    /* from the chunks' totals once the index passed its check: a build's
     * tree in a fraction of a replay's time */
    {.name = "tree",
     .command = "tree",
     .index = true,
     .params = {{"depth", "--depth", P_COUNT, NULL, 1, 256, NULL},
                TOP(NULL),
                {"focus", "--focus", P_NAME, NULL},
                {"bottom", NULL, P_FLAG, "--bottom-up"},
                {"flat", NULL, P_FLAG, "--flat"},
                {"sort", "--sort", P_CHOICE, "peak,leaked,allocations,bytes,temporary"},
                {"pid", "--pid", P_PIDS, NULL},
                {"thread", "--thread", P_PIDS, NULL}}},
    /* Heap blocks by power-of-two size class, per process. */
    {.name = "histogram",
     .command = "histogram",
     .params = {{"pid", "--pid", P_PIDS, NULL}, {"thread", "--thread", P_PIDS, NULL}}},
    /* Two runs compared (serve --base OLD NEW): diff's totals and sites, and
     * the differential flame graph (NEW's widths, red as far as a path grew,
     * blue as far as it shrank). */
    {.name = "diff",
     .command = "diff",
     .two = true,
     .params = {TOP(NULL),
                {"sort", "--sort", P_CHOICE, "allocations,bytes,peak,leaked,temporary"},
                {"lines", NULL, P_FLAG, "--lines"}}},
    {.name = "diffflame",
     .command = "flamegraph",
     .two = true,
     .raw = true,
     .fixed = {"--diff", "-o", "-"},
     .type = "image/svg+xml",
     .params = {{"cost", "--cost", P_CHOICE, "allocations,bytes,leaked,peak,temporary"},
                {"width", "--width", P_COUNT, NULL, 200, 4000, NULL}}},
    /* The lines around a frame, from the file the trace's own debug
     * information names for it, read as the trace's owner may (memscribe
     * source: the page never names a path). */
    {.name = "source",
     .command = "source",
     .may_lack = true,
     .params = {{"frame", "--frame", P_NAME, NULL},
                {"context", "--context", P_COUNT, NULL, 0, 50, NULL}}},
    /* The trace's numbers as Prometheus metrics (/metrics: text format
     * 0.0.4), from the index once it passed its check. */
    {.name = "metrics",
     .command = "metrics",
     .raw = true,
     .index = true,
     .type = "text/plain; version=0.0.4; charset=utf-8",
     .params = {{"top", "--top", P_COUNT, NULL, 0, 200, NULL}}},
    /* The heap as a pprof profile (/debug/pprof/heap and /allocs: Go's
     * paths, for go tool pprof and pprof scrapers), by export's writer:
     * alloc_objects, alloc_space, inuse_objects, inuse_space (default;
     * /allocs: alloc_space, as Go's). ?seconds=N: the delta of the
     * trace's last N seconds (Go waits N seconds from the asking; a trace
     * already holds them). */
    {.name = "pprof",
     .command = "export",
     .raw = true,
     .fixed = {"--to", "pprof", "--output=-"},
     .type = "application/octet-stream",
     .params = {{"seconds", "--window", P_LAST, NULL, 1, 9999999, NULL}}},
    {.name = "pprof_allocs",
     .command = "export",
     .raw = true,
     .fixed = {"--to", "pprof", "--output=-", "--sample-index=alloc_space"},
     .type = "application/octet-stream",
     .params = {{"seconds", "--window", P_LAST, NULL, 1, 9999999, NULL}}},
    /* Commit lifetimes in a window (VirtualAlloc's on Windows traces). */
    {.name = "vmem",
     .command = "vmem",
     .params = {{"from", "--from", P_TIME, NULL},
                {"to", "--to", P_TIME, NULL},
                TOP(NULL),
                {"pid", "--pid", P_PIDS, NULL}}},
    /* The address-space map at a moment: frag's SVG (of the first process
     * the filter keeps). */
    {.name = "map",
     .command = "frag",
     .params = {{"at", "--at", P_TIME, NULL}, {"pid", "--pid", P_PIDS, NULL}},
     .fixed = {"--svg", "-"},
     .type = "image/svg+xml"},
};

static bool param_ok(const struct param *p, const char *v)
{
    enum param_kind kind = p->kind;
    size_t n = strlen(v);

    /* A name is one word of the command's argv (--focus=NAME): no option
     * of its own, whatever it holds, and never a path the command opens. */
    if (kind == P_NAME) {
        for (size_t i = 0; i < n; i++)
            if ((unsigned char)v[i] < 0x20 || v[i] == 0x7f)
                return false;
        return n > 0 && n <= 1024;
    }
    if (kind == P_CHOICE) {
        for (const char *w = p->flag; n && w; w = strchr(w, ',') ? strchr(w, ',') + 1 : NULL)
            if (!strncmp(w, v, n) && (w[n] == ',' || !w[n]))
                return true;
        return false;
    }
    if (!n || n > 32)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = v[i];
        bool digit = c >= '0' && c <= '9';

        switch (kind) {
        case P_COUNT:
        case P_LAST:
            if (!digit || n > 7)
                return false;
            break;
        case P_TIME: /* the first character is never '-': no option of its own */
            if (!digit && c != '.' && !(c >= 'a' && c <= 'z'))
                return false;
            break;
        case P_FLAG:
            if (n != 1 || (c != '0' && c != '1'))
                return false;
            break;
        case P_PIDS:
            if (!digit && c != ',')
                return false;
            break;
        case P_NAME: /* above */
        case P_CHOICE:
            break;
        }
    }
    unsigned long x = kind == P_COUNT || kind == P_LAST ? strtoul(v, NULL, 10) : 0;
    return !p->max || (x >= p->min && x <= p->max);
}

static int answer_text(struct cli_serve_answer *ans, unsigned status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int answer_text(struct cli_serve_answer *ans, unsigned status, const char *fmt, ...)
{
    va_list ap;
    char *s = NULL;
    int n;

    va_start(ap, fmt);
    n = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (n < 0)
        return -ENOMEM;
    *ans = (struct cli_serve_answer){
        .status = status, .type = "text/plain; charset=utf-8", .body = s, .body_len = (size_t)n};
    return 0;
}

/* What a child writes on one of its descriptors: kept as it is (its
 * messages), or gzipped as it comes (gz: its answer). */
struct sink {
    char *buf;
    size_t len, cap;
    int fd;
    struct cli_gzip *gz;
};

/* Read what is there from s->fd: 1 at its end, 0 for more, -errno. */
static int sink_read(struct sink *s)
{
    char chunk[65536];

    if (!s->gz && UTIL_ARRAY_RESERVE(s->buf, s->cap, s->len + 65537, 65536))
        return -ENOMEM;
    char *to = s->gz ? chunk : s->buf + s->len;
    ssize_t got = read(s->fd, to, s->gz ? sizeof(chunk) : s->cap - s->len - 1);

    if (got < 0)
        return errno == EINTR || errno == EAGAIN ? 0 : -errno;
    if (got == 0)
        return 1;
    if (s->gz)
        return cli_gzip_add(s->gz, chunk, (size_t)got);
    s->len += (size_t)got;
    return 0;
}

#define SYMBOLS_ENV "MEMSCRIBE_SYMBOL_CACHE="

void cli_serve_symbols(struct cli_serve_trace *t)
{
    size_t n = 0;
    char **env;
    /* above the descriptors a child is given, so that dup2 makes a copy
     * without close-on-exec */
    int mfd = memfd_create("memscribe-symbols", MFD_CLOEXEC), fd = -1;

    if (mfd >= 0) {
        fd = fcntl(mfd, F_DUPFD_CLOEXEC, 10);
        close(mfd);
    }
    while (environ[n])
        n++;
    if (fd < 0 || !(env = calloc(n + 2, sizeof(*env)))) {
        cli_warn("serve: no symbol cache for the queries: %s", strerror(errno));
        if (fd >= 0)
            close(fd);
        return;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], SYMBOLS_ENV, strlen(SYMBOLS_ENV)))
            env[k++] = environ[i];
    _Static_assert(CLI_SERVE_SYMBOLS_FD == 3, "the variable names descriptor 3");
    env[k++] = (char *)SYMBOLS_ENV "/proc/self/fd/3";
    t->symbols_fd = fd;
    t->env = env;
}

void cli_serve_symbols_end(struct cli_serve_trace *t)
{
    if (!t->env)
        return;
    free(t->env);
    close(t->symbols_fd);
    t->env = NULL;
    t->symbols_fd = -1;
}

/* Run `self argv...` to its end, its output into out and its messages
 * into err (both NUL-terminated). Returns its wait status, or -errno;
 * -ETIMEDOUT when it ran past timeout_s (it is killed). */
static int run(const struct cli_serve_trace *t, char **argv, struct sink *out, struct sink *err)
{
    int po[2], pe[2], status = 0, rc = 0;
    posix_spawn_file_actions_t fa;
    pid_t pid;
    struct timespec t0, now;

    if (pipe2(po, O_CLOEXEC))
        return -errno;
    if (pipe2(pe, O_CLOEXEC)) {
        rc = -errno;
        close(po[0]);
        close(po[1]);
        return rc;
    }
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, po[1], 1);
    posix_spawn_file_actions_adddup2(&fa, pe[1], 2);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    if (t->env)
        posix_spawn_file_actions_adddup2(&fa, t->symbols_fd, CLI_SERVE_SYMBOLS_FD);
    rc = posix_spawn(&pid, t->self, &fa, NULL, argv, t->env ? t->env : environ);
    posix_spawn_file_actions_destroy(&fa);
    close(po[1]);
    close(pe[1]);
    if (rc) {
        close(po[0]);
        close(pe[0]);
        return -rc;
    }
    out->fd = po[0];
    err->fd = pe[0];
    clock_gettime(CLOCK_MONOTONIC, &t0);
    bool out_open = true, err_open = true;
    while ((out_open || err_open) && rc == 0) {
        struct pollfd p[2] = {{out_open ? po[0] : -1, POLLIN, 0},
                              {err_open ? pe[0] : -1, POLLIN, 0}};

        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - t0.tv_sec >= (time_t)t->timeout_s) {
            rc = -ETIMEDOUT;
            break;
        }
        if (t->stop && atomic_load(t->stop)) { /* the server stops */
            rc = -ECANCELED;
            break;
        }
        if (poll(p, 2, 200) < 0 && errno != EINTR) {
            rc = -errno;
            break;
        }
        int r;
        if (out_open && (p[0].revents & (POLLIN | POLLHUP | POLLERR))) {
            if ((r = sink_read(out)) < 0)
                rc = r;
            else if (r)
                out_open = false;
        }
        if (err_open && (p[1].revents & (POLLIN | POLLHUP | POLLERR))) {
            if ((r = sink_read(err)) < 0)
                rc = r;
            else if (r)
                err_open = false;
        }
    }
    if (rc)
        kill(pid, SIGKILL);
    close(po[0]);
    close(pe[0]);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (out->buf && !out->gz)
        out->buf[out->len] = 0;
    if (err->buf)
        err->buf[err->len] = 0;
    return rc ? rc : status;
}

/* How the program of a recording that ended ended, as JSON: null while
 * it runs (or for a trace not recorded live). */
static void ended_json(const struct cli_serve_trace *t, char *out, size_t size)
{
    int how = t->end && atomic_load(&t->end->ended) ? atomic_load(&t->end->how) : -2;

    if (how == -2)
        snprintf(out, size, "null");
    else if (how == -1)
        snprintf(out, size,
                 "\"the recording ended; the program's end was not seen (it may run on)\"");
    else if (WIFEXITED(how))
        snprintf(out, size, "\"the program exited with status %d\"", WEXITSTATUS(how));
    else if (WIFSIGNALED(how))
        snprintf(out, size, "\"the program was killed by signal %d (SIG%s)\"", WTERMSIG(how),
                 sigabbrev_np(WTERMSIG(how)) ? sigabbrev_np(WTERMSIG(how)) : "?");
    else
        snprintf(out, size, "\"the program ended (wait status %#x)\"", (unsigned)how);
}

static int status_answer(const struct cli_serve_trace *t, struct cli_serve_answer *ans)
{
    uint64_t size = 0, mtime = 0;
    char ended[120];
    int rc = cli_serve_trace_version(t->path, &size, &mtime);

    if (rc)
        return answer_text(ans, 500, "%s: %s\n", t->path, strerror(-rc));
    ended_json(t, ended, sizeof(ended));
    /* index: leaks and window come from the checked index (cli_serve_index.h);
     * last_ns: the trace's span when the server started, for the page's
     * first charts, asked at once with report; ended: how the program of a
     * live recording ended, once it did */
    rc = answer_text(ans, 200,
                     "{\"size\": %llu, \"mtime_ns\": %llu, \"index\": %s, \"last_ns\": %llu, "
                     "\"totals\": %s, \"chunks\": %u, \"ended\": %s, \"compare\": %s}\n",
                     (unsigned long long)size, (unsigned long long)mtime,
                     cli_serve_index_ready(t->index, t->path) ? "true" : "false",
                     (unsigned long long)t->last_ns, t->totals ? "true" : "false", t->chunks, ended,
                     t->base ? "true" : "false");
    ans->type = "application/json";
    return rc;
}

/* The command line of a query being built: argv (the owned strings freed
 * by the caller), and whether the URL asked for the index. */
struct cmdline {
    char **argv;
    size_t argc;
    char **owned;
    size_t nr_owned;
    bool asked_index;
};

/* The URL's parameters of q as the command's options onto c: 0, 1 when one
 * is not allowed (*ans a 400 that says why), or -ENOMEM. */
static int add_params(const struct query *q, const char *name, cli_serve_param_fn *param, void *arg,
                      struct cmdline *c, struct cli_serve_answer *ans)
{
    for (size_t i = 0; i < MAX_PARAMS && q->params[i].name; i++) {
        const struct param *p = &q->params[i];
        const char *v = param(arg, p->name);
        int rc;

        if (!v && !(v = p->dflt))
            continue;
        if (!param_ok(p, v)) {
            if (p->kind == P_CHOICE)
                rc = answer_text(ans, 400, "%s: parameter %s: '%.40s' is not one of %s\n", name,
                                 p->name, v, p->flag);
            else if (p->max)
                rc =
                    answer_text(ans, 400, "%s: parameter %s: '%.40s' is not allowed (%lu to %lu)\n",
                                name, p->name, v, p->min, p->max);
            else
                rc = answer_text(ans, 400, "%s: parameter %s: '%.40s' is not allowed\n", name,
                                 p->name, v);
            return rc ? rc : 1;
        }
        if (p->kind == P_FLAG) {
            if (*v == '1')
                c->argv[c->argc++] = (char *)p->flag;
            c->asked_index |= *v == '1' && !strcmp(p->flag, "--index");
            continue;
        }
        if ((p->kind == P_LAST ? asprintf(&c->owned[c->nr_owned], "%s=end-%ss,end", p->option, v)
                               : asprintf(&c->owned[c->nr_owned], "%s=%s", p->option, v)) < 0)
            return -ENOMEM;
        c->argv[c->argc++] = c->owned[c->nr_owned++];
    }
    return 0;
}

int cli_serve_query(const struct cli_serve_trace *t, const char *name, cli_serve_param_fn *param,
                    void *arg, struct cli_serve_answer *ans)
{
    const struct query *q = NULL;
    /* self, command, --format=json, fixed, one option per parameter, --index,
     * --verify, the base, the trace, NULL */
    char *argv[8 + MAX_PARAMS + 4 + 2 * CLI_SERVE_MAX_LABELS] = {0}, *owned[MAX_PARAMS] = {0};
    struct cmdline cmd = {.argv = argv, .owned = owned};
    struct cli_gzip gz = {0};
    struct sink out = {.gz = &gz}, err = {0};
    int rc;

    if (!strcmp(name, "status"))
        return status_answer(t, ans);
    for (size_t i = 0; i < sizeof(queries) / sizeof(queries[0]); i++)
        if (!strcmp(queries[i].name, name))
            q = &queries[i];
    if (!q)
        return answer_text(ans, 404, "no query '%s'\n", name);
    if (q->two && !t->base)
        return answer_text(ans, 404,
                           "%s: no trace to compare with (memscribe serve --base OLD NEW)\n", name);
    argv[cmd.argc++] = (char *)t->self;
    argv[cmd.argc++] = (char *)q->command;
    if (!q->raw)
        argv[cmd.argc++] = "--format=json";
    for (size_t i = 0; i < 4 && q->fixed[i]; i++)
        argv[cmd.argc++] = (char *)q->fixed[i];
    /* serve --metrics-label: on every series */
    for (unsigned i = 0; !strcmp(q->command, "metrics") && i < t->nr_metrics_labels; i++) {
        argv[cmd.argc++] = "--label";
        argv[cmd.argc++] = (char *)t->metrics_labels[i];
    }
    if ((rc = add_params(q, name, param, arg, &cmd, ans))) {
        rc = rc > 0 ? 0 : rc; /* > 0: answered, a 400 */
        goto out;
    }
    /* A moment's leaks and a window from the index once the trace passed
     * its check (cli_serve_index.h). */
    if (q->index && !cmd.asked_index && cli_serve_index_ready(t->index, t->path))
        argv[cmd.argc++] = "--index";
    uint64_t size = 0, mtime = 0;
    bool verify = q->verify && !cmd.asked_index && t->index &&
                  !cli_serve_trace_version(t->path, &size, &mtime);
    if (verify)
        argv[cmd.argc++] = "--verify";
    if (q->two)
        argv[cmd.argc++] = (char *)t->base;
    argv[cmd.argc++] = (char *)t->path;
    argv[cmd.argc] = NULL;
    rc = run(t, argv, &out, &err);
    if (rc == -ETIMEDOUT) {
        rc = answer_text(ans, 504, "%s took more than %u s\n", name, t->timeout_s);
    } else if (rc < 0) {
        /* rc stays: the system failed */
    } else if (WIFEXITED(rc) && WEXITSTATUS(rc) == 2) {
        /* a question the command refuses (a range that ends before it
         * starts): the asker's to change, 400, with the command's words */
        rc = answer_text(ans, 400, "%s", err.len ? err.buf : "the command refused the question\n");
    } else if (!WIFEXITED(rc) || WEXITSTATUS(rc) != 0) {
        rc = answer_text(ans, q->may_lack && WIFEXITED(rc) ? 404 : 500, "%s",
                         err.len ? err.buf : "the command failed\n");
    } else if (!(rc = cli_gzip_finish(&gz, &out.buf, &out.len))) {
        *ans = (struct cli_serve_answer){.status = 200,
                                         .type = q->type ? q->type : "application/json",
                                         .body = out.buf,
                                         .body_len = out.len,
                                         .gzip = true};
        out.buf = NULL;
        uint64_t size2 = 0, mtime2 = 0;
        if (verify && !cli_serve_trace_version(t->path, &size2, &mtime2) && size2 == size &&
            mtime2 == mtime)
            cli_serve_index_passed(t->index, size, mtime);
    }
out:
    for (size_t i = 0; i < cmd.nr_owned; i++)
        free(owned[i]);
    cli_gzip_release(&gz);
    free(out.buf);
    free(err.buf);
    return rc;
}
