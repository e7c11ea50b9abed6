/* SPDX-License-Identifier: MIT */
/* memscribe record: run a program with the collector preloaded, gather what
 * every traced process sends, and write it in time order to a trace. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/cli_attach.h"
#include "cli/cli_snap.h"
#include "cli/cmd_record_win.h"
#include "recorder/rec_attach.h"
#include "recorder/rec_class.h"
#include "recorder/rec_internal.h"
#include "recorder/rec_proc.h"
#include "recorder/rec_serve.h"
#include "recorder/rec_win.h"
#include "util/util_duration.h"
#include "util/util_outfile.h"
#include "util/util_size.h"

extern char **environ;

#define REC_RSS_PERIOD_NS (10 * 1000 * 1000ull)
#define REC_FLUSH_PERIOD_NS (1000 * 1000 * 1000ull)
/* Below this many bytes copied in a round, wait (1 ms, or a new process)
 * before the next one. A recorder that keeps right behind a thread reads
 * the cache line the thread is still filling, and every such line then
 * moves between the two CPUs twice; rounds of a few hundred KiB leave the
 * thread alone (4 MiB rings: ~12 ms of a malloc storm). */
#define REC_BATCH_BYTES (256 * 1024ull)
/* With no image open and no connection waiting (everything runs untraced,
 * as under --only until a match starts), wait this long between rounds:
 * a hello or a child's exit (SIGCHLD) ends the wait at once. Polling every
 * 1 ms cost the recorder 7-10 % of a CPU while it had nothing to do. */
#define REC_IDLE_WAIT_MS 50

static volatile pid_t rec_forward_pid;
/* record -p: INT/TERM/HUP ask to detach (the program is not ours to stop). */
static volatile sig_atomic_t rec_attached, rec_detach_asked;
/* Once detached, wait this long for hooks that were under way to publish
 * their last events before the rings are read for the last time. */
#define REC_DETACH_SETTLE_MS 20

