/* SPDX-License-Identifier: MIT */
/* memscribe serve: a local web view of a trace, finished or still being
 * written (docs/serve.md). The page asks the server for what it shows;
 * the server answers each question with memscribe's own command. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analysis/core/ana_asset.h"
#include "cli/cli.h"
#include "cli/cli_metrics.h"
#include "cli/cli_serve_http.h"
#include "cli/cli_serve_index.h"
#include "cli/cli_serve_token.h"
#include "memscribe/trace.h"
#include "util/util_outfile.h"

extern const struct ana_asset cli_serve_assets[];

enum {
    OPT_LISTEN = 1000,
    OPT_PORT,
    OPT_TIMEOUT,
    OPT_URL_FILE,
    OPT_PARENT,
    OPT_BASE,
    OPT_TOKEN_FILE,
    OPT_METRICS_LABEL
};

static void usage(FILE *out)
{
    fprintf(out, "usage: memscribe serve [options] FILE\n"
                 "       memscribe serve --base OLD [options] FILE\n\n"
                 "A web view of the trace FILE, finished or still being recorded: heap in use\n"
                 "and RSS over time, the top call sites and their stacks, a window dragged on\n"
                 "the chart (WPA's classes and Impacting Size, as `memscribe window`), and the\n"
                 "blocks live at any moment (as `memscribe leaks --at`). Prints the address to\n"
                 "open, with a random token every request must carry, and serves until\n"
                 "interrupted (Ctrl-C). A trace being written is followed as it grows.\n"
                 "With --base, the page also compares FILE with the trace OLD, as `memscribe\n"
                 "diff OLD FILE` and `memscribe flamegraph --diff OLD FILE` do.\n\n"
                 "options:\n"
                 "  --listen ADDR   address to listen on (default 127.0.0.1; another one\n"
                 "                  lets other machines in, still only with the token)\n"
                 "  --port N        port (default 0: one the system picks)\n"
                 "  --timeout S     longest a query may run, in seconds (default 300)\n"
                 "  --url-file F    also write the address to F (for scripts; made new, and\n"
                 "                  readable by you alone: the address holds the token)\n"
                 "  --parent PID    stop when process PID ends (record --live passes its own)\n"
                 "  --base OLD      compare with the trace OLD (an earlier run)\n"
                 "  --token-file F  the token kept in F (yours alone, 0600; made with a random\n"
                 "                  one if absent): a scraper's bearer credentials_file\n"
                 "  --metrics-label K=V  a label on every series of /metrics (repeatable;\n"
                 "                  memscribe metrics --label)\n"
                 "  -h, --help      this text\n");
}

/* The page, whole: serve.html with serve.css and serve.js in it. */
static char *make_page(void)
{
    const char *html = ana_asset_find(cli_serve_assets, "serve.html");
    const char *css = ana_asset_find(cli_serve_assets, "serve.css");
    const char *js = ana_asset_find(cli_serve_assets, "serve.js");
    const char *c = html ? strstr(html, "/*@CSS@*/") : NULL;
    const char *j = c ? strstr(c, "/*@JS@*/") : NULL;
    char *page = NULL;

    if (!j || !css || !js)
        cli_die("serve: the page is missing from this build");
    if (asprintf(&page, "%.*s%s%.*s%s%s", (int)(c - html), html, css, (int)(j - c - 9), c + 9, js,
                 j + 8) < 0)
        cli_die("serve: out of memory");
    return page;
}

/* From this many chunks (about 50 M events) a trace without chunk totals
 * gets a hint at the start: the page's chart takes the totals from there
 * too (serve.js). */
#define SERVE_TOTALS_HINT_CHUNKS 100

/* What opening the trace t->path says: 0 and in t its last event's time
 * (the page's first charts need the span before report), whether it is
 * complete with chunk totals and its chunks (the page's first view from
 * them), or -errno and why in err.
 * In a child: opening reads every definition (on a build of a thousand
 * processes, hundreds of MB of stack tables), which the long-lived server
 * would otherwise keep as its peak. */
