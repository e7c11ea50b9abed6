/* SPDX-License-Identifier: MIT */
/* memscribe record: parse the options, choose the way of recording (a
 * program to run, a Windows one, a running process to attach to, the
 * recorder a collector starts itself), let the recording session run it
 * (src/recorder/rec_session.h), and print what it says and its summary. */
#include <getopt.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/cli_http.h"
#include "cli/cli_live.h"
#include "cli/cli_metrics.h"
#include "cli/cli_push_tap.h"
#include "cli/cli_serve_token.h"
#include "cli/cli_snap.h"
#include "format/fmt_shm.h"
#include "format/fmt_writer.h"
#include "recorder/rec_session.h"
#include "util/util_duration.h"
#include "util/util_size.h"

#define RECORD_MAX_CHECKS 64
#define RECORD_AGGREGATE_DEFAULT_NS 1000000000ull /* --aggregate's period: a second */

/* What the options ask. */
struct record_opts {
    struct rec_options rec; /* the session's */
    int quiet, serve, vm_precise;
    pid_t pid; /* -p, or --serve's first program */
    uint64_t duration_ns, snap_every_ns;
    const char *keep_last_text; /* --keep-last's D as given */
    int live;                   /* --live or --metrics: the server's options in live_* */
    int live_asked;             /* --live itself: a page may follow to the end */
    const char *live_listen, *live_port, *live_url_file;
    /* --metrics [ADDR:]PORT: the live server there (live set, ADDR in
     * metrics_addr, PORT in live_port), with these token file and labels */
    int metrics;
    char metrics_addr[64];
    const char *metrics_token_file;
    const char *metrics_labels[CLI_LIVE_MAX_LABELS];
    unsigned nr_metrics_labels;
    /* --push-metrics URL, --push-job NAME, --push-every T */
    struct cli_push_tap push;
    const char *check[RECORD_MAX_CHECKS]; /* --check OPT[=VALUE]: memscribe check's --OPT */
    unsigned nr_check;
};

