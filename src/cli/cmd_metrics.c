/* SPDX-License-Identifier: MIT */
/* memscribe metrics: the trace's numbers in Prometheus's text format
 * (version 0.0.4), for a scraper: each process's heap in use, peak, live
 * blocks, RSS and its counters, the tree's, and the top sites' bytes in
 * use labelled by their frame of interest. The page of `memscribe serve`
 * answers /metrics with it. docs/fleet.md. */
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/core/ana_sample.h"
#include "analysis/core/ana_text.h"
#include "analysis/model/ana_exact.h"
#include "analysis/model/ana_model.h"
#include "cli/cli.h"
#include "cli/cli_ana.h"
#include "cli/cli_getopt.h"
#include "cli/cli_metrics.h"
#include "cli/cli_push.h"

enum { OPT_LABEL = CLI_ANA_OPT_FIRST_OWN, OPT_INDEX, OPT_PUSH, OPT_JOB, OPT_INSTANCE, OPT_CHECK };

#define DEFAULT_SITES 20
#define MAX_LABELS 16
#define MAX_CHECKS 64

static void usage(FILE *out)
{
    fprintf(out, "usage: memscribe metrics [options] FILE\n\n"
                 "The trace's numbers as Prometheus metrics (its text format 0.0.4), for\n"
                 "a scraper or a Pushgateway: per process (labels pid, exe) heap in use,\n"
                 "its peak, live blocks, RSS and peak RSS as gauges, allocations, frees,\n"
                 "bytes allocated and temporary allocations as counters; the same of the\n"
                 "whole tree (memscribe_tree_*); and the bytes in use of each process's\n"
                 "top call sites, labelled by their frame of interest (sites of one frame\n"
                 "summed), at most --top N series a process.\n\n"
                 "options:\n"
                 "  --top N         sites a process (default 20; 0: none)\n"
                 "  --label K=V     a label on every series (service, version; repeatable)\n"
                 "  --index         from the chunks' totals where the trace has them\n"
                 "  --push URL      PUT them to the Prometheus Pushgateway at URL\n"
                 "                  (http://HOST:PORT) instead of printing them\n"
                 "  --job NAME      the push's job (default memscribe)\n"
                 "  --instance NAME the push's instance (default this host's name)\n"
                 "  --check OPT[=VALUE]  memscribe check's --OPT VALUE (max-leaked=0,\n"
                 "                  max-peak=64M; repeatable): each check's value, limit\n"
                 "                  and verdict as memscribe_check_* series, for a CI\n"
                 "                  fleet's charts\n"
                 "  --pid LIST      only these processes (comma-separated pids)\n"
                 "  --exe GLOB      only processes whose executable matches; repeatable\n"
                 "  --thread LIST   only blocks allocated by these threads (tids)\n"
                 "  -h, --help      this text\n" CLI_SYM_USAGE);
}

/* A label's value as the text format quotes it: \\, \" and \n escaped. */
static void put_value(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '\\' || *s == '"')
            fputc('\\', f);
        if (*s == '\n')
            fputs("\\n", f);
        else
            fputc(*s, f);
    }
    fputc('"', f);
}

struct out {
    FILE *f;
    const char *label_k[MAX_LABELS], *label_v[MAX_LABELS];
    unsigned nr_labels;
};

/* One series: name{the constant labels, then k=v pairs (NULL-ended)} v. */
static void series(const struct out *o, const char *name, uint64_t v, ...)
{
    va_list ap;
    const char *k;
    unsigned n = 0;

    fputs(name, o->f);
    va_start(ap, v);
    for (unsigned i = 0; i < o->nr_labels; i++) {
        fprintf(o->f, "%s%s=", n++ ? "," : "{", o->label_k[i]);
        put_value(o->f, o->label_v[i]);
    }
    while ((k = va_arg(ap, const char *))) {
        fprintf(o->f, "%s%s=", n++ ? "," : "{", k);
        put_value(o->f, va_arg(ap, const char *));
    }
    va_end(ap);
    fprintf(o->f, "%s %" PRIu64 "\n", n ? "}" : "", v);
}

/* The numbers of a scope (a process, or the tree), each a family: a
 * uint64_t field of struct ana_scope. */
struct metric {
    const char *name; /* after memscribe_ (or memscribe_tree_) */
    const char *type;
    const char *help;
    size_t field;   /* offsetof(struct ana_scope, ...) */
    bool rss;       /* none where no RSS sample is (has_rss) */
    bool temporary; /* none in a sampled trace (ana_sample.h) */
};

