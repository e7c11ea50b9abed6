/* SPDX-License-Identifier: MIT */
/* Shared plumbing of the analysis subcommands (see cli_ana.h). */
#include "cli/cli_ana.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/core/ana_aggregate.h"
#include "analysis/core/ana_attach.h"
#include "analysis/core/ana_map.h"
#include "analysis/core/ana_sample.h"
#include "analysis/core/ana_scan.h"
#include "analysis/core/ana_segment.h"
#include "analysis/core/ana_text.h"
#include "analysis/model/ana_fold.h"
#include "analysis/model/ana_heap_replay.h"
#include "analysis/plan/ana_plan.h"
#include "cli/cli.h"
#include "util/util_array.h"

void cli_ana_init(struct cli_ana *a, const char *cmd, unsigned default_top)
{
    memset(a, 0, sizeof(*a));
    a->cmd = cmd;
    a->top = default_top;
    ana_filter_init(&a->filter);
    a->progress = isatty(STDERR_FILENO);
    ana_map_init(&a->apart, sizeof(uint8_t));
}

unsigned long cli_ana_number(struct cli_ana *a, const char *opt, const char *arg)
{
    char *end;

    errno = 0;
    unsigned long v = strtoul(arg, &end, 10);
    if (errno || *end || !*arg || arg[0] == '-' || v > UINT32_MAX)
        cli_usage_error("%s: %s wants a number, not '%s'; see 'memscribe %s --help'", a->cmd, opt,
                        arg, a->cmd);
    return v;
}

unsigned cli_ana_choice(const struct cli_ana *a, const char *opt, const char *arg,
                        const char *const *names)
{
    char list[256];
    size_t len = 0;
    unsigned i, n = 0;

    while (names[n])
        n++;
    for (i = 0; i < n; i++) {
        if (!strcmp(arg, names[i]))
            return i;
    }
    list[0] = 0;
    for (i = 0; i < n && len < sizeof(list); i++) {
        const char *sep = i == 0 ? "" : i + 1 == n ? " or " : ", ";
        int w = snprintf(list + len, sizeof(list) - len, "%s%s", sep, names[i]);

        len += w > 0 ? (size_t)w : 0;
    }
    cli_usage_error("%s: --%s wants %s, not '%s'", a->cmd, opt, list, arg);
}

bool cli_ana_option(struct cli_ana *a, int c, const char *arg)
{
    switch (c) {
    case CLI_ANA_OPT_FORMAT:
        if (!strcmp(arg, "text"))
            a->format = CLI_FMT_TEXT;
        else if (!strcmp(arg, "json"))
            a->format = CLI_FMT_JSON;
        else if (!strcmp(arg, "csv"))
            a->format = CLI_FMT_CSV;
        else
            cli_usage_error("%s: unknown --format '%s' (text, json or csv)", a->cmd, arg);
        return true;
    case CLI_ANA_OPT_TOP:
        a->top = (unsigned)cli_ana_number(a, "--top", arg);
        return true;
    case CLI_ANA_OPT_SUPPRESS:
        if (a->supp.nr_files == CLI_SUPP_MAX_FILES)
            cli_usage_error("%s: at most %d --suppress files", a->cmd, CLI_SUPP_MAX_FILES);
        a->supp.files[a->supp.nr_files++] = arg;
        return true;
    case CLI_ANA_OPT_LSAN_SUPP:
        if (a->supp.nr_lsan_files == CLI_SUPP_MAX_FILES)
            cli_usage_error("%s: at most %d --lsan-suppressions files", a->cmd, CLI_SUPP_MAX_FILES);
        a->supp.lsan_files[a->supp.nr_lsan_files++] = arg;
        return true;
    case CLI_ANA_OPT_NO_DEFAULT_SUPP:
        a->supp.no_defaults = true;
        return true;
    case CLI_ANA_OPT_BY_PROCESS:
        a->by_process = true;
        return true;
    case CLI_ANA_OPT_FRAMES:
        a->frames = (unsigned)cli_ana_number(a, "--frames", arg);
        a->frames_set = true;
        return true;
    case CLI_ANA_OPT_PID:
        if (ana_filter_add_pids(&a->filter, arg))
            cli_usage_error("%s: --pid wants process ids like 123 or 123,456, not '%s'", a->cmd,
                            arg);
        return true;
    case CLI_ANA_OPT_EXE:
        if (ana_filter_add_exe(&a->filter, arg))
            cli_usage_error("%s: --exe wants an executable name or glob like cc1 or 'python3*'",
                            a->cmd);
        return true;
    case CLI_ANA_OPT_THREAD:
        if (ana_filter_add_tids(&a->filter, arg))
            cli_usage_error("%s: --thread wants thread ids like 123 or 123,456, not '%s'", a->cmd,
                            arg);
        return true;
    default:
        return cli_sym_option(a->cmd, c, arg, &a->sym);
    }
}