static void print_help(void)
{
    printf("usage: memscribe record [-o FILE] [--depth N] [--time-unit U] [--no-follow]\n"
           "                        [--only GLOB] [--sample BYTES] [--vm-precise] [--quiet]\n"
           "                        [--snapshot-every T -o DIR]\n"
           "                        [--] CMD [ARGS...]\n"
           "       memscribe record -p PID [-o FILE] [--duration T] [--depth N]\n"
           "                        [--sample BYTES] [--time-unit U] [--quiet]\n"
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
           "  -p, --pid PID      attach to the running process PID instead: load the\n"
           "                     collector into it (ptrace, a moment's stop), record\n"
           "                     until it exits, --duration ends or Ctrl-C detaches;\n"
           "                     it then runs on untraced. The trace starts mid-run:\n"
           "                     blocks from before are unknown (docs/record.md: Attach)\n"
           "      --duration T   with -p: detach after T (seconds, or 500ms, 2m, 1h)\n"
           "      --depth N      frames kept per stack, 1-%d (default %d)\n"
           "      --time-unit U  resolution of event times: ns, us, ms, or a count\n"
           "                     of them (default 10us); events keep their exact\n"
           "                     order whatever the unit (docs/format.md)\n"
           "      --no-follow    trace only CMD's own image: no exec'd programs,\n"
           "                     no forked children\n"
           "      --only GLOB    trace only the processes whose executable's file name\n"
           "                     (symbolic links followed) or argv[0]'s last part\n"
           "                     matches GLOB (fnmatch: cc1, 'hog*'); the others run\n"
           "                     untraced but pass the collector on to their children\n"
           "  -q, --quiet        no summary on stderr\n"
           "      --sample BYTES record a sample of the heap blocks: each byte allocated\n"
           "                     is a sampling point with probability 1/BYTES (K, M, G:\n"
           "                     KiB, MiB, GiB; 512K costs little in production); the\n"
           "                     reports then give estimates (docs/record.md: Sampling).\n"
           "                     Mappings are all recorded. Default: every block\n"
           "      --snapshot-every T  with -o DIR: every T (500ms, 10s, 5m) while CMD\n"
           "                     runs, a pprof profile of the heap in use and allocated\n"
           "                     so far, DIR/heap.0001.pb.gz, ...; the trace is\n"
           "                     DIR/trace.mscr (docs/record.md: Snapshots)\n"
           "      --vm-precise   also record the mappings libc, ld.so and pthread_create\n"
           "                     make themselves (Syscall User Dispatch; default off,\n"
           "                     README: Cost)\n"
           "      --no-vm-precise  only the public mmap/munmap/... calls (default)\n"
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

/* Forward a signal someone sent us to the program; one from the terminal
 * (si_code > 0) reached the program's process group already. */
static void rec_on_signal(int sig, siginfo_t *info, void *uctx)
{
    (void)uctx;
    if (rec_attached) {
        rec_detach_asked = 1;
        return;
    }
    if (info->si_code <= 0 && rec_forward_pid > 0)
        kill(rec_forward_pid, sig);
}

/* Is the TSC's line known (src/recorder/rec_clock.c)? 10 ms after the
 * start, or as soon as the whole tree has ended when the recorder started
 * it (own_tree): a program shorter than the calibration does not wait for
 * it, every time it stamped lying between the two readings. */
static int rec_clock_known(struct rec_clock *c, struct rec_statuses *st, int own_tree)
{
    if (rec_clock_settle(c))
        return 1;
    return own_tree && rec_reap(st) && st->root_done && rec_clock_settle_now(c);
}

/* Only there to end the idle wait's poll() with EINTR. */
static void rec_on_child(int sig)
{
    (void)sig;
}

static int rec_idle(const struct rec_session *s)
{
    if (s->nr_conns)
        return 0;
    for (uint32_t i = 0; i < s->nr_images; i++)
        if (s->images[i]->open)
            return 0;
    return 1;
}

static char *rec_collector_path(void)
{
    const char *env = getenv("MEMSCRIBE_COLLECTOR");
    char self[PATH_MAX], *slash, *path;
    ssize_t n;

    if (env && *env)
        path = realpath(env, NULL);
    else {
        n = readlink("/proc/self/exe", self, sizeof(self) - 1);
        if (n <= 0)
            cli_die("record: cannot find my own executable: %s", strerror(errno));
        self[n] = 0;
        slash = strrchr(self, '/');
        *slash = 0;
        char *guess;

        if (asprintf(&guess, "%s/../lib/memscribe/libmemscribe.so", self) < 0)
            cli_die("record: out of memory");
        path = realpath(guess, NULL);
        if (!path)
            cli_die("record: collector %s: %s (set MEMSCRIBE_COLLECTOR)", guess, strerror(errno));
        free(guess);
        return path;
    }
    if (!path)
        cli_die("record: MEMSCRIBE_COLLECTOR=%s: %s", env, strerror(errno));
    return path;
}

/* The environment for the program: ours, with the collector first in
 * LD_PRELOAD and the protocol variables set. */
/* What rec_build_env() adds at the end of the environment. */
#define REC_ENV_OURS 7

static char **rec_build_env(const char *collector, const char *sock, const char *secret,
                            uint32_t depth, int no_follow, int tsc, const char *only)
{
    size_t n = 0, k = 0;
    char **env;
    const char *old_preload = getenv("LD_PRELOAD");

    while (environ[n])
        n++;
    env = calloc(n + REC_ENV_OURS + 1, sizeof(*env));
    if (!env)
        cli_die("record: out of memory");
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "LD_PRELOAD=", 11) &&
            strncmp(environ[i], FMT_SHM_ENV_SOCKET "=", sizeof(FMT_SHM_ENV_SOCKET)) &&
            strncmp(environ[i], FMT_SHM_ENV_DEPTH "=", sizeof(FMT_SHM_ENV_DEPTH)) &&
            strncmp(environ[i], FMT_SHM_ENV_NO_FOLLOW "=", sizeof(FMT_SHM_ENV_NO_FOLLOW)) &&
            strncmp(environ[i], FMT_SHM_ENV_CLOCK "=", sizeof(FMT_SHM_ENV_CLOCK)) &&
            strncmp(environ[i], FMT_SHM_ENV_ONLY "=", sizeof(FMT_SHM_ENV_ONLY)) &&
            strncmp(environ[i], FMT_SHM_ENV_SECRET "=", sizeof(FMT_SHM_ENV_SECRET)))
            env[k++] = environ[i];
    if (asprintf(&env[k++], "LD_PRELOAD=%s%s%s", collector, old_preload && *old_preload ? ":" : "",
                 old_preload ? old_preload : "") < 0 ||
        asprintf(&env[k++], "%s=%s", FMT_SHM_ENV_SOCKET, sock) < 0 ||
        asprintf(&env[k++], "%s=%s", FMT_SHM_ENV_SECRET, secret) < 0 ||
        asprintf(&env[k++], "%s=%u", FMT_SHM_ENV_DEPTH, depth) < 0 ||
        asprintf(&env[k++], "%s=%d", FMT_SHM_ENV_NO_FOLLOW, no_follow) < 0 ||
        asprintf(&env[k++], "%s=%s", FMT_SHM_ENV_CLOCK, tsc ? "tsc" : "monotonic") < 0 ||
        asprintf(&env[k++], "%s=%s", FMT_SHM_ENV_ONLY, only ? only : "") < 0)
        cli_die("record: out of memory");
    env[k] = NULL;
    return env;
}