#define FIELD(f) offsetof(struct ana_scope, f)
static const struct metric metrics[] = {
    {"heap_in_use_bytes", "gauge",
     "Heap bytes in use (live blocks' requested bytes) at the trace's last event; an ended "
     "process's: what it left",
     FIELD(heap), false, false},
    {"heap_peak_bytes", "gauge", "The highest heap in use so far", FIELD(peak), false, false},
    {"live_blocks", "gauge", "Heap blocks live at the trace's last event", FIELD(live_blocks),
     false, false},
    {"rss_bytes", "gauge",
     "The latest RSS sample (memscribe's own ring buffers included; the tree's: of the "
     "processes still running)",
     FIELD(rss), true, false},
    {"rss_peak_bytes", "gauge", "The highest RSS sample so far", FIELD(rss_peak), true, false},
    {"allocations_total", "counter", "Heap blocks allocated", FIELD(nr_allocs), false, false},
    {"frees_total", "counter", "Heap blocks freed", FIELD(nr_frees), false, false},
    {"allocated_bytes_total", "counter", "Bytes requested by the heap blocks allocated",
     FIELD(alloc_bytes), false, false},
    {"temporary_allocations_total", "counter",
     "Blocks freed before their thread allocated or freed anything else (heaptrack's temporary)",
     FIELD(nr_temporary), false, true},
};

static uint64_t value_of(const struct metric *mt, const struct ana_scope *s)
{
    return *(const uint64_t *)((const char *)s + mt->field);
}

#define NR_METRICS (sizeof(metrics) / sizeof(metrics[0]))

static void family(const struct out *o, const char *prefix, const struct metric *mt)
{
    fprintf(o->f, "# HELP %s%s %s\n# TYPE %s%s %s\n", prefix, mt->name, mt->help, prefix, mt->name,
            mt->type);
}

/* An image's executable for its exe label: the path's last part, as
 * every output makes a program's bytes safe (valid UTF-8, no control
 * character: ana_text.h), "" if unknown. */
static const char *exe_label(const struct fmt_image_info *ii, char *buf, size_t size)
{
    if (!ii || !ii->exe)
        return "";
    const char *slash = memrchr(ii->exe, '/', ii->exe_len);
    const char *base = slash ? slash + 1 : ii->exe;
    ana_text_escape(buf, size, base, ii->exe_len - (size_t)(base - ii->exe));
    return buf;
}

/* Each process's and the tree's families. */
static void write_scopes(const struct out *o, struct cli_ana *a, const struct ana_model *m,
                         bool with_temporary)
{
    char name[128], pid[16], exe[1024];

    for (size_t k = 0; k < NR_METRICS; k++) {
        const struct metric *mt = &metrics[k];
        if (mt->temporary && !with_temporary)
            continue;
        family(o, "memscribe_", mt);
        snprintf(name, sizeof(name), "memscribe_%s", mt->name);
        for (uint32_t im = 0; im < ana_model_nr_images(m); im++) {
            const struct ana_scope *s = ana_model_image(m, im);
            const struct fmt_image_info *ii = fmt_reader_image(a->r, im);
            if (!s || !s->seen || (mt->rss && !s->has_rss))
                continue;
            snprintf(pid, sizeof(pid), "%" PRIu32, s->pid);
            series(o, name, value_of(mt, s), "pid", pid, "exe", exe_label(ii, exe, sizeof(exe)),
                   NULL);
        }
        const struct ana_scope *t = ana_model_total(m);
        if (mt->rss && !t->has_rss)
            continue;
        family(o, "memscribe_tree_", mt);
        snprintf(name, sizeof(name), "memscribe_tree_%s", mt->name);
        series(o, name, value_of(mt, t), NULL);
    }
}

/* A sampled trace's exact counters (ana_exact.h), each a family of its own:
 * memscribe_exact_* by process, memscribe_tree_exact_* of the tree (its
 * counts added up; no peak, as the processes' peaks need not fall at one
 * moment). */
struct exact_metric {
    const char *name; /* after memscribe_exact_ */
    const char *type;
    const char *help;
    unsigned id; /* enum fmt_counter */
    bool peak;   /* the process's own only */
};