static bool has_tid(const struct ana_filter *f, uint32_t tid)
{
    for (size_t i = 0; i < f->nr_tids; i++) {
        if (f->tids[i] == tid)
            return true;
    }
    return false;
}

/* --pid, --exe or --thread that selects nothing in the trace is a mistake
 * (a wrong id, or the trace of another run), not an empty answer. */
static void check_selection(struct cli_ana *a)
{
    struct ana_filter *f = &a->filter;
    bool pid_hit = false, tid_hit = false;
    long exe_hits = ana_filter_resolve_exes(f, a->r);

    if (exe_hits < 0)
        cli_ana_fail(a, (int)exe_hits);
    if (f->nr_exes && !exe_hits)
        cli_die("%s: %s: no process of --exe is in the trace", a->cmd, a->path);
    for (uint32_t i = 0; f->nr_pids && i < fmt_reader_nr_images(a->r); i++)
        pid_hit |= ana_filter_image(f, i, fmt_reader_image(a->r, i)->pid);
    if (f->nr_pids && !pid_hit)
        cli_die("%s: %s: no process of --pid%s is in the trace", a->cmd, a->path,
                f->nr_exes ? " and --exe" : "");
    for (uint32_t i = 0; f->nr_tids && i < fmt_reader_nr_threads(a->r); i++) {
        const struct fmt_thread_info *t = fmt_reader_thread(a->r, i);
        tid_hit |= ana_filter_image(f, t->image, t->pid) && has_tid(f, t->tid);
    }
    if (f->nr_tids && !tid_hit)
        cli_die("%s: %s: no thread of --thread is in the trace%s", a->cmd, a->path,
                f->nr_pids ? " (in the processes of --pid)" : "");
}

static void warn_note(void *arg, const char *note)
{
    const struct cli_ana *a = arg;

    cli_warn("%s: %s: %s", a->cmd, a->path, note);
}

void cli_ana_open_notes(struct cli_ana *a, cli_ana_note_fn *fn, void *arg)
{
    struct fmt_trace_counts c;
    char note[96];

    fmt_reader_counts(a->r, &c);
    if (fmt_reader_incomplete(a->r))
        fn(arg, "the trace is incomplete (the recorder did not finish it); the results cover what "
                "it holds");
    if (c.nr_dropped) {
        snprintf(note, sizeof(note), "the collector dropped %llu events; numbers may be off",
                 (unsigned long long)c.nr_dropped);
        fn(arg, note);
    }
    cli_ana_trace_notes(a, fn, arg);
}

void cli_ana_open(struct cli_ana *a, int argc, char **argv, int optind_now)
{
    char err[600];
    int rc;

    if (optind_now != argc - 1)
        cli_usage_error(
            "%s: %s; see 'memscribe %s --help'", a->cmd,
            optind_now >= argc ? "no trace file given" : "more than one trace file given", a->cmd);
    a->path = argv[optind_now];
    if ((rc = fmt_reader_open_flags(&a->r, a->path, a->stacks_later ? FMT_OPEN_STACKS_LATER : 0,
                                    err, sizeof(err))))
        cli_die("%s: %s", a->cmd, err);
    a->letgo.r = a->r;
    /* Said once: in the output when it has a place for them, else here. */
    if (!a->notes_in_output)
        cli_ana_open_notes(a, warn_note, a);
    check_selection(a);
}