static void print_help(void)
{
    printf("usage: memscribe record [-o FILE] [--depth N] [--time-unit U] [--no-follow]\n"
           "                        [--only GLOB] [--sample BYTES] [--vm-precise]\n"
           "                        [--reach [--reach-copy SIZE]] [--totals]\n"
           "                        [--aggregate[=PERIOD]] [--max-size SIZE]\n"
           "                        [--keep-last D -o FILE] [--quiet]\n"
           "                        [--snapshot-every T -o DIR] [--check OPT[=VALUE]...]\n"
           "                        [--] CMD [ARGS...]\n"
           "       memscribe record -p PID [-o FILE] [--duration T] [--depth N]\n"
           "                        [--sample BYTES] [--time-unit U] [--reach]\n"
           "                        [--reach-copy SIZE] [--aggregate[=PERIOD]] [--quiet]\n"
           "\n"
           "Run CMD with the collector preloaded and record every malloc-family and\n"
           "mmap-family call it makes, with stack, thread and time, into a trace file.\n"
           "Children it forks are traced into their own streams, and so are programs\n"
           "they exec (unless --no-follow). The exit status is CMD's (128+N if signal\n"
           "N killed it). A Windows program (a PE file) runs under Wine with the\n"
           "Windows collector, its events streamed to this recorder (docs/windows.md).\n"
           "\n"
           "options:\n"
           "  -o, --output FILE  trace file (default: <program>.<pid>.mscr here)\n"
           "      --aggregate[=PERIOD]  an aggregated trace: cut time into intervals of\n"
           "                     PERIOD (default 1s; 100ms, 5s, ...); blocks live at a\n"
           "                     cut are written as they are, those born and freed\n"
           "                     inside one interval are counted per thread, call site\n"
           "                     and size class. Its size grows with sites, intervals\n"
           "                     and long-lived blocks, not with calls; the reports'\n"
           "                     totals, temporaries, peak and leaks stay exact\n"
           "                     (docs/aggregate.md). Not with --sample\n"
           "      --max-size SIZE  exact until the trace reaches SIZE (K, M, G), then\n"
           "                     aggregated from the next cut on (at --aggregate's\n"
           "                     PERIOD, default 1s); record says when it switched\n"
           "      --keep-last D  a flight recorder: the trace aggregated (at\n"
           "                     --aggregate's PERIOD, default 1s) and, in TRACE.last/,\n"
           "                     the last D (10m, 1h) exact, in segments of D/2 that\n"
           "                     each stand alone; at least D is kept, at most D and\n"
           "                     a segment, and record says how much\n"
           "                     (docs/aggregate.md: Flight recorder)\n"
           "  -p, --pid PID      attach to the running process PID instead: load the\n"
           "                     collector into it (ptrace, a moment's stop), record\n"
           "                     until it exits, --duration ends or Ctrl-C detaches;\n"
           "                     it then runs on untraced. The trace starts mid-run:\n"
           "                     blocks from before are unknown (docs/record-attach.md)\n"
           "      --duration T   with -p: detach after T (seconds, or 500ms, 2m, 1h)\n"
           "      --depth N      frames kept per stack, 1-%d (default %d)\n"
           "      --time-unit U  resolution of event times: ns, us, ms, or a count\n"
           "                     of them (default 10us); events keep their exact\n"
           "                     order whatever the unit (docs/format.md)\n"
           "      --no-follow    trace only CMD's own image: no exec'd programs,\n"
           "                     no forked children\n"
           "      --reach        at each process's exit, stop it a moment and class its\n"
           "                     live heap blocks as memcheck does (definitely,\n"
           "                     indirectly, possibly lost, still reachable) for leaks,\n"
           "                     report and check (docs/leaks.md); needs ptrace. With\n"
           "                     -p: at the detach (live blocks), or at the exit.\n"
           "                     kill -USR1 to record: class them now (leaks --at).\n"
           "                     The recorder copies up to 1 GiB of the process's heap\n"
           "                     for the search (its own memory grows by that much)\n"
           "      --reach-copy SIZE  copy at most SIZE (K, M, G) with --reach; 0 copies\n"
           "                     nothing: blocks are read from the stopped process as\n"
           "                     needed (slower, so the program stays stopped longer)\n"
           "      --totals       each chunk of the trace also holds its totals (format\n"
           "                     1.10): report, timeline and serve's first view answer\n"
           "                     from them on a long trace, not from every event\n"
           "                     (docs/report.md, \"--index\"); costs the recorder about\n"
           "                     10 %% more instructions on an allocation storm\n"
           "      --only GLOB    trace only the processes whose executable's file name\n"
           "                     (symbolic links followed) or argv[0]'s last part\n"
           "                     matches GLOB (fnmatch: cc1, 'hog*'); the others run\n"
           "                     untraced but pass the collector on to their children\n"
           "  -q, --quiet        no summary on stderr\n"
           "      --sample BYTES record a sample of the heap blocks: each byte allocated\n"
           "                     is a sampling point with probability 1/BYTES (K, M, G:\n"
           "                     KiB, MiB, GiB; 512K costs little in production); the\n"
           "                     reports then give estimates (docs/record-sampling.md).\n"
           "                     Mappings are all recorded. Default: every block\n"
           "      --snapshot-every T  with -o DIR: every T (500ms, 10s, 5m) while CMD\n"
           "                     runs, a pprof profile of the heap in use and allocated\n"
           "                     so far, DIR/heap.0001.pb.gz, ...; the trace is\n"
           "                     DIR/trace.mscr (docs/record.md: Snapshots)\n"
           "      --live         a web view of the trace while it is recorded: starts\n"
           "                     `memscribe serve` on it and says its address; the\n"
           "                     trace is flushed every 250 ms and the page asks every\n"
           "                     second, so it follows the program within 1.25 s and\n"
           "                     the time its queries take (docs/serve.md)\n"
           "      --live-listen ADDR, --live-port N, --live-url-file F\n"
           "                     serve's --listen, --port and --url-file\n"
           "      --metrics [ADDR:]PORT  the live server at ADDR (default 127.0.0.1) and\n"
           "                     PORT, for Prometheus: /metrics is memscribe metrics of\n"
           "                     the trace so far (docs/metrics.md)\n"
           "      --metrics-token-file F  its token kept in F (yours alone, 0600; made\n"
           "                     if absent): a scrape's bearer credentials_file\n"
           "      --metrics-label K=V  a label on every series (repeatable)\n"
           "      --push-metrics URL  at the end (and every --push-every T), push the\n"
           "                     trace's metrics to the Prometheus Pushgateway at URL\n"
           "                     (job --push-job NAME, default memscribe; instance: this\n"
           "                     host); a failed last push makes the exit status 1\n"
           "      --vm-precise   also record the mappings libc, ld.so and pthread_create\n"
           "                     make themselves (Syscall User Dispatch, x86-64 only;\n"
           "                     default off, README: Cost)\n"
           "      --no-vm-precise  only the public mmap/munmap/... calls (default)\n"
           "      --check OPT[=VALUE]  after recording, run 'memscribe check --OPT=VALUE'\n"
           "                     on the trace (repeatable: --check max-leaked=0 --check\n"
           "                     junit=mem.xml); its report goes to stderr. The exit\n"
           "                     status is CMD's when every check passes, else 1\n"
           "                     (docs/check.md: In one step)\n"
           "  -h, --help         this text\n"
           "      --serve --pid PID -o FILE  (not for use by hand) the recorder that\n"
           "                     libmemscribe.so starts for LD_PRELOAD=... MEMSCRIBE_OUTPUT=...\n"
           "\n"
           "environment:\n"
           "  MEMSCRIBE_COLLECTOR    path of libmemscribe.so (default:\n"
           "                         <dir of memscribe>/../lib/memscribe/libmemscribe.so)\n"
           "  MEMSCRIBE_FREE_STACKS  1: record a stack for each free() too (slower)\n"
           "  MEMSCRIBE_UNWIND       fp: follow frame pointers, not the unwind tables\n"
           "                         (cheaper on deep changing stacks, lossy); verify:\n"
           "                         check every walk against libunwind's, abort on a\n"
           "                         difference (tests; slow): see docs/record.md\n"
           "  MEMSCRIBE_CLOCK        tsc or monotonic: how events are stamped (default: tsc\n"
           "                         when the kernel's clocksource is a stable TSC, or is\n"
           "                         kvm-clock with every CPU's TSC on one line)\n"
           "  MEMSCRIBE_SAMPLE_SEED  with --sample: a number that makes the choice of\n"
           "                         blocks repeat from run to run (tests)\n"
           "Set for the traced program (do not set them yourself): LD_PRELOAD,\n"
           "MEMSCRIBE_SOCKET, MEMSCRIBE_SECRET, MEMSCRIBE_DEPTH, MEMSCRIBE_NO_FOLLOW,\n"
           "MEMSCRIBE_CLOCK, MEMSCRIBE_ONLY, MEMSCRIBE_SAMPLE.\n"
           "\n"
           "Without record: LD_PRELOAD=<collector> MEMSCRIBE_OUTPUT=FILE CMD (%%p in FILE\n"
           "is the pid) traces CMD and its children into FILE (docs/record.md).\n",
           FMT_SHM_MAX_DEPTH, FMT_SHM_DEFAULT_DEPTH);
}