static const struct exact_metric exact_metrics[] = {
    {"allocations_total", "counter", "Heap blocks allocated, every call counted (not sampled)",
     FMT_CTR_ALLOCS, false},
    {"frees_total", "counter", "Heap blocks freed, every call counted", FMT_CTR_FREES, false},
    {"allocated_bytes_total", "counter", "Bytes requested by the heap blocks allocated, counted",
     FMT_CTR_ALLOC_BYTES, false},
    {"temporary_allocations_total", "counter",
     "Blocks freed before their thread allocated or freed anything else, counted",
     FMT_CTR_TEMPORARY, false},
    {"failed_calls_total", "counter", "Heap calls that failed, counted", FMT_CTR_FAILED, false},
    {"heap_usable_bytes", "gauge",
     "Heap in use in usable bytes (what the allocator gave), counted, at the last counts",
     FMT_CTR_HEAP_USABLE, false},
    {"heap_usable_peak_bytes", "gauge", "The highest heap in use in usable bytes, counted",
     FMT_CTR_PEAK_USABLE, true},
};

static void exact_series(const struct out *o, const char *name, const struct ana_exact *x,
                         const struct exact_metric *mt, const char *pid, const char *exe)
{
    if (pid)
        series(o, name, x->v[mt->id], "pid", pid, "exe", exe, NULL);
    else
        series(o, name, x->v[mt->id], NULL);
}

static void write_exact(const struct out *o, struct cli_ana *a, const struct ana_model *m)
{
    char name[128], pid[16], exe[1024];
    struct ana_exact x;

    for (size_t k = 0; k < sizeof(exact_metrics) / sizeof(exact_metrics[0]); k++) {
        const struct exact_metric *mt = &exact_metrics[k];
        fprintf(o->f, "# HELP memscribe_exact_%s %s\n# TYPE memscribe_exact_%s %s\n", mt->name,
                mt->help, mt->name, mt->type);
        snprintf(name, sizeof(name), "memscribe_exact_%s", mt->name);
        for (uint32_t im = 0; im < ana_model_nr_images(m); im++) {
            const struct ana_scope *s = ana_model_image(m, im);
            if (!s || !s->has_exact)
                continue;
            ana_exact_of(m, s, &x);
            snprintf(pid, sizeof(pid), "%" PRIu32, s->pid);
            exact_series(o, name, &x, mt, pid,
                         exe_label(fmt_reader_image(a->r, im), exe, sizeof(exe)));
        }
        ana_exact_of(m, ana_model_total(m), &x);
        if (mt->peak && !x.has_peak)
            continue;
        fprintf(o->f, "# HELP memscribe_tree_exact_%s %s\n# TYPE memscribe_tree_exact_%s %s\n",
                mt->name, mt->help, mt->name, mt->type);
        snprintf(name, sizeof(name), "memscribe_tree_exact_%s", mt->name);
        exact_series(o, name, &x, mt, NULL, NULL);
    }
}

/* A site's bytes in use, by its process and frame of interest. */
struct site_row {
    uint32_t image;
    char *where;
    uint64_t bytes;
};

static int by_image_where(const void *x, const void *y)
{
    const struct site_row *a = x, *b = y;

    if (a->image != b->image)
        return a->image < b->image ? -1 : 1;
    return strcmp(a->where, b->where);
}

static int by_image_bytes(const void *x, const void *y)
{
    const struct site_row *a = x, *b = y;

    if (a->image != b->image)
        return a->image < b->image ? -1 : 1;
    if (a->bytes != b->bytes)
        return a->bytes > b->bytes ? -1 : 1;
    return strcmp(a->where, b->where);
}

/* The top sites of each process: sites of one frame of interest summed
 * (series are told apart by their labels alone), the top of each process
 * by bytes in use, at most top a process. */