void cli_ana_trace_notes(struct cli_ana *a, cli_ana_note_fn *fn, void *arg)
{
    const struct fmt_trace_info *info = fmt_reader_info(a->r);
    char note[ANA_SEGMENT_NOTE_SIZE > ANA_AGGREGATE_NOTE_SIZE ? ANA_SEGMENT_NOTE_SIZE
                                                              : ANA_AGGREGATE_NOTE_SIZE];

    if (fmt_reader_sample_bytes(a->r))
        fn(arg, (fmt_reader_has_counters(a->r) ? ana_sample_note_counted : ana_sample_note)(
                    note, sizeof(note), fmt_reader_sample_bytes(a->r)));
    if (info->attached_pid)
        fn(arg, ana_attach_note(note, sizeof(note), info->attached_pid));
    if (info->aggregate_ns)
        fn(arg, ana_aggregate_note(note, sizeof(note), info));
    if (info->keep_last_ns)
        fn(arg, ana_segment_note(note, sizeof(note), info));
}

struct ana_stacks *cli_ana_stacks(struct cli_ana *a)
{
    struct ana_sym_options so = cli_sym_options(&a->sym);
    int rc;

    if (!a->stacks && (rc = ana_stacks_create(&a->stacks, a->r, &so)))
        cli_die("%s: %s: cannot start the symbolizer: %s", a->cmd, a->path, strerror(-rc));
    a->letgo.stacks = a->stacks; /* its nodes go with the processes' stacks */
    return a->stacks;
}

void cli_ana_supp_load(struct cli_ana *a)
{
    struct cli_supp *s = &a->supp;
    char err[512] = "";
    int rc = 0;

    if (s->loaded)
        return;
    s->loaded = true;
    if (!s->no_defaults)
        rc = ana_supp_add_defaults(&s->rules);
    for (unsigned i = 0; i < s->nr_files && !rc; i++)
        rc = ana_supp_load_file(&s->rules, s->files[i], false, err, sizeof(err));
    for (unsigned i = 0; i < s->nr_lsan_files && !rc; i++)
        rc = ana_supp_load_file(&s->rules, s->lsan_files[i], true, err, sizeof(err));
    if (rc)
        cli_die("%s: %s", a->cmd, err[0] ? err : "out of memory"); /* -ENOMEM has no why */
}

bool cli_ana_suppressed(struct cli_ana *a, uint32_t stack)
{
    int rc;
    bool hit = ana_supp_match(&a->supp.rules, a->r, cli_ana_stacks(a), stack, &rc) != NULL;

    if (rc)
        cli_ana_fail(a, rc);
    return hit;
}

const uint8_t *cli_ana_classes(struct cli_ana *a, const struct ana_frame *f, unsigned n)
{
    if (UTIL_ARRAY_RESERVE(a->cls, a->cap_cls, (size_t)n + 1, 64))
        cli_die("%s: out of memory", a->cmd);
    ana_stacks_classes(cli_ana_stacks(a), f, n, a->cls);
    return a->cls;
}

/* The string of a mark: "[N library frames]" (a run folded) or "... N
 * more" (callers cut). */
static const char *mark(struct cli_ana *a, bool run, unsigned n)
{
    char text[64];
    uint32_t id;

    if (run)
        ana_interest_mark(text, sizeof(text), n);
    else
        snprintf(text, sizeof(text), "... %u more", n);
    if (ana_stacks_intern(a->stacks, text, &id))
        cli_die("%s: out of memory", a->cmd);
    return ana_stacks_str(a->stacks, id);
}