/* --time-unit: "ns", "us", "ms", or a count of them ("250ns", "10us"), at
 * most a second. Returns the unit in ns, or 0 if s is none of these. */
static uint32_t parse_time_unit(const char *s)
{
    char one[16];
    uint64_t ns;

    /* A bare unit is one of it. */
    if (*s >= 'a' && *s <= 'z' && snprintf(one, sizeof(one), "1%s", s) < (int)sizeof(one))
        s = one;
    if (util_duration_parse(s, &ns) || !ns || ns > FMT_WRITER_MAX_TIME_UNIT_NS)
        return 0;
    return (uint32_t)ns;
}

/* The time above zero the option --opt gives, or the usage error that
 * says what it wants (e.g. "a time such as 500ms or 10s"). */
static uint64_t time_arg(const char *arg, const char *opt, const char *wants)
{
    uint64_t ns;

    if (util_duration_parse(arg, &ns) || !ns)
        cli_usage_error("record: --%s wants %s, not '%s'", opt, wants, arg);
    return ns;
}

/* How the session's notes and warnings reach the user. */
static void record_say(void *arg, enum rec_say_level level, const char *msg)
{
    const struct record_opts *o = arg;

    if (level == REC_SAY_NOTE && o->quiet)
        return;
    cli_warn("record: %s", msg);
}

/* The value of the option opt, which may not be given as it is. */
static void record_opt(struct record_opts *o, int opt, const char *arg)
{
    char *end;
    long v;

    switch (opt) {
    case 'o':
        o->rec.out_path = arg;
        break;
    case 'd':
        v = strtol(arg, &end, 10);
        if (*end || v < 1 || v > FMT_SHM_MAX_DEPTH)
            cli_usage_error("record: --depth wants a number from 1 to %d, not '%s'",
                            FMT_SHM_MAX_DEPTH, arg);
        o->rec.depth = (uint32_t)v;
        break;
    case 'T':
        if (!(o->rec.time_unit_ns = parse_time_unit(arg)))
            cli_usage_error("record: --time-unit wants ns, us, ms or a count of them "
                            "(10us) up to 1 s, not '%s'",
                            arg);
        break;
    case 'O':
        if (!*arg)
            cli_usage_error("record: --only wants a program name or a glob, not ''");
        o->rec.only = arg;
        break;
    case 1005:
        /* 0 is a size here (copy nothing), which util_size_parse refuses. */
        if (!strcmp(arg, "0"))
            o->rec.reach_copy = 0;
        else if (util_size_parse(arg, &o->rec.reach_copy))
            cli_usage_error("record: --reach-copy wants a byte count such as 256M or 0, not '%s'",
                            arg);
        break;
    case 'A':
        if (util_size_parse(arg, &o->rec.sample_bytes))
            cli_usage_error("record: --sample wants a byte count such as 512K, not '%s'", arg);
        break;
    case 'E':
        o->snap_every_ns = time_arg(arg, "snapshot-every", "a time such as 500ms or 10s");
        break;
    case 'P':
    case 'p':
        v = strtol(arg, &end, 10);
        if (*end || v <= 0 || v > INT32_MAX)
            cli_usage_error("record: -p wants a process id, not '%s'", arg);
        o->pid = (pid_t)v;
        break;
    case 'K':
        if (o->nr_check == RECORD_MAX_CHECKS)
            cli_usage_error("record: at most %d --check options", RECORD_MAX_CHECKS);
        if (!*arg || *arg == '-')
            cli_usage_error("record: --check wants a check option without its dashes, "
                            "such as max-leaked=0, not '%s'",
                            arg);
        o->check[o->nr_check++] = arg;
        break;
    case 'Y':
        o->keep_last_text = arg;
        o->rec.keep_last_ns = time_arg(arg, "keep-last", "a duration such as 10m or 1h");
        break;
    case 'M':
        if (util_size_parse(arg, &o->rec.max_size) || !o->rec.max_size)
            cli_usage_error("record: --max-size wants a size such as 100M or 2G, not '%s'", arg);
        break;
    case 'G':
        /* --aggregate alone: intervals of a second (docs/aggregate.md) */
        if (!arg)
            o->rec.aggregate_ns = RECORD_AGGREGATE_DEFAULT_NS;
        else
            o->rec.aggregate_ns = time_arg(arg, "aggregate", "a period such as 100ms, 1s or 5s");
        break;
    case 'U':
        o->duration_ns = time_arg(arg, "duration", "a time such as 10, 1.5s, 500ms or 2m");
        break;
    default:
        cli_usage_error("record: see 'memscribe record --help'");
    }
}