static void write_sites(const struct out *o, struct cli_ana *a, const struct ana_model *m,
                        unsigned top)
{
    struct site_row *rows = NULL;
    size_t nr = 0, cap = 0, kept = 0;
    char pid[16];

    for (uint32_t id = 0; top && id < ana_model_nr_sites(m); id++) {
        const struct ana_site *s = ana_model_site(m, id);
        if (!s || s->live_bytes <= 0)
            continue;
        unsigned n = 0;
        const char *const *fr = cli_ana_stack(a, id, false, 0, &n);
        if (nr == cap && !(rows = realloc(rows, (cap = cap ? 2 * cap : 256) * sizeof(*rows))))
            cli_die("metrics: out of memory");
        rows[nr] = (struct site_row){s->image, strdup(n ? fr[a->interest] : "(no stack)"),
                                     (uint64_t)s->live_bytes};
        if (!rows[nr++].where)
            cli_die("metrics: out of memory");
    }
    if (nr) /* rows NULL with none: qsort wants an array */
        qsort(rows, nr, sizeof(*rows), by_image_where);
    for (size_t i = 0; i < nr; i++) {
        if (kept && rows[kept - 1].image == rows[i].image &&
            !strcmp(rows[kept - 1].where, rows[i].where)) {
            rows[kept - 1].bytes += rows[i].bytes;
            free(rows[i].where);
            continue;
        }
        rows[kept++] = rows[i];
    }
    if (kept)
        qsort(rows, kept, sizeof(*rows), by_image_bytes);
    fprintf(o->f,
            "# HELP memscribe_site_heap_in_use_bytes Heap bytes in use by the call sites "
            "whose frame of interest is site, the top %u of each process\n"
            "# TYPE memscribe_site_heap_in_use_bytes gauge\n",
            top);
    for (size_t i = 0, rank = 0; i < kept; i++) {
        rank = i && rows[i].image == rows[i - 1].image ? rank + 1 : 0;
        if (rank < top) {
            const struct fmt_image_info *ii = fmt_reader_image(a->r, rows[i].image);
            snprintf(pid, sizeof(pid), "%" PRIu32, ii ? ii->pid : 0);
            series(o, "memscribe_site_heap_in_use_bytes", rows[i].bytes, "pid", pid, "site",
                   rows[i].where, NULL);
        }
        free(rows[i].where);
    }
    free(rows);
}

bool cli_metrics_label_ok(const char *kv)
{
    const char *eq = strchr(kv, '=');
    size_t n = eq ? (size_t)(eq - kv) : 0;
    bool ok = n > 0 && strncmp(kv, "__", 2);

    for (size_t i = 0; ok && i < n; i++)
        ok = (kv[i] >= 'a' && kv[i] <= 'z') || (kv[i] >= 'A' && kv[i] <= 'Z') || kv[i] == '_' ||
             (i > 0 && kv[i] >= '0' && kv[i] <= '9');
    for (const char *own = "pid\0exe\0site\0"; ok && *own; own += strlen(own) + 1)
        ok = !(strlen(own) == n && !strncmp(kv, own, n));
    return ok;
}

/* --label K=V (cli_metrics_label_ok). */
static void add_label(struct out *o, char *kv)
{
    if (o->nr_labels == MAX_LABELS || !cli_metrics_label_ok(kv))
        cli_usage_error("metrics: --label wants NAME=VALUE, NAME a Prometheus label name "
                        "(letters, digits, _; not __*, pid, exe or site), at most %d",
                        MAX_LABELS);
    char *eq = strchr(kv, '=');
    *eq = '\0';
    o->label_k[o->nr_labels] = kv;
    o->label_v[o->nr_labels++] = eq + 1;
}

static void note_comment(void *arg, const char *note)
{
    fprintf(arg, "# memscribe: %s\n", note);
}

/* --check: check's options ("--OPT=VALUE") and the trace, as record
 * --check gives them to check. */
struct checks {
    char *argv[MAX_CHECKS + 3];
    int argc;
};

static void add_check(struct checks *k, const char *opt)
{
    if (k->argc == 0)
        k->argv[k->argc++] = "check";
    if (k->argc == MAX_CHECKS + 1 || opt[0] == '-' || asprintf(&k->argv[k->argc], "--%s", opt) < 0)
        cli_usage_error("metrics: --check wants OPT[=VALUE] as record --check (max-leaked=0), at "
                        "most %d",
                        MAX_CHECKS);
    k->argc++;
}

/* The three families of --check, each written whole (the text format
 * wants a family's lines together): a check's value, limit and verdict go
 * to one buffer each, written in turn at the end. */
static const char *const check_families[3][2] = {
    {"memscribe_check_value",
     "The number a check of memscribe check holds (report's field named by measure)"},
    {"memscribe_check_limit", "The most that number may be for the check to pass"},
    {"memscribe_check_passed", "1 if the check passed, 0 if it failed"},
};

static void check_series(void *arg, const struct cli_check_outcome *c)
{
    const struct out *fam = arg;

    if (c->known)
        series(&fam[0], check_families[0][0], c->value, "check", c->check, "measure", c->measure,
               NULL);
    series(&fam[1], check_families[1][0], c->allowed, "check", c->check, "measure", c->measure,
           NULL);
    series(&fam[2], check_families[2][0], c->passed, "check", c->check, "measure", c->measure,
           NULL);
}