/* How much more of its stack a text row shows to read otherwise than the
 * rows beside it (cli_ana_apart): all its items, and the frames of the runs
 * folded after its frame of interest. Never before it: a row's frame of
 * interest stays where it was, so rows of other frames of interest still
 * differ early (the leaf's wrappers and library run, where two rows of one
 * frame of interest may differ, stay folded: --all-frames shows them). */
enum apart { APART_NONE, APART_MORE };

static enum apart apart_of(const struct cli_ana *a, uint32_t stack)
{
    const uint8_t *v = ana_map_get(&a->apart, (uint64_t)stack + 1);

    return v ? (enum apart) * v : APART_NONE;
}

/* A stack's row in text (ana_interest_row): the leaf's side folded down to
 * the frame of interest, runs of library frames folded, the entry chain
 * left out, at most max items, "... N more" for the callers cut; with
 * APART_MORE (cli_ana_apart), every item and the runs after the frame of
 * interest unfolded. */
static unsigned text_row(struct cli_ana *a, const struct ana_frame *f, unsigned n, unsigned max,
                         enum apart more)
{
    struct ana_interest_item *items = malloc(((size_t)n + 1) * sizeof(*items));
    struct ana_interest_row row;
    unsigned k = 0;

    if (!items)
        cli_die("%s: out of memory", a->cmd);
    ana_interest_row(cli_ana_classes(a, f, n), n, more ? 0 : max, items, &row);
    for (unsigned i = 0; i < row.nr_items; i++) {
        if (items[i].first == row.interest)
            a->interest = k;
        if (items[i].folded && (!more || items[i].first < row.interest))
            a->list[k++] = (char *)mark(a, true, items[i].nr);
        else
            for (unsigned j = items[i].first; j < items[i].first + items[i].nr; j++)
                a->list[k++] = (char *)ana_stacks_str(a->stacks, f[j].place);
    }
    if (row.nr_more)
        a->list[k++] = (char *)mark(a, false, row.nr_more);
    free(items);
    return k;
}

/* A whole stack (JSON, CSV, --all-frames), or its first max frames and
 * "... N more". */
static unsigned whole_row(struct cli_ana *a, const struct ana_frame *f, unsigned n, unsigned max)
{
    unsigned keep = max && n > max ? max : n, k = 0;

    a->interest = ana_interest_find(cli_ana_classes(a, f, n), n);
    for (unsigned i = 0; i < keep; i++)
        a->list[k++] = (char *)ana_stacks_str(a->stacks, f[i].place);
    if (keep < n)
        a->list[k++] = (char *)mark(a, false, n - keep);
    return k;
}

const char *const *cli_ana_stack(struct cli_ana *a, uint32_t stack, bool top_down, unsigned max,
                                 unsigned *nr)
{
    struct ana_stacks *s = cli_ana_stacks(a);
    const struct ana_frame *f;
    int n = ana_stacks_get(s, stack, &f);
    unsigned k;

    if (n < 0)
        cli_die("%s: %s: stack %u: %s", a->cmd, a->path, stack,
                n == -EINVAL ? "not in the trace" : strerror(-n));
    free(a->list);
    a->list = malloc(((size_t)n + 2) * sizeof(*a->list));
    if (!a->list)
        cli_die("%s: out of memory", a->cmd);
    a->interest = 0;
    if (a->frames_set)
        max = a->frames;
    if (n == 0) {
        a->list[0] = (char *)ana_stacks_str(s, 0);
        k = 1;
    } else if (a->format == CLI_FMT_TEXT && !a->sym.so.show_internal) {
        /* a row of one item is a label: the frame of interest alone */
        k = text_row(a, f, (unsigned)n, max, max == 1 ? APART_NONE : apart_of(a, stack));
    } else {
        /* machine output and --all-frames: every frame, as recorded */
        k = whole_row(a, f, (unsigned)n,
                      a->format != CLI_FMT_TEXT ? max
                      : a->frames_set           ? a->frames
                                                : 0);
    }
    if (top_down) { /* root first: "... N more" leads */
        for (unsigned i = 0; i < k / 2; i++) {
            char *t = a->list[i];
            a->list[i] = a->list[k - 1 - i];
            a->list[k - 1 - i] = t;
        }
        a->interest = k - 1 - a->interest;
    }
    a->nr_list = k;
    *nr = k;
    return (const char *const *)a->list;
}