/* Parse argv into *o; returns the index of the program's name. */
/* --metrics [ADDR:]PORT, --metrics-token-file F, --metrics-label K=V,
 * --push-metrics URL, --push-job NAME, --push-every T. */
static void record_metrics_option(struct record_opts *o, int opt, const char *arg)
{
    if (opt >= 1009) {
        if (opt == 1009)
            o->push.url = arg;
        else if (opt == 1010)
            o->push.job = arg;
        else
            o->push.every_ns = time_arg(arg, "push-every", "a time such as 10s or 1m");
        return;
    }
    if (opt == 1007) {
        o->metrics_token_file = arg;
        return;
    }
    if (opt == 1008) {
        if (o->nr_metrics_labels == CLI_LIVE_MAX_LABELS || !cli_metrics_label_ok(arg))
            cli_usage_error("record: --metrics-label wants NAME=VALUE (as memscribe metrics "
                            "--label), at most %d",
                            CLI_LIVE_MAX_LABELS);
        o->metrics_labels[o->nr_metrics_labels++] = arg;
        return;
    }
    const char *colon = strrchr(arg, ':');
    const char *port = colon ? colon + 1 : arg;
    size_t n = colon ? (size_t)(colon - arg) : 0;
    if (!*port || strspn(port, "0123456789") != strlen(port) || strlen(port) > 5 ||
        n >= sizeof(o->metrics_addr))
        cli_usage_error("record: --metrics wants [ADDR:]PORT (127.0.0.1:9464, or 9464 on "
                        "127.0.0.1), not '%s'",
                        arg);
    snprintf(o->metrics_addr, sizeof(o->metrics_addr), "%.*s", (int)n, arg);
    o->metrics = o->live = 1;
    o->live_port = port;
}

static int record_parse(int argc, char **argv, struct record_opts *o)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"depth", required_argument, NULL, 'd'},
        {"no-follow", no_argument, NULL, 'n'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {"vm-precise", no_argument, NULL, 'V'},
        {"no-vm-precise", no_argument, NULL, 'W'},
        {"time-unit", required_argument, NULL, 'T'},
        {"serve", no_argument, NULL, 'S'},
        {"pid", required_argument, NULL, 'P'},
        {"only", required_argument, NULL, 'O'},
        {"sample", required_argument, NULL, 'A'},
        {"snapshot-every", required_argument, NULL, 'E'},
        {"duration", required_argument, NULL, 'U'}, /* with -p */
        {"check", required_argument, NULL, 'K'},
        {"reach", no_argument, NULL, 'R'},
        {"reach-copy", required_argument, NULL, 1005},
        {"totals", no_argument, NULL, 1004},
        {"live", no_argument, NULL, 'L'},
        {"live-listen", required_argument, NULL, 1001},
        {"live-port", required_argument, NULL, 1002},
        {"live-url-file", required_argument, NULL, 1003},
        {"metrics", required_argument, NULL, 1006},
        {"metrics-token-file", required_argument, NULL, 1007},
        {"metrics-label", required_argument, NULL, 1008},
        {"push-metrics", required_argument, NULL, 1009},
        {"push-job", required_argument, NULL, 1010},
        {"push-every", required_argument, NULL, 1011},
        {"aggregate", optional_argument, NULL, 'G'},
        {"max-size", required_argument, NULL, 'M'},
        {"keep-last", required_argument, NULL, 'Y'},
        {NULL, 0, NULL, 0},
    };
    int opt;

    while ((opt = getopt_long(argc, argv, "+o:qhp:", longopts, NULL)) != -1) {
        if (opt == 'h') {
            print_help();
            exit(CLI_EXIT_OK);
        } else if (opt == 'n') {
            o->rec.no_follow = 1;
        } else if (opt == 'R') {
            o->rec.reach = 1;
        } else if (opt == 1004) {
            o->rec.totals = 1;
        } else if (opt == 'L') {
            o->live = o->live_asked = 1;
        } else if (opt >= 1001 && opt <= 1003) {
            *(opt == 1001   ? &o->live_listen
              : opt == 1002 ? &o->live_port
                            : &o->live_url_file) = optarg;
        } else if (opt >= 1006 && opt <= 1011) {
            record_metrics_option(o, opt, optarg);
        } else if (opt == 'q') {
            o->quiet = 1;
        } else if (opt == 'S') {
            o->serve = 1;
        } else if (opt == 'V' || opt == 'W') {
            /* The collector reads it (col_sud.c); the program inherits it. */
            setenv("MEMSCRIBE_VM_PRECISE", opt == 'V' ? "1" : "0", 1);
            o->vm_precise = opt == 'V';
        } else {
            record_opt(o, opt, optarg);
        }
    }
    return optind;
}