static int open_trace(struct cli_serve_trace *t, char *err, size_t err_size)
{
    const char *path = t->path;
    struct {
        int rc;
        uint64_t last_ns;
        bool totals, complete;
        uint32_t chunks;
        char err[512];
    } res = {-EIO, 0, false, false, 0, ""};
    int fd[2];

    if (pipe2(fd, O_CLOEXEC)) {
        int e = errno;
        snprintf(err, err_size, "%s: %s", path, strerror(e));
        return -e;
    }
    pid_t pid = fork();
    if (pid == 0) {
        struct fmt_reader *r;
        close(fd[0]);
        res.rc = fmt_reader_open(&r, path, res.err, sizeof(res.err));
        if (!res.rc) {
            struct fmt_trace_counts c;
            fmt_reader_counts(r, &c);
            res.last_ns = c.last_ts_ns;
            /* a trace being written is replayed for every query, as before */
            res.complete = !fmt_reader_incomplete(r);
            res.totals = fmt_reader_has_totals(r) && res.complete;
            res.chunks = fmt_reader_nr_chunks(r);
            fmt_reader_close(r);
        }
        _exit(write(fd[1], &res, sizeof(res)) == (ssize_t)sizeof(res) ? 0 : 1);
    }
    close(fd[1]);
    ssize_t got = pid > 0 ? read(fd[0], &res, sizeof(res)) : -1;
    close(fd[0]);
    if (pid > 0)
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
    if (got != (ssize_t)sizeof(res)) {
        snprintf(err, err_size, "%s: could not be opened (%s)", path,
                 pid < 0 ? strerror(errno) : "the check ended early");
        return -EIO;
    }
    snprintf(err, err_size, "%s", res.err);
    t->last_ns = res.last_ns;
    t->totals = res.totals;
    t->chunks = res.chunks;
    /* The page's first view of a large finished trace replays it, seconds
     * a chunk of hundreds: say how it could come from the totals. */
    if (!res.rc && res.complete && !res.totals && res.chunks >= SERVE_TOTALS_HINT_CHUNKS)
        cli_warn("serve: %s: %u chunks and no chunk totals: the page's first view replays every "
                 "event; recorded with `record --totals`, it would come from the totals in a "
                 "fraction of a second (docs/serve.md)",
                 path, res.chunks);
    return res.rc;
}

/* The address, token and all, into path: the caller's alone (made 0600,
 * or one of the caller's files set to 0600 before it is written; a planted
 * file or link is refused, util_outfile.h). */
static void write_url_file(const char *path, const char *url)
{
    struct util_outfile made;
    struct stat st;
    int fd = util_outfile_open(path, O_WRONLY, 0600, &made);
    FILE *f;

    if (fd < 0)
        cli_die("serve: %s: cannot create it: %s", path, made.why);
    if (fstat(fd, &st) || (S_ISREG(st.st_mode) && (st.st_mode & 077) && fchmod(fd, 0600)) ||
        !(f = fdopen(fd, "w")))
        cli_die("serve: %s: %s", path, strerror(errno));
    if (fprintf(f, "%s\n", url) < 0 || fclose(f))
        cli_die("serve: %s: cannot write it: %s", path, strerror(errno));
}

/* The live recording ended (record --live's SIGUSR1, the program's wait
 * status its value): the status says so, and the server stays until a page
 * following it took the final state: the page says so once it shows it
 * (status?took=end), and the server goes when that answer is out. Without
 * a page it ends after QUIET_MS (a page opened just then asks within a
 * second); a page that asked before but nothing for NO_PAGE_MS is gone (it
 * asks every second). A silence alone is no proof: the server used to end
 * after 1.5 s without a question, and a page on a loaded machine, loading
 * the finished trace between two questions, lost the end. At most
 * LINGER_MS, or until a stop signal. */
#define QUIET_MS 1500
#define TOOK_MS 300
#define NO_PAGE_MS 10000
#define LINGER_MS 60000
static void linger(struct cli_serve_http *h, const sigset_t *stop, int how)
{
    struct timespec tick = {0, 100 * 1000 * 1000};
    sigset_t quit = *stop;

    sigdelset(&quit, SIGUSR1);
    cli_serve_http_ended(h, how);
    for (unsigned waited = 0; waited < LINGER_MS; waited += 100) {
        uint64_t quiet;

        if (sigtimedwait(&quit, NULL, &tick) > 0)
            return;
        quiet = cli_serve_http_quiet_ms(h);
        if (cli_serve_http_asked(h)
                ? (cli_serve_http_took_end(h) && quiet >= TOOK_MS) || quiet >= NO_PAGE_MS
                : waited >= QUIET_MS)
            return;
    }
}

/* What the command line asks. */
struct serve_args {
    struct cli_serve_http_options o;
    struct cli_serve_trace t;
    const char *url_file;
    const char *token_file;
    pid_t parent;
};

/* Parse the options into a: -1 to go on, else the exit status (--help, a
 * usage error). */