/* A row's text, joined, for cli_ana_apart. */
static char *row_text(struct cli_ana *a, uint32_t stack, unsigned max)
{
    unsigned nr;
    const char *const *fr = cli_ana_stack(a, stack, false, max, &nr);
    size_t len = 1;

    for (unsigned i = 0; i < nr; i++)
        len += strlen(fr[i]) + 3;
    char *t = malloc(len), *p = t;
    if (!t)
        cli_die("%s: out of memory", a->cmd);
    for (unsigned i = 0; i < nr; i++)
        p += sprintf(p, "%s%s", i ? " < " : "", fr[i]);
    *p = '\0';
    return t;
}

struct apart_row {
    char *text;  /* as the row reads now */
    char *whole; /* with every item shown: rows alike there stay alike */
    uint32_t stack;
};

static int by_text(const void *x, const void *y)
{
    const struct apart_row *p = x, *q = y;
    int c = strcmp(p->text, q->text);

    return c ? c : strcmp(p->whole, q->whole);
}

void cli_ana_apart(struct cli_ana *a, const uint32_t *stacks, unsigned n, unsigned max)
{
    if (a->frames_set)
        max = a->frames;
    if (a->format != CLI_FMT_TEXT || a->sym.so.show_internal || n < 2 || max == 1)
        return;
    struct apart_row *v = calloc(n, sizeof(*v));
    if (!v)
        cli_die("%s: out of memory", a->cmd);
    /* each table decides its rows' anew */
    for (unsigned i = 0; i < n; i++) {
        v[i].stack = stacks[i];
        ana_map_del(&a->apart, (uint64_t)stacks[i] + 1);
    }
    /* Each row as it reads with every item shown (APART_MORE), then
     * rounds: rows that read alike but would not so show more. */
    for (unsigned i = 0; i < n; i++) {
        uint8_t *lv = ana_map_put(&a->apart, (uint64_t)v[i].stack + 1, NULL);
        if (!lv)
            cli_die("%s: out of memory", a->cmd);
        *lv = APART_MORE;
        v[i].whole = row_text(a, v[i].stack, max);
        *lv = APART_NONE;
    }
    for (bool changed = true; changed;) {
        changed = false;
        for (unsigned i = 0; i < n; i++) {
            free(v[i].text);
            v[i].text = row_text(a, v[i].stack, max);
        }
        qsort(v, n, sizeof(*v), by_text);
        for (unsigned i = 0, j; i < n; i = j) {
            for (j = i + 1; j < n && !strcmp(v[i].text, v[j].text); j++)
                ;
            if (j - i < 2 || !strcmp(v[i].whole, v[j - 1].whole))
                continue; /* one row, or alike however shown */
            for (unsigned k = i; k < j; k++) {
                uint8_t *lv = ana_map_put(&a->apart, (uint64_t)v[k].stack + 1, NULL);
                if (!lv)
                    cli_die("%s: out of memory", a->cmd);
                if (*lv < APART_MORE) {
                    ++*lv;
                    changed = true;
                }
            }
        }
    }
    for (unsigned i = 0; i < n; i++) {
        free(v[i].text);
        free(v[i].whole);
    }
    free(v);
}

void cli_ana_progress(void *arg, uint64_t ts_ns, uint64_t last_ns)
{
    struct cli_ana *a = arg;

    if (!a->progress)
        return;
    unsigned pct = last_ns ? (unsigned)(ts_ns * 100 / last_ns) : 100;
    fprintf(stderr, "\r%s: %u%%", a->cmd, pct > 100 ? 100 : pct);
    a->progress_shown = true;
}