/* The options that go with the way of recording chosen. */
static void record_check(const struct record_opts *o, int argc, int first)
{
    /* A sample misses the calls between the blocks it keeps: it can say
     * neither which blocks are transient nor which are temporary. */
    if ((o->rec.aggregate_ns || o->rec.max_size) && o->rec.sample_bytes)
        cli_usage_error("record: --%s and --sample do not mix: an aggregated trace "
                        "counts every call (docs/aggregate.md)",
                        o->rec.keep_last_ns ? "keep-last"
                        : o->rec.max_size   ? "max-size"
                                            : "aggregate");
    /* Both bound the trace: one by time, the other by size. */
    if (o->rec.keep_last_ns && o->rec.max_size)
        cli_usage_error("record: --keep-last and --max-size do not mix: --keep-last's trace is "
                        "aggregated from the start, its segments hold the last D");
    if (o->rec.keep_last_ns && o->rec.keep_last_ns < o->rec.aggregate_ns)
        cli_usage_error("record: --keep-last's duration must be at least --aggregate's period");
    if (o->rec.keep_last_ns && (o->serve || !o->rec.out_path))
        cli_usage_error("record: --keep-last wants -o TRACE (its segments go in TRACE.last/)");
    /* Cuts fall on times the trace can hold. */
    if (o->rec.aggregate_ns % o->rec.time_unit_ns)
        cli_usage_error("record: --aggregate's period (%llu ns) must be a multiple of the time "
                        "unit (%u ns)",
                        (unsigned long long)o->rec.aggregate_ns, o->rec.time_unit_ns);
    if (o->snap_every_ns && (!o->rec.out_path || o->serve))
        cli_usage_error("record: --snapshot-every wants -o DIR, the directory of the trace and "
                        "the profiles");
    if (o->rec.reach_copy != REC_REACH_COPY_DEFAULT && !o->rec.reach)
        cli_usage_error("record: --reach-copy goes with --reach");
#if !defined(__x86_64__)
    /* The SIGSYS handler of Syscall User Dispatch reads x86's registers;
     * Debian 12's arm64 kernel (6.1) has no Syscall User Dispatch at all
     * (prctl says EINVAL: docs/platforms.md). */
    if (o->vm_precise)
        cli_usage_error("record: --vm-precise is built for x86-64 only: it needs Syscall User "
                        "Dispatch, which Linux 6.1 has on x86 alone (docs/platforms.md)");
#endif
    if ((o->live_listen || o->live_port || o->live_url_file) && !o->live)
        cli_usage_error("record: --live-listen, --live-port and --live-url-file go with --live");
    if (o->metrics_token_file && !o->metrics)
        cli_usage_error("record: --metrics-token-file goes with --metrics");
    if (o->nr_metrics_labels && !o->metrics && !o->push.url)
        cli_usage_error("record: --metrics-label goes with --metrics or --push-metrics");
    if ((o->push.job || o->push.every_ns) && !o->push.url)
        cli_usage_error("record: --push-job and --push-every go with --push-metrics");
    if (o->push.url && strncmp(o->push.url, "http://", 7))
        cli_usage_error("record: --push-metrics wants a Pushgateway's http://HOST:PORT, not '%s'",
                        o->push.url);
    if (o->metrics && o->live_listen)
        cli_usage_error("record: --metrics ADDR:PORT says where the server listens: not "
                        "--live-listen too");
    if (o->live && o->serve)
        cli_usage_error("record: --live does not go with --serve (nobody reads its messages)");
    if (o->serve) {
        if (o->nr_check || o->rec.reach)
            cli_usage_error("record: --check and --reach do not go with --serve");
        if (o->pid <= 0 || !o->rec.out_path)
            cli_usage_error("record: --serve (started by the collector) wants --pid and -o");
    } else if (o->pid > 0) {
        if (first < argc)
            cli_usage_error("record: -p attaches to a running process; it takes no command");
        if (o->rec.only || o->rec.no_follow || o->vm_precise)
            cli_usage_error("record: --only, --no-follow and --vm-precise do not go with -p");
    } else {
        if (o->duration_ns)
            cli_usage_error("record: --duration goes with -p");
        if (first >= argc)
            cli_usage_error(
                "record: no program to run; usage: memscribe record [options] -- CMD [ARGS]");
    }
}