static int parse_options(int argc, char **argv, struct serve_args *a)
{
    static const struct option opts[] = {
        {"listen", required_argument, NULL, OPT_LISTEN},
        {"port", required_argument, NULL, OPT_PORT},
        {"timeout", required_argument, NULL, OPT_TIMEOUT},
        {"url-file", required_argument, NULL, OPT_URL_FILE},
        {"parent", required_argument, NULL, OPT_PARENT},
        {"base", required_argument, NULL, OPT_BASE},
        {"token-file", required_argument, NULL, OPT_TOKEN_FILE},
        {"metrics-label", required_argument, NULL, OPT_METRICS_LABEL},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    unsigned long v;
    char *end;
    int c;

    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case OPT_LISTEN:
            a->o.listen = optarg;
            break;
        case OPT_PORT:
            v = strtoul(optarg, &end, 10);
            if (*end || !*optarg || v > 65535)
                cli_usage_error("serve: --port wants 0 to 65535, not '%s'", optarg);
            a->o.port = (uint16_t)v;
            break;
        case OPT_TIMEOUT:
            v = strtoul(optarg, &end, 10);
            if (*end || !*optarg || !v || v > 86400)
                cli_usage_error("serve: --timeout wants seconds, 1 to 86400, not '%s'", optarg);
            a->t.timeout_s = (unsigned)v;
            break;
        case OPT_URL_FILE:
            a->url_file = optarg;
            break;
        case OPT_PARENT:
            v = strtoul(optarg, &end, 10);
            if (*end || !*optarg || !v || v > INT_MAX)
                cli_usage_error("serve: --parent wants a process id, not '%s'", optarg);
            a->parent = (pid_t)v;
            break;
        case OPT_BASE:
            a->t.base = optarg;
            break;
        case OPT_TOKEN_FILE:
            a->token_file = optarg;
            break;
        case OPT_METRICS_LABEL:
            if (a->t.nr_metrics_labels == CLI_SERVE_MAX_LABELS || !cli_metrics_label_ok(optarg))
                cli_usage_error("serve: --metrics-label wants NAME=VALUE (as memscribe metrics "
                                "--label), at most %d",
                                CLI_SERVE_MAX_LABELS);
            a->t.metrics_labels[a->t.nr_metrics_labels++] = optarg;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    return -1;
}

/* s as a URL's query value: a token of one's own may hold + / = (base64),
 * which a query would read as a space and separators. Returns buf. */
static const char *url_encode(const char *s, char *buf, size_t size)
{
    size_t n = 0;

    for (; *s && n + 4 <= size; s++) {
        if (strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._~-", *s))
            buf[n++] = *s;
        else
            n += (size_t)snprintf(buf + n, size - n, "%%%02X", (unsigned char)*s);
    }
    buf[n] = 0;
    return buf;
}

int cmd_serve(int argc, char **argv)
{
    struct serve_args a = {.o = {.listen = "127.0.0.1"}, .t = {.timeout_s = 300}};
    char token[CLI_SERVE_TOKEN_SIZE], msg[256], self[PATH_MAX], err[512];
    uint16_t port;
    int rc = parse_options(argc, argv, &a);

    if (rc >= 0)
        return rc;
    if (optind + 1 != argc)
        cli_usage_error("serve: one trace file, please (memscribe serve --help)");
    a.t.path = argv[optind];
    /* A server whose recorder was killed goes with it (SIGTERM, which
     * stops it as Ctrl-C does), not on with the old token. */
    if (a.parent && (prctl(PR_SET_PDEATHSIG, SIGTERM) || getppid() != a.parent))
        cli_die("serve: --parent %d: that process is not this one's parent, or already ended",
                (int)a.parent);

    /* Say now, not at the first query, when the file is not a trace. */
    if (open_trace(&a.t, err, sizeof(err)))
        cli_die("serve: %s", err);
    if (a.t.base) {
        struct cli_serve_trace base = {.path = a.t.base};
        if (open_trace(&base, err, sizeof(err)))
            cli_die("serve: --base %s", err);
    }
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n <= 0)
        cli_die("serve: cannot find this program (/proc/self/exe): %s", strerror(errno));
    self[n] = 0;
    a.t.self = self;
    cli_serve_symbols(&a.t);

    cli_serve_token(a.token_file, token, sizeof(token));
    a.o.token = token;
    a.o.page = make_page();

    /* Ctrl-C and kill end it; wait for them here, the server's threads run. */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGHUP);
    sigaddset(&stop, SIGUSR1); /* record --live: the recording ended */
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    signal(SIGPIPE, SIG_IGN);

    struct cli_serve_index ix;
    cli_serve_index_init(&ix);
    a.t.index = &ix;

    struct cli_serve_http *h;
    if ((rc = cli_serve_http_start(&h, &a.t, &a.o, &port, msg, sizeof(msg))))
        cli_die("serve: %s", msg);
    char url[512], enc[3 * CLI_SERVE_TOKEN_SIZE];
    bool v6 = strchr(a.o.listen, ':') != NULL;
    snprintf(url, sizeof(url), "http://%s%s%s:%u/?token=%s", v6 ? "[" : "", a.o.listen,
             v6 ? "]" : "", (unsigned)port, url_encode(token, enc, sizeof(enc)));
    printf("%s\n", url);
    fflush(stdout);
    if (a.url_file)
        write_url_file(a.url_file, url);
    /* started by record (--parent): record says where, without the token
     * when it is kept in a file (a service's log is read by others) */
    if (!a.parent)
        fprintf(stderr, "memscribe serve: %s on %s; Ctrl-C to stop\n", a.t.path, url);

    siginfo_t si;
    while (sigwaitinfo(&stop, &si) < 0 && errno == EINTR)
        ;
    if (si.si_signo == SIGUSR1)
        linger(h, &stop, si.si_value.sival_int);
    cli_serve_http_stop(h);
    cli_serve_symbols_end(&a.t);
    free((void *)a.o.page);
    return 0;
}