void cli_ana_progress_done(struct cli_ana *a)
{
    if (a->progress_shown)
        fputs("\r\033[K", stderr);
    a->progress_shown = false;
}

void cli_ana_image_name(struct cli_ana *a, uint32_t image, char *buf, size_t size)
{
    const struct fmt_image_info *ii = fmt_reader_image(a->r, image);

    if (!ii) {
        snprintf(buf, size, "image %u", image);
        return;
    }
    const char *exe = ii->exe ? ii->exe : "";
    const char *base = strrchr(exe, '/');
    base = base ? base + 1 : exe;
    char safe[4 * 256];
    ana_text_escape(safe, sizeof(safe), base, strlen(base));
    if (*base)
        snprintf(buf, size, "pid %u %s", ii->pid, safe);
    else
        snprintf(buf, size, "pid %u", ii->pid);
}

void cli_ana_json_begin(struct cli_ana *a, struct ana_json *j)
{
    cli_ana_json_begin_on(a, j, stdout);
}

static void json_note(void *arg, const char *note)
{
    ana_json_str(arg, note);
}

void cli_ana_json_begin_on(struct cli_ana *a, struct ana_json *j, FILE *out)
{
    ana_json_init(j, out, true);
    ana_json_begin_object(j);
    ana_json_kv_str(j, "file", a->path);
    ana_sample_json(j, fmt_reader_sample_bytes(a->r));
    ana_attach_json(j, fmt_reader_info(a->r)->attached_pid);
    ana_aggregate_json(j, fmt_reader_info(a->r));
    ana_segment_json(j, fmt_reader_info(a->r));
    ana_json_key(j, "trace_notes");
    ana_json_begin_array(j);
    cli_ana_open_notes(a, json_note, j);
    ana_json_end_array(j);
}

void cli_ana_image_json(struct cli_ana *a, struct ana_json *j, uint32_t image)
{
    const struct fmt_image_info *ii = fmt_reader_image(a->r, image);

    ana_json_kv_u64(j, "image", image);
    ana_json_kv_u64(j, "pid", ii ? ii->pid : 0);
    ana_json_key(j, "exe");
    if (ii && ii->exe)
        ana_json_strn(j, ii->exe, ii->exe_len);
    else
        ana_json_null(j);
}

void cli_ana_table(struct cli_ana *a, const struct ana_table *t, FILE *out, const char *indent,
                   bool csv_header)
{
    int rc = 0;
    struct ana_json j;

    switch (a->format) {
    case CLI_FMT_TEXT:
        rc = ana_table_write_text_marked(t, out, indent, " < ",
                                         ana_sample_mark(fmt_reader_sample_bytes(a->r)));
        break;
    case CLI_FMT_CSV:
        rc = ana_table_write_csv(t, out, csv_header);
        break;
    case CLI_FMT_JSON:
        ana_json_init(&j, out, true);
        ana_table_write_json(t, &j);
        rc = ana_json_finish(&j);
        break;
    }
    if (rc)
        cli_die("%s: writing the output: %s", a->cmd, strerror(-rc));
}

void cli_ana_fail(struct cli_ana *a, int rc)
{
    cli_ana_progress_done(a);
    if (rc == -EPROTO || rc == -EIO)
        cli_die("%s: %s", a->cmd, fmt_reader_error(a->r));
    if (rc == -ESTALE) /* cli_fold.c let the process's stacks go at its exit */
        cli_die("%s: %s (an event after its process's exit; MEMSCRIBE_FOLD=0 keeps every "
                "process's stacks)",
                a->cmd, fmt_reader_error(a->r));
    cli_die("%s: %s: %s", a->cmd, a->path, strerror(-rc));
}

void cli_ana_want_temporary(struct cli_ana *a, const char *what)
{
    if (!ana_sample_has_temporary(fmt_reader_sample_bytes(a->r)))
        cli_die("%s: %s: %s: " ANA_SAMPLE_NO_TEMPORARY_WHY, a->cmd, a->path, what);
}