/* path from the working directory, as an absolute one in buf (dies if it
 * cannot be). */
static const char *record_absolute(const char *path, char *buf, size_t size)
{
    char cwd[PATH_MAX];

    if (path[0] == '/')
        return path;
    if (!getcwd(cwd, sizeof(cwd)) || (size_t)snprintf(buf, size, "%s/%s", cwd, path) >= size)
        cli_die("record: %s: cannot make it an absolute path", path);
    return buf;
}

/* Without the wrapper (record --serve, started by the collector), the
 * program's environment asks for the metrics server: MEMSCRIBE_METRICS
 * [ADDR:]PORT, MEMSCRIBE_METRICS_TOKEN_FILE F, MEMSCRIBE_METRICS_LABELS
 * K=V,K=V (docs/metrics.md). Noted before the session is made (its flush
 * period is the live one), checked once stderr is the collector's word
 * pipe (record_serve_metrics_check). */
static void record_serve_metrics(struct record_opts *o)
{
    static char out[PATH_MAX];
    const char *v = getenv(FMT_SHM_ENV_METRICS);

    if (!o->serve || !v || !*v)
        return;
    o->metrics = o->live = 1;
    /* The server is started once the recorder left for "/" (rec_mode_serve) */
    o->rec.out_path = record_absolute(o->rec.out_path, out, sizeof(out));
}

/* The metrics the environment asks for, as --metrics and its options
 * would be: a bad value, a token file refused or an address nobody can
 * listen on is said to the collector, which leaves the program untraced
 * with the reason on its stderr (the recorder's words go nowhere once it
 * said "ok"). */
static void record_serve_metrics_check(struct record_opts *o)
{
    static char labels[1024];
    const char *token = getenv(FMT_SHM_ENV_METRICS_TOKEN), *l = getenv(FMT_SHM_ENV_METRICS_LABELS);
    char msg[256], tok[CLI_SERVE_TOKEN_SIZE];

    if (!o->serve || !o->metrics)
        return;
    record_metrics_option(o, 1006, getenv(FMT_SHM_ENV_METRICS));
    /* nobody reads a random token's words here: the file is the one way */
    if (!token || !*token)
        cli_usage_error("record: %s wants %s too (the file the scraper reads the token from)",
                        FMT_SHM_ENV_METRICS, FMT_SHM_ENV_METRICS_TOKEN);
    static char token_path[PATH_MAX];
    record_metrics_option(o, 1007, record_absolute(token, token_path, sizeof(token_path)));
    if (l && strlen(l) >= sizeof(labels))
        cli_usage_error("record: %s is longer than %zu bytes", FMT_SHM_ENV_METRICS_LABELS,
                        sizeof(labels) - 1);
    snprintf(labels, sizeof(labels), "%s", l ? l : "");
    for (char *save = NULL, *kv = strtok_r(labels, ",", &save); kv; kv = strtok_r(NULL, ",", &save))
        record_metrics_option(o, 1008, kv);
    cli_serve_token(o->metrics_token_file, tok, sizeof(tok)); /* dies if the file is refused */
    if (cli_http_can_listen(o->metrics_addr[0] ? o->metrics_addr : "127.0.0.1",
                            (uint16_t)strtoul(o->live_port, NULL, 10), msg, sizeof(msg)))
        cli_die("record: %s=%s: %s", FMT_SHM_ENV_METRICS, getenv(FMT_SHM_ENV_METRICS), msg);
}

/* A Windows program is traced whole, with its children. */
static void record_check_win(const struct record_opts *o)
{
    if (o->rec.only)
        cli_usage_error("record: --only is for Linux programs; a Windows program is traced "
                        "with its children");
    if (o->rec.sample_bytes)
        cli_usage_error("record: --sample is for Linux programs; a Windows program is traced "
                        "whole");
    if (o->rec.no_follow)
        cli_usage_error("record: --no-follow is for Linux programs; the Windows launcher "
                        "follows every child");
    if (o->rec.reach)
        cli_usage_error("record: --reach is for Linux programs");
}

/* The way of recording the options ask for, made ready in s; dies saying
 * why not. *prog: the program found on PATH (malloc'd), if one is run. */
static void record_mode(struct rec_session *s, const struct record_opts *o, char **argv,
                        char **prog)
{
    char msg[1024];
    unsigned pe;
    int rc;

    if (o->serve) {
        rc = rec_mode_serve(s, o->pid, msg, sizeof(msg));
    } else if (o->pid > 0) {
        rc = rec_mode_attach(s, o->pid, o->duration_ns, msg, sizeof(msg));
    } else {
        if (!(*prog = rec_resolve_command(argv[0])))
            cli_die("record: %s: not found on PATH", argv[0]);
        if ((pe = rec_win_pe_machine(*prog))) { /* a Windows program: run under Wine */
            record_check_win(o);
            rc = rec_mode_wine(s, *prog, pe, argv, msg, sizeof(msg));
        } else {
            rc = rec_mode_spawn(s, *prog, argv, msg, sizeof(msg));
        }
    }
    if (rc != 0)
        cli_die("record: %s", msg);
}