static void rec_free_env(char **env)
{
    size_t n = 0;

    while (env[n])
        n++;
    /* Our settings are the last entries; the rest belong to environ. */
    for (size_t i = n >= REC_ENV_OURS ? n - REC_ENV_OURS : 0; i < n; i++)
        free(env[i]);
    free(env);
}

static int rec_exit_code(int status)
{
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return CLI_EXIT_FAIL;
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

/* record -p's end by --duration or Ctrl-C: the program's GOTs put back
 * and the collector off, then what its hooks under way still publish. A
 * process that ended meanwhile needs no detaching. */
static void rec_attach_detach(struct rec_session *s, pid_t pid, const char *lib, int quiet)
{
    char msg[1024];
    long nr_restored = 0;

    rec_attached = 0;
    if (rec_attach_stop(pid, lib, &nr_restored, msg, sizeof(msg)) != 0) {
        if (kill(pid, 0) == 0)
            cli_warn("record: detaching: %s", msg);
        return;
    }
    poll(NULL, 0, REC_DETACH_SETTLE_MS);
    for (uint32_t i = 0; i < s->nr_images; i++)
        if (s->images[i]->open)
            rec_stream_drain(s, s->images[i]);
    if (!quiet)
        cli_warn("record: detached from process %d (%ld GOT entries put back); it runs on "
                 "untraced",
                 (int)pid, nr_restored);
}

int cmd_record(int argc, char **argv)
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
        {NULL, 0, NULL, 0},
    };
    /* pools: the program may announce its own pools at any time
     * (memscribe/annotate.h), after the header is written. */
    struct fmt_writer_options wopt = REC_WRITER_OPTIONS;
    const char *out_path = NULL, *only = NULL;
    uint32_t depth = FMT_SHM_DEFAULT_DEPTH;
    uint64_t sample_bytes = 0, snap_every_ns = 0;
    struct cli_snap snap = {0};
    int no_follow = 0, quiet = 0, opt, go_fd = -1, err_fd = -1, lfd, out_fd, exec_err = 0;
    int serve = 0, attach = 0, attach32 = 0, attach_pidfd = -1, vm_precise_set = 0, detached = 0;
    uint64_t duration_ns = 0, attach_start_ns = 0;
    char *attach_lib = NULL, *settings = NULL;
    char sock[108], msg[1024], *prog = NULL, *collector = NULL, **env = NULL;
    char *default_out = NULL, host[256] = "";
    struct rec_serve sv = {.rootfd = -1};
    char secret[2 * FMT_SHM_SECRET_BYTES + 1];
    struct rec_session s = {0};
    struct rec_statuses st = {0};
    struct fmt_trace_info info = {0};
    struct fmt_writer_stats stats;
    struct sigaction sa = {0};
    struct util_outfile out_made;
    uint64_t last_flush;
    size_t cmd_len = 0;
    char *command;
    pid_t pid = 0;
    int rc;

    while ((opt = getopt_long(argc, argv, "+o:qhp:", longopts, NULL)) != -1) {
        switch (opt) {
        case 'o':
            out_path = optarg;
            break;
        case 'd': {
            char *end;
            long d = strtol(optarg, &end, 10);

            if (*end || d < 1 || d > FMT_SHM_MAX_DEPTH)
                cli_usage_error("record: --depth wants a number from 1 to %d, not '%s'",
                                FMT_SHM_MAX_DEPTH, optarg);
            depth = (uint32_t)d;
            break;
        }
        case 'T':
            if (!(wopt.time_unit_ns = parse_time_unit(optarg)))
                cli_usage_error("record: --time-unit wants ns, us, ms or a count of them "
                                "(10us) up to 1 s, not '%s'",
                                optarg);
            break;
        case 'n':
            no_follow = 1;
            break;
        case 'O':
            if (!*optarg)
                cli_usage_error("record: --only wants a program name or a glob, not ''");
            only = optarg;
            break;
        case 'q':
            quiet = 1;
            break;
        case 'V':
        case 'W':
            /* The collector reads it (col_sud.c); the program inherits it. */
            setenv("MEMSCRIBE_VM_PRECISE", opt == 'V' ? "1" : "0", 1);
            vm_precise_set = opt == 'V';
            break;
        case 'A':
            if (util_size_parse(optarg, &sample_bytes))
                cli_usage_error("record: --sample wants a byte count such as 512K, not '%s'",
                                optarg);
            break;
        case 'E':
            if (util_duration_parse(optarg, &snap_every_ns) || !snap_every_ns)
                cli_usage_error("record: --snapshot-every wants a time such as 500ms or 10s, "
                                "not '%s'",
                                optarg);
            break;
        case 'S':
            serve = 1;
            break;
        case 'P':
        case 'p': {
            char *end;
            long v = strtol(optarg, &end, 10);

            if (*end || v <= 0 || v > INT32_MAX)
                cli_usage_error("record: -p wants a process id, not '%s'", optarg);
            pid = (pid_t)v;
            break;
        }
        case 'U':
            if (util_duration_parse(optarg, &duration_ns) || !duration_ns)
                cli_usage_error("record: --duration wants a time such as 10, 1.5s, 500ms or 2m, "
                                "not '%s'",
                                optarg);
            break;
        case 'h':
            print_help();
            return CLI_EXIT_OK;
        default:
            cli_usage_error("record: see 'memscribe record --help'");
        }
    }
    if (snap_every_ns && (!out_path || serve))
        cli_usage_error("record: --snapshot-every wants -o DIR, the directory of the trace and "
                        "the profiles");
    if (serve) {
        if (pid <= 0 || !out_path)
            cli_usage_error("record: --serve (started by the collector) wants --pid and -o");
        /* Until the trace exists, what goes wrong is the collector's to say. */
        if (dup2(REC_SERVE_WORD_FD, 2) < 0)
            return CLI_EXIT_FAIL;
        quiet = 1;
    } else if (pid > 0) {
        attach = 1;
        if (optind < argc)
            cli_usage_error("record: -p attaches to a running process; it takes no command");
        if (only || no_follow || vm_precise_set)
            cli_usage_error("record: --only, --no-follow and --vm-precise do not go with -p");
        if (rec_attach_check(pid, &attach32, msg, sizeof(msg)) != 0)
            cli_die("record: %s", msg);
        collector = rec_collector_path();
        attach_lib = cli_attach_lib(collector, (int)pid, attach32);
    } else {
        if (duration_ns)
            cli_usage_error("record: --duration goes with -p");
        if (optind >= argc)
            cli_usage_error(
                "record: no program to run; usage: memscribe record [options] -- CMD [ARGS]");
        prog = rec_resolve_command(argv[optind]);
        if (!prog)
            cli_die("record: %s: not found on PATH", argv[optind]);
        unsigned pe = rec_win_pe_machine(prog); /* a Windows program: run under Wine */
        if (pe) {
            struct cmd_record_win_opts wo = {out_path, wopt.time_unit_ns, depth, quiet, no_follow,
                                             only,     sample_bytes};
            rc = cmd_record_win(prog, pe, argc - optind, argv + optind, &wo);
            free(prog);
            return rc;
        }
        if (rec_check_program(prog, msg, sizeof(msg)) != 0)
            cli_die("record: %s", msg);
        if (out_path) {
            /* Creating the trace replaces the file before the program runs. */
            struct stat so, sp;

            if (stat(out_path, &so) == 0 && stat(prog, &sp) == 0 && so.st_dev == sp.st_dev &&
                so.st_ino == sp.st_ino)
                cli_die("record: -o %s is the program itself; it would be overwritten", out_path);
        }
        collector = rec_collector_for(rec_collector_path(), prog);
    }
    if (serve) {
        /* The collector that started us passes the rate it samples at (a
         * whole number, 0: exact; col_selfrec.c). */
        const char *v = getenv(FMT_SHM_ENV_SAMPLE);

        if (!v || util_size_parse(v, &sample_bytes))
            sample_bytes = 0;
    } else {
        /* Always set: one inherited from our environment must not sample
         * a trace that says it is exact. */
        char rate[24];

        snprintf(rate, sizeof(rate), "%llu", (unsigned long long)sample_bytes);
        setenv(FMT_SHM_ENV_SAMPLE, rate, 1);
    }

    rec_clock_init(&s.clock);
    s.start_mono_ns = s.clock.mono0;
    if (snap_every_ns) {
        cli_snap_init(&snap, out_path, snap_every_ns, s.clock.mono0);
        out_path = snap.trace;
    }
    s.recorder_pid = (uint32_t)getpid();
    /* A file size limit is a write error, like a full disk (the child gets
     * the default back before exec). */
    signal(SIGXFSZ, SIG_IGN);
    if (serve) {
        lfd = rec_serve_init(&sv, &s, pid, msg, sizeof(msg));
        if (lfd < 0)
            cli_die("record: %s", msg);
    } else {
        /* Only the traced tree learns the secret (its environment), and the
         * recorder takes in only hellos that carry it (docs/protocol.md). */
        if (getrandom(s.secret, sizeof(s.secret), 0) != (ssize_t)sizeof(s.secret))
            cli_die("record: cannot make the recording's secret: %s", strerror(errno));
        for (unsigned i = 0; i < FMT_SHM_SECRET_BYTES; i++)
            snprintf(secret + 2 * i, 3, "%02x", s.secret[i]);
        lfd = rec_socket_open(sock, sizeof(sock));
        if (lfd < 0)
            cli_die("record: cannot open the collector socket: %s", strerror(-lfd));
        if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
            cli_warn("record: cannot become a subreaper (%s); orphaned children may be missed",
                     strerror(errno));
        if (!attach) {
            env = rec_build_env(collector, sock, secret, depth, no_follow, s.clock.tsc, only);
            pid = rec_spawn(prog, argv + optind, env, &go_fd, &err_fd);
            if (pid < 0)
                cli_die("record: cannot start %s: %s", prog, strerror(errno));
        }
        s.root_pid = pid;
    }
    st.root = pid;
    if (attach) {
        settings = cli_attach_settings(sock, secret, depth, s.clock.tsc, sample_bytes);
        attach_pidfd = (int)syscall(SYS_pidfd_open, (long)pid, 0L);
    }

    if (!out_path) { /* not with --serve */
        char comm[64] = "process";

        if (attach) {
            char cpath[64];
            FILE *f;

            snprintf(cpath, sizeof(cpath), "/proc/%d/comm", (int)pid);
            if ((f = fopen(cpath, "re"))) {
                if (!fgets(comm, sizeof(comm), f))
                    snprintf(comm, sizeof(comm), "process");
                comm[strcspn(comm, "\n/")] = 0;
                fclose(f);
            }
        }
        const char *base = attach                       ? comm
                           : strrchr(argv[optind], '/') ? strrchr(argv[optind], '/') + 1
                                                        : argv[optind];

        if (asprintf(&default_out, "%s.%d.mscr", base, (int)pid) < 0)
            cli_die("record: out of memory");
        out_path = default_out;
    }
    /* Under its final name at once, never a planted one (util_outfile.h):
     * MEMSCRIBE_OUTPUT's %p makes the name easy to guess. */
    out_fd = util_outfile_open(out_path, O_WRONLY, REC_TRACE_MODE, &out_made);
    if (out_fd < 0) {
        if (!serve && !attach) {
            kill(pid, SIGKILL);
            waitpid(pid, NULL, 0);
        }
        cli_die("record: cannot create %s: %s", out_path, out_made.why);
    }
    if (serve || attach) {
        command = rec_serve_command(pid, &cmd_len);
    } else {
        for (int i = optind; i < argc; i++)
            cmd_len += strlen(argv[i]) + 1;
        command = malloc(cmd_len ? cmd_len : 1);
        if (!command)
            cli_die("record: out of memory");
        cmd_len = 0;
        for (int i = optind; i < argc; i++) {
            size_t l = strlen(argv[i]) + 1;

            memcpy(command + cmd_len, argv[i], l);
            cmd_len += l;
        }
    }
    gethostname(host, sizeof(host) - 1);
    info.start_monotonic_ns = s.start_mono_ns;
    {
        struct timespec rt;

        clock_gettime(CLOCK_REALTIME, &rt);
        info.start_realtime_ns = (uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec;
    }
    info.recorder_pid = s.recorder_pid;
    info.stack_depth = depth;
    info.sample_bytes = sample_bytes;
    info.command = command;
    info.command_len = cmd_len ? (uint32_t)cmd_len - 1 : 0;
    info.hostname = host;
    info.only = only;
    info.attached_pid = attach ? (uint32_t)pid : 0;
    rc = fmt_writer_create(&s.w, out_fd, &info, &wopt);
    if (rc < 0) {
        if (!serve && !attach) {
            kill(pid, SIGKILL);
            waitpid(pid, NULL, 0);
        }
        if (out_made.created)
            unlink(out_path); /* no empty trace left behind (a full disk) */
        cli_die("record: cannot start the trace %s: %s", out_path, strerror(-rc));
    }

    /* While the program runs, INT/TERM/HUP are for it, not for us. With
     * --serve they are not ours either: a service manager that stops the
     * program's group gets the trace finished as soon as the program ends. */
    rec_forward_pid = serve || attach ? 0 : pid;
    sa.sa_sigaction = rec_on_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    sa.sa_handler = rec_on_child;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGCHLD, &sa, NULL);

    if (serve) {
        rec_serve_ready(&sv);
    } else if (attach) {
        rec_attached = 1; /* a Ctrl-C while attaching detaches right after */
        if (rec_attach_start(pid, attach_lib, settings, msg, sizeof(msg)) != 0) {
            fmt_writer_destroy(s.w);
            close(out_fd);
            if (out_made.created)
                unlink(out_path); /* nothing was recorded */
            cli_die("record: %s", msg);
        }
        attach_start_ns = rec_clock_now(&s.clock);
        if (!quiet)
            cli_warn("record: attached to process %d; Ctrl-C detaches", (int)pid);
    } else {
        if ((rc = rec_spawn_go(go_fd, err_fd, &exec_err)))
            cli_warn("record: cannot release %s: %s", prog, strerror(-rc));
        if (exec_err)
            cli_warn("record: cannot run %s: %s", prog, strerror(exec_err));
    }

    last_flush = s.clock.mono0;
    for (;;) {
        uint64_t now, limit, before = s.nr_copied;
        int no_children;

        if (!rec_clock_known(&s.clock, &st, !attach && !serve)) {
            /* Calibrating the TSC: no time can be converted yet. */
            poll(NULL, 0, 1);
            continue;
        }
        now = rec_clock_now(&s.clock);
        rec_socket_accept(&s, lfd, now, REC_ACCEPTS_PER_ROUND);
        limit = rec_merge_watermark(&s, now);
        no_children = rec_reap(&st);
        rec_check_exits(&s, &st, lfd, rec_clock_now(&s.clock));
        rec_merge_emit(&s, limit);
        if (s.write_err == 0)
            cli_snap_round(&snap, &st, s.w, now);
        rec_sample_rss(&s, now, REC_RSS_PERIOD_NS);
        if (now - last_flush > REC_FLUSH_PERIOD_NS && s.write_err == 0) {
            rc = fmt_writer_flush(s.w);
            if (rc < 0)
                s.write_err = rc;
            last_flush = now;
        }
        if (attach) {
            struct pollfd pfd = {.fd = attach_pidfd, .events = POLLIN};

            if (rec_detach_asked || (duration_ns && now - attach_start_ns >= duration_ns)) {
                rec_attach_detach(&s, pid, attach_lib, quiet);
                detached = 1;
                break;
            }
            if (attach_pidfd >= 0 && poll(&pfd, 1, 0) == 1 && rec_idle(&s))
                break; /* the process ended, its stream with it */
        } else if (serve) {
            if (rec_serve_finished(&sv, &s, now))
                break;
        } else if (no_children && st.root_done) {
            int open_images = 0;

            for (uint32_t i = 0; i < s.nr_images; i++)
                open_images += s.images[i]->open;
            if (!open_images)
                break;
        }
        if (s.nr_copied - before < REC_BATCH_BYTES) {
            /* A queue left behind (a flood of connections) does not cut
             * the wait short: it is worked through a pass a round. */
            struct pollfd pfd = {.fd = s.queue.behind ? -1 : lfd, .events = POLLIN};

            poll(&pfd, 1, rec_idle(&s) && !s.queue.behind ? REC_IDLE_WAIT_MS : 1);
        }
    }
    rec_forward_pid = 0;
    rec_socket_catch_up(&s, lfd);
    /* After a detach, what is still open runs on, untraced: it did not end. */
    for (uint32_t i = 0; i < s.nr_images; i++)
        rec_stream_close(&s, s.images[i], 0, detached ? REC_RUNS_ON : 0, rec_clock_now(&s.clock));
    rec_merge_emit(&s, UINT64_MAX);
    close(lfd);
    if (s.write_err == 0) {
        rc = fmt_writer_finish(s.w);
        if (rc < 0)
            s.write_err = rc;
    }
    fmt_writer_get_stats(s.w, &stats);
    fmt_writer_destroy(s.w);
    if (close(out_fd) != 0 && s.write_err == 0)
        s.write_err = -errno;
    cli_snap_finish(&snap, &st, quiet);
    rec_session_free(&s);
    rec_serve_free(&sv);
    if (env)
        rec_free_env(env);
    free(st.v);
    if (s.ignored.closed + s.ignored.silent + s.ignored.refused)
        cli_warn("record: %llu connection(s) to the recording's socket ignored: %llu closed "
                 "without a word, %llu silent (nothing within 1 s, or dropped for room), %llu "
                 "refused (without the secret, malformed)",
                 (unsigned long long)(s.ignored.closed + s.ignored.silent + s.ignored.refused),
                 (unsigned long long)s.ignored.closed, (unsigned long long)s.ignored.silent,
                 (unsigned long long)s.ignored.refused);
    if (s.write_err) {
        cli_warn("record: writing %s failed: %s; the trace holds what was written before "
                 "(%llu events seen)",
                 out_path, strerror(-s.write_err), (unsigned long long)s.nr_events);
        rc = CLI_EXIT_FAIL;
    } else {
        if (!quiet) {
            cli_warn("record: trace written to %s: %llu events, %llu bytes", out_path,
                     (unsigned long long)stats.nr_events, (unsigned long long)stats.bytes_written);
            if (s.nr_dropped)
                cli_warn("record: %llu events were dropped (see FMT_EV_DROPPED in the trace)",
                         (unsigned long long)s.nr_dropped);
        }
        if (only && s.nr_images == 0)
            cli_warn("record: --only '%s' matched no process of the tree; the trace is empty",
                     only);
        else if (s.nr_images == 0 && !serve && !attach && !exec_err)
            /* The loader refused LD_PRELOAD (its own message is above), or
             * the program cleared it before running what allocates. */
            cli_warn("record: no process of %s loaded the collector %s; the trace is empty", prog,
                     collector);
        /* --serve: nobody waits for us, and the program's status is not ours */
        rc = serve || attach ? CLI_EXIT_OK : exec_err ? 127 : rec_exit_code(st.root_status);
    }
    if (attach_pidfd >= 0)
        close(attach_pidfd);
    free(attach_lib);
    free(settings);
    free(default_out);
    cli_snap_release(&snap);
    free(command);
    free(collector);
    free(prog);
    return rc;
}