/* memscribe check's verdicts on the trace, as series. */
static void write_checks(const struct out *o, struct checks *k, const char *trace)
{
    struct out fam[3] = {*o, *o, *o};
    char *text[3] = {0};
    size_t len[3] = {0};

    if (!k->argc)
        return;
    k->argv[k->argc] = (char *)trace;
    for (int i = 0; i < 3; i++)
        if (!(fam[i].f = open_memstream(&text[i], &len[i])))
            cli_die("metrics: out of memory");
    cli_check_each(k->argc + 1, k->argv, check_series, fam);
    for (int i = 0; i < 3; i++) {
        if (fclose(fam[i].f))
            cli_die("metrics: out of memory");
        fprintf(o->f, "# HELP %s %s\n# TYPE %s gauge\n%s", check_families[i][0],
                check_families[i][1], check_families[i][0], text[i] ? text[i] : "");
        free(text[i]);
    }
    for (int i = 1; i < k->argc; i++)
        free(k->argv[i]);
}

/* --push: where, and the text made for it. */
struct push {
    const char *url, *job, *instance;
    char *body;
    size_t len;
};

static void push_out(struct push *p, FILE *f)
{
    char host[256], err[512];

    if (fclose(f) || !p->body)
        cli_die("metrics: out of memory");
    if (!p->instance) {
        if (gethostname(host, sizeof(host)))
            snprintf(host, sizeof(host), "unknown");
        host[sizeof(host) - 1] = 0;
        p->instance = host;
    }
    if (cli_push_metrics(p->url, p->job, p->instance, p->body, p->len, err, sizeof(err)))
        cli_die("metrics: --push %s", err);
    free(p->body);
}

int cmd_metrics(int argc, char **argv)
{
    static const struct option own[] = {
        {"label", required_argument, NULL, OPT_LABEL},
        {"index", no_argument, NULL, OPT_INDEX},
        {"push", required_argument, NULL, OPT_PUSH},
        {"job", required_argument, NULL, OPT_JOB},
        {"instance", required_argument, NULL, OPT_INSTANCE},
        {"check", required_argument, NULL, OPT_CHECK},
        {NULL, 0, NULL, 0},
    };
    struct cli_getopt g = {.takes =
                               CLI_TAKES_TOP | CLI_TAKES_PID | CLI_TAKES_THREAD | CLI_TAKES_SYM,
                           .own = own,
                           .usage = usage};
    struct out o = {.f = stdout};
    struct push push = {.job = "memscribe"};
    struct checks checks = {0};
    struct cli_ana a;
    bool index = false;
    int c;

    cli_ana_init(&a, "metrics", DEFAULT_SITES);
    while ((c = cli_getopt(&g, &a, argc, argv)) != -1) {
        if (c == OPT_LABEL)
            add_label(&o, optarg);
        else if (c == OPT_INDEX)
            index = true;
        else if (c == OPT_PUSH)
            push.url = optarg;
        else if (c == OPT_JOB)
            push.job = optarg;
        else if (c == OPT_INSTANCE)
            push.instance = optarg;
        else if (c == OPT_CHECK)
            add_check(&checks, optarg);
    }
    if (checks.argc) { /* check's usage errors before any output (its getopt: ours after) */
        int first = optind;
        checks.argv[checks.argc] = "TRACE";
        cli_check_run(checks.argc + 1, checks.argv, NULL, true);
        optind = first;
    }
    if (push.url && !(o.f = open_memstream(&push.body, &push.len)))
        cli_die("metrics: out of memory");
    /* What the trace is (cut short: still being written; sampled, ...) as
     * comments of the output, not on stderr once a scrape */
    a.notes_in_output = true;
    cli_ana_open(&a, argc, argv, optind);
    cli_ana_open_notes(&a, note_comment, o.f);
    struct ana_model_options mo = {.filter = &a.filter};
    struct ana_query q = {.mo = &mo, .until_ns = UINT64_MAX, .prefer_index = index};
    struct ana_model *m = cli_ana_answer(&a, &q);
    write_scopes(&o, &a, m, ana_sample_has_temporary(fmt_reader_sample_bytes(a.r)));
    if (fmt_reader_has_counters(a.r))
        write_exact(&o, &a, m);
    write_sites(&o, &a, m, a.top);
    ana_model_destroy(m);
    write_checks(&o, &checks, a.path);
    if (push.url)
        push_out(&push, o.f);
    else if (fflush(stdout) || ferror(stdout))
        cli_die("metrics: cannot write the output");
    return cli_ana_close(&a);
}