unsigned cli_ana_jobs(void)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    const char *jobs = getenv("MEMSCRIBE_JOBS");

    if (jobs && *jobs)
        cpus = strtol(jobs, NULL, 10);
    return cpus < 1 ? 1 : cpus > 16 ? 16 : (unsigned)cpus;
}

uint64_t cli_ana_range_events(void)
{
    const char *range = getenv("MEMSCRIBE_RANGE_EVENTS");

    return range && *range ? strtoull(range, NULL, 10) : 0;
}

struct ana_model *cli_ana_answer(struct cli_ana *a, struct ana_query *q)
{
    struct ana_plan p;
    struct ana_model *m;
    char err[600];
    int rc;

    q->nr_threads = cli_ana_jobs();
    q->min_range_events = cli_ana_range_events();
    q->progress = cli_ana_progress;
    q->progress_arg = a;
    rc = ana_plan_model(a->r, a->path, q, &m, &p, err, sizeof(err));
    cli_ana_progress_done(a);
    if (p.asked)
        cli_warn("%s: --index: %s; replaying the trace", a->cmd, p.asked->why);
    if (rc == -EBADMSG)
        cli_die("%s: %s: %s", a->cmd, a->path, err);
    if ((rc == -EPROTO || rc == -EIO) && err[0])
        cli_die("%s: %s", a->cmd, err);
    if (rc)
        cli_ana_fail(a, rc);
    if (a->fold && q->mo && q->mo->retire.fn) /* the fold the model retired into */
        ana_fold_finish(a->fold, m);
    return m;
}

struct ana_model *cli_ana_model(struct cli_ana *a, const struct ana_model_options *mo,
                                uint64_t until_ns)
{
    struct ana_query q = {.mo = mo, .until_ns = until_ns};

    return cli_ana_answer(a, &q);
}

uint64_t cli_ana_peak(struct cli_ana *a)
{
    if (!a->have_peak) {
        struct ana_model_options mo = {.filter = &a->filter};
        /* The peak is the replay's to find: the index holds no peak. */
        struct ana_model *m = cli_ana_model(a, &mo, UINT64_MAX);

        a->peak_ns = ana_model_total(m)->peak_ns;
        a->have_peak = true;
        ana_model_destroy(m);
    }
    return a->peak_ns;
}

uint64_t cli_ana_time(struct cli_ana *a, const char *opt, const struct ana_time_point *p)
{
    struct fmt_trace_counts c;
    char b[64];

    fmt_reader_counts(a->r, &c);
    uint64_t base = p->base == ANA_TIME_PEAK  ? cli_ana_peak(a)
                    : p->base == ANA_TIME_END ? c.last_ts_ns
                                              : 0;
    uint64_t t = ana_time_resolve(p, base, c.last_ts_ns);
    if (p->offset_ns > 0 && base + (uint64_t)p->offset_ns > c.last_ts_ns)
        cli_warn("%s: %s is past the end of the trace (%s): the end is used", a->cmd, opt,
                 ana_time_format(c.last_ts_ns, b, sizeof(b)));
    else if (p->offset_ns < 0 && (uint64_t)-p->offset_ns > base)
        cli_warn("%s: %s is before the start of the trace: the start (0s) is used", a->cmd, opt);
    return t;
}

uint64_t cli_ana_cut(struct cli_ana *a, const char *opt, uint64_t t, bool up)
{
    struct fmt_trace_counts c;
    char b1[64], b2[64];

    fmt_reader_counts(a->r, &c);
    uint64_t cut = ana_aggregate_cut(fmt_reader_info(a->r), c.last_ts_ns, t, up);
    if (cut != t)
        cli_warn("%s: %s: %s %s falls inside an interval of the aggregated trace: %s is used, "
                 "the cut %s it",
                 a->cmd, a->path, opt, ana_time_format(t, b1, sizeof(b1)),
                 ana_time_format(cut, b2, sizeof(b2)), up ? "after" : "before");
    return cut;
}