/* What --keep-last kept: the span its segments hold, as a reader of them
 * dates it (the first kept one's start to the last event), which is at
 * least D, or the whole run (rec_keep.h). */
static void keep_summary(const struct record_opts *o, const struct rec_summary *sum)
{
    const struct rec_keep_stats *k = &sum->keep;
    uint64_t span = k->kept_to_ns - k->kept_from_ns;

    if (!k->nr_kept) {
        cli_warn("record: --keep-last %s kept no segment in %s/", o->keep_last_text, sum->keep_dir);
        return;
    }
    cli_warn("record: kept %s %.6f s (%.6f s to %.6f s of the trace; --keep-last %s) in %u "
             "segment%s of %.6g s in %s/: seg-%06u.mscr to seg-%06u.mscr, each a trace of its own "
             "(memscribe report SEGMENT)",
             k->first_kept == 1 && span < o->rec.keep_last_ns ? "the whole run," : "the last",
             (double)span / 1e9, (double)k->kept_from_ns / 1e9, (double)k->kept_to_ns / 1e9,
             o->keep_last_text, k->nr_kept, k->nr_kept == 1 ? "" : "s", (double)k->segment_ns / 1e9,
             sum->keep_dir, k->first_kept, k->first_kept + k->nr_kept - 1);
}

/* What the recording did, on stderr; returns record's exit status. */
static int record_summary(const struct record_opts *o, const struct rec_summary *sum)
{
    uint64_t ignored = sum->nr_closed + sum->nr_silent + sum->nr_refused;

    if (ignored)
        cli_warn("record: %llu connection(s) to the recording's socket ignored: %llu closed "
                 "without a word, %llu silent (nothing within 1 s, or dropped for room), %llu "
                 "refused (without the secret, malformed)",
                 (unsigned long long)ignored, (unsigned long long)sum->nr_closed,
                 (unsigned long long)sum->nr_silent, (unsigned long long)sum->nr_refused);
    if (sum->write_err) {
        cli_warn("record: writing %s failed: %s; the trace holds what was written before "
                 "(%llu events seen)",
                 sum->out_path, strerror(-sum->write_err), (unsigned long long)sum->nr_seen);
        return CLI_EXIT_FAIL;
    }
    if (!o->quiet) {
        cli_warn("record: trace written to %s: %llu events, %llu bytes", sum->out_path,
                 (unsigned long long)sum->nr_events, (unsigned long long)sum->nr_bytes);
        if (sum->agg.switched_ns)
            cli_warn("record: the trace reached --max-size (%llu bytes written) at %.6f s: "
                     "aggregated from then on",
                     (unsigned long long)sum->agg.exact_bytes, (double)sum->agg.switched_ns / 1e9);
        else if (o->rec.max_size)
            cli_warn("record: the trace stayed under --max-size: exact");
        if (o->rec.aggregate_ns && (!o->rec.max_size || sum->agg.switched_ns))
            cli_warn("record: aggregated at %.6g s: %llu blocks counted in %llu batch rows, "
                     "%llu written at %llu cuts, %llu moments of highest heap",
                     (double)o->rec.aggregate_ns / 1e9, (unsigned long long)sum->agg.nr_transient,
                     (unsigned long long)sum->agg.nr_rows, (unsigned long long)sum->agg.nr_kept,
                     (unsigned long long)sum->agg.nr_cuts, (unsigned long long)sum->agg.nr_moments);
        if (sum->keep_dir)
            keep_summary(o, sum);
        if (sum->keep.err)
            cli_warn("record: the segments of --keep-last stopped at %.6f s: %s; the trace "
                     "went on",
                     (double)sum->keep.err_ns / 1e9, strerror(-sum->keep.err));
        if (sum->nr_dropped)
            cli_warn("record: %llu events were dropped (see FMT_EV_DROPPED in the trace)",
                     (unsigned long long)sum->nr_dropped);
        if (sum->reach.nr_scans)
            cli_warn("record: leak classes: %u scan(s) of %llu blocks, %.1f ms scanning (%.1f "
                     "MiB read), the program held %.1f ms (longest %.1f ms)",
                     sum->reach.nr_scans, (unsigned long long)sum->reach.nr_blocks,
                     (double)sum->reach.scan_ns / 1e6, (double)sum->reach.read_bytes / 1048576.0,
                     (double)sum->reach.held_ns / 1e6, (double)sum->reach.max_held_ns / 1e6);
    }
    if (o->rec.only && sum->nr_images == 0)
        cli_warn("record: --only '%s' matched no process of the tree; the trace is empty",
                 o->rec.only);
    else if (sum->note[0])
        cli_warn("record: %s", sum->note);
    return sum->exit_code;
}

/* record --check: memscribe check's argv, "--OPT=VALUE" for each, then
 * trace; each word malloc'd (free with free_check_argv). */
static char **check_argv(const struct record_opts *o, const char *trace, int *argc)
{
    char **v = calloc(o->nr_check + 3, sizeof(*v));

    if (!v || !(v[0] = strdup("check")))
        cli_die("record: out of memory");
    for (unsigned i = 0; i < o->nr_check; i++)
        if (asprintf(&v[i + 1], "--%s", o->check[i]) < 0)
            cli_die("record: out of memory");
    if (!(v[o->nr_check + 1] = strdup(trace)))
        cli_die("record: out of memory");
    *argc = (int)o->nr_check + 2;
    return v;
}

static void free_check_argv(char **v, int argc)
{
    for (int i = 0; i < argc; i++)
        free(v[i]);
    free(v);
}

/* The checks of record --check on the trace written (parse_only: their
 * options alone, before the program runs). Returns check's exit status. */
static int record_run_check(const struct record_opts *o, const char *trace, bool parse_only)
{
    int n, rc;
    char **v = check_argv(o, trace, &n);

    rc = cli_check_run(n, v, stderr, parse_only);
    free_check_argv(v, n);
    return rc;
}

int cmd_record(int argc, char **argv)
{
    struct record_opts o = {.rec = {.depth = FMT_SHM_DEFAULT_DEPTH,
                                    .time_unit_ns = REC_DEFAULT_TIME_UNIT_NS,
                                    .reach_copy = REC_REACH_COPY_DEFAULT}};
    struct cli_snap snap = {0};
    struct rec_summary sum;
    struct rec_session *s;
    char msg[1024], *prog = NULL;
    int first = record_parse(argc, argv, &o), rc;

    /* --max-size alone aggregates at the default period once it switches,
     * --keep-last from the start. */
    if ((o.rec.max_size || o.rec.keep_last_ns) && !o.rec.aggregate_ns)
        o.rec.aggregate_ns = RECORD_AGGREGATE_DEFAULT_NS;
    record_check(&o, argc, first);
    record_serve_metrics(&o);
    if (o.nr_check)
        record_run_check(&o, "TRACE", true); /* a usage error exits 2 before the program runs */
    o.quiet |= o.serve;                      /* nobody reads its stderr */
    o.rec.say = record_say;
    if (o.live) /* the page's delay is the flush's period: the reader sees whole chunks */
        o.rec.flush_ns = CLI_LIVE_FLUSH_NS;
    o.rec.say_arg = &o;
    if (o.snap_every_ns) {
        cli_snap_init(&snap, o.rec.out_path, o.snap_every_ns, o.quiet);
        o.rec.out_path = snap.trace;
    }
    if (!(s = rec_session_new(&o.rec)))
        cli_die("record: out of memory");
    record_mode(s, &o, argv + first, &prog);
    record_serve_metrics_check(&o);
    if (o.snap_every_ns)
        rec_session_add_tap(s, &cli_snap_tap, &snap);
    struct cli_live live = {.listen =
                                o.metrics && o.metrics_addr[0] ? o.metrics_addr : o.live_listen,
                            .port = o.live_port,
                            .url_file = o.live_url_file,
                            .token_file = o.metrics_token_file,
                            .nr_labels = o.nr_metrics_labels,
                            .metrics = o.metrics,
                            .metrics_only = o.metrics && !o.live_asked};
    memcpy(live.labels, o.metrics_labels, sizeof(live.labels));
    _Static_assert(sizeof(o.push.labels) == sizeof(o.metrics_labels), "one bound of labels");
    memcpy(o.push.labels, o.metrics_labels, sizeof(o.push.labels));
    o.push.nr_labels = o.nr_metrics_labels;
    o.push.checks = o.check;
    o.push.nr_checks = o.nr_check;
    if (o.push.url)
        rec_session_add_tap(s, &cli_push_tap, &o.push);
    if (o.live)
        rec_session_add_tap(s, &cli_live_tap, &live);
    if ((o.snap_every_ns && cli_snap_make(&snap, msg, sizeof(msg))) ||
        rec_session_run(s, &sum, msg, sizeof(msg)) != 0) {
        rec_session_free(s); /* a program made and never let go is killed */
        cli_die("record: %s", msg);
    }
    rc = record_summary(&o, &sum);
    if (o.push.failed) /* said on stderr: a CI run sees its metrics did not go */
        rc = CLI_EXIT_FAIL;
    /* The program's exit status when every check passes, else 1. */
    if (o.nr_check && !sum.write_err && record_run_check(&o, sum.out_path, false) != CLI_EXIT_OK)
        rc = CLI_EXIT_FAIL;
    rec_session_free(s);
    cli_snap_release(&snap);
    free(prog);
    return rc;
}