void cli_ana_scan_options(struct cli_ana *a, uint64_t until_ns, struct ana_scan_options *so)
{
    ana_scan_options_init(so);
    so->until_ns = until_ns;
    so->progress = cli_ana_progress;
    so->progress_arg = a;
}

void cli_ana_run(struct cli_ana *a, struct ana_heap_replay *p, uint64_t until_ns)
{
    struct ana_scan_options so;
    int rc;

    cli_ana_scan_options(a, until_ns, &so);
    rc = ana_heap_replay_run(p, a->r, &so);
    cli_ana_progress_done(a);
    if (rc)
        cli_ana_fail(a, rc);
}

void cli_ana_scan(struct cli_ana *a, uint64_t until_ns, ana_event_fn *fn, void *arg)
{
    struct ana_scan_options so;
    int rc;

    cli_ana_scan_options(a, until_ns, &so);
    rc = ana_scan(a->r, &so, fn, arg);
    cli_ana_progress_done(a);
    if (rc)
        cli_ana_fail(a, rc);
}

void cli_ana_programs(struct cli_ana *a, struct ana_model_options *mo)
{
    if (ana_programs_make(&a->programs, a->r, &a->filter))
        cli_die("%s: out of memory", a->cmd);
    a->by_program = !a->by_process && ana_programs_merge(&a->programs);
    if (a->by_program && mo)
        mo->programs = &a->programs;
}

const char *cli_ana_program_exe(const struct cli_ana *a, uint32_t k, char *buf, size_t size)
{
    const struct ana_program *pg = &a->programs.v[k];

    if (!pg->exe)
        return "(unknown)";
    ana_text_escape(buf, size, pg->exe, pg->exe_len);
    return buf;
}

void cli_ana_program_name(const struct cli_ana *a, uint32_t k, bool short_name, char *buf,
                          size_t size)
{
    const struct ana_program *pg = &a->programs.v[k];
    char path[256];
    const char *exe = cli_ana_program_exe(a, k, path, sizeof(path));

    if (short_name && strrchr(exe, '/'))
        exe = strrchr(exe, '/') + 1;
    if (pg->nr_images > 1)
        snprintf(buf, size, "%s (%" PRIu32 " processes)", exe, pg->nr_images);
    else
        snprintf(buf, size, "%s", exe);
}

void cli_ana_program_json(const struct cli_ana *a, struct ana_json *j, uint32_t k)
{
    const struct ana_program *pg = &a->programs.v[k];

    ana_json_key(j, "exe");
    if (pg->exe)
        ana_json_strn(j, pg->exe, pg->exe_len);
    else
        ana_json_null(j);
    ana_json_kv_u64(j, "processes", pg->nr_images);
}

void cli_ana_fold_release(struct cli_ana *a)
{
    if (a->fold)
        ana_fold_release(a->fold);
    free(a->fold);
    a->fold = NULL;
    ana_letgo_release(&a->letgo);
}

int cli_ana_close(struct cli_ana *a)
{
    int bad = fflush(stdout) || ferror(stdout);

    /* Notes go with text; asked for (--verbose), on stderr with any format */
    if (a->stacks && (a->format == CLI_FMT_TEXT || a->sym.so.verbose)) {
        struct ana_sym *s = ana_stacks_sym(a->stacks);
        for (size_t i = 0; i < ana_sym_nr_notes(s); i++)
            cli_warn("%s: note: %s", a->cmd, ana_sym_note(s, i));
    }
    cli_ana_fold_release(a);
    ana_stacks_destroy(a->stacks);
    fmt_reader_close(a->r);
    ana_filter_release(&a->filter);
    ana_programs_release(&a->programs);
    ana_supp_release(&a->supp.rules);
    a->supp.loaded = false;
    free(a->list);
    free(a->cls);
    ana_map_release(&a->apart);
    if (bad)
        cli_die("%s: writing the output failed", a->cmd);
    return CLI_EXIT_OK;
}
