/* SPDX-License-Identifier: MIT */
/* The recording session's loop (src/recorder/rec_session.c) driven by a
 * fake mode: no program and no socket, the mode writes a process's events
 * itself each round, as the Wine mode does. Checks the order in which the
 * loop calls a mode's and a tap's members, that a signal reaches the mode,
 * that the trace is whole with every event and the command line, that its
 * default name comes from the mode, and that a mode that cannot start
 * leaves no trace behind. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "memscribe/trace.h"
#include "recorder/rec_internal.h"

#define FAKE_PID 4242
#define FAKE_EXIT 7

/* What the fake mode and tap were asked, in order. */
struct fake {
    char calls[256]; /* one letter a call: S start, R round, D done, T tap, F tap's finish,
                        P stop, E finish, X release */
    unsigned nr_rounds, until; /* done once nr_rounds reaches until */
    int fail_start;            /* start says no */
    int signal_at;             /* raise SIGHUP in this round (0: never) */
    volatile sig_atomic_t sig, sig_code;
    char said[256];
};

static void note(struct fake *f, char c)
{
    size_t n = strlen(f->calls);

    if (n + 1 < sizeof(f->calls))
        f->calls[n] = c;
}

static int fake_start(struct rec_session *s, void *mode, char *msg, size_t msg_size)
{
    struct fake *f = mode;

    (void)s;
    note(f, 'S');
    if (f->fail_start) {
        snprintf(msg, msg_size, "fake: refused");
        return -1;
    }
    return 0;
}

/* A process's life as trace events, one a round: its start, then a malloc
 * a round, then its exit in the last round. */
static void fake_round(struct rec_session *s, void *mode, uint64_t now_ns)
{
    struct fake *f = mode;
    struct fmt_event ev = {.image = 0, .pid = FAKE_PID, .tid = FAKE_PID};
    char exe[] = "/bin/fake";

    note(f, 'R');
    f->nr_rounds++;
    if (f->nr_rounds == 1) {
        ev.kind = FMT_EV_PROCESS_START;
        ev.arg[1] = FMT_START_INITIAL;
        ev.str = exe;
        ev.str_len = (uint32_t)strlen(exe);
    } else if (f->nr_rounds < f->until) {
        ev.kind = FMT_EV_MALLOC;
        ev.addr = 0x10000 * f->nr_rounds;
        ev.size = f->nr_rounds;
    } else {
        ev.kind = FMT_EV_PROCESS_EXIT;
        ev.arg[1] = 1;
    }
    rec_merge_write(s, &ev, now_ns);
    if (f->signal_at && f->nr_rounds == (unsigned)f->signal_at)
        raise(SIGHUP);
}

static int fake_done(struct rec_session *s, void *mode, uint64_t now_ns)
{
    struct fake *f = mode;

    (void)s;
    (void)now_ns;
    note(f, 'D');
    return f->nr_rounds >= f->until || f->sig;
}

static void fake_on_signal(void *mode, int sig, const siginfo_t *info)
{
    struct fake *f = mode;

    f->sig = sig;
    f->sig_code = info->si_code;
}

static void fake_stop(struct rec_session *s, void *mode)
{
    (void)s;
    note(mode, 'P');
}

static int fake_finish(struct rec_session *s, void *mode, char *text, size_t text_size)
{
    (void)s;
    note(mode, 'E');
    snprintf(text, text_size, "fake: done");
    return FAKE_EXIT;
}

static void fake_release(void *mode)
{
    note(mode, 'X');
}

static const struct rec_mode_ops fake_ops = {
    .start = fake_start,
    .round = fake_round,
    .done = fake_done,
    .on_signal = fake_on_signal,
    .stop = fake_stop,
    .finish = fake_finish,
    .release = fake_release,
};

static void tap_round(struct rec_session *s, void *tap, uint64_t now_ns)
{
    (void)s;
    (void)now_ns;
    note(tap, 'T');
}

static void tap_finish(struct rec_session *s, void *tap)
{
    (void)s;
    note(tap, 'F');
}

static const struct rec_tap_ops fake_tap = {.round = tap_round, .finish = tap_finish};

static void fake_say(void *arg, enum rec_say_level level, const char *msg)
{
    struct fake *f = arg;

    snprintf(f->said, sizeof(f->said), "%d %s", (int)level, msg);
}

/* A session in a fresh directory with the fake mode, as a constructor of
 * src/recorder/rec_mode_*.c makes one. out: -o, NULL for the default. */
static struct rec_session *fake_session(struct fake *f, const char *out)
{
    static char *const argv[] = {"/bin/fake", "arg one", NULL};
    struct rec_options o = {.out_path = out,
                            .depth = 8,
                            .time_unit_ns = REC_DEFAULT_TIME_UNIT_NS,
                            .say = fake_say,
                            .say_arg = f};
    struct rec_session *s = rec_session_new(&o);

    assert_non_null(s);
    setenv("MEMSCRIBE_CLOCK", "monotonic", 1);
    rec_session_begin(s, 0);
    s->mode = &fake_ops;
    s->mode_arg = f;
    s->name = "fake";
    s->statuses.root = FAKE_PID;
    s->idle_wait_ms = 1;
    assert_int_equal(rec_session_command_argv(s, argv), 0);
    assert_int_equal(rec_session_add_tap(s, &fake_tap, f), 0);
    return s;
}

static char dir[] = "/tmp/test_rec_session.XXXXXX";

static int setup(void **state)
{
    (void)state;
    if (!mkdtemp(dir) || chdir(dir))
        return -1;
    return 0;
}

static int teardown(void **state)
{
    char cmd[64];

    (void)state;
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    return system(cmd);
}

/* Read path: its events' kinds, one letter each (s start, m malloc, e
 * exit), and its command line. */
static void read_trace(const char *path, char *kinds, size_t size, char *command, size_t cmd_size)
{
    struct fmt_reader *r;
    struct fmt_event ev;
    char err[256];
    size_t n = 0;
    int rc;

    assert_int_equal(fmt_reader_open(&r, path, err, sizeof(err)), 0);
    assert_int_equal(fmt_reader_incomplete(r), 0);
    const struct fmt_trace_info *info = fmt_reader_info(r);
    assert_true(info->command_len < cmd_size);
    memcpy(command, info->command, info->command_len);
    command[info->command_len] = 0;
    assert_int_equal(info->stack_depth, 8);
    while ((rc = fmt_reader_next(r, &ev)) == 1 && n + 1 < size)
        kinds[n++] = ev.kind == FMT_EV_PROCESS_START  ? 's'
                     : ev.kind == FMT_EV_MALLOC       ? 'm'
                     : ev.kind == FMT_EV_PROCESS_EXIT ? 'e'
                                                      : '?';
    kinds[n] = 0;
    assert_int_equal(rc, 0);
    fmt_reader_close(r);
}

static void test_loop_order(void **state)
{
    struct fake f = {.until = 4};
    struct rec_session *s = fake_session(&f, NULL);
    struct rec_summary sum;
    char msg[256], kinds[16], command[64], want[64];

    (void)state;
    assert_int_equal(rec_session_run(s, &sum, msg, sizeof(msg)), 0);
    /* Each round: the mode's input, the tap, the question; then stop, the
     * tap's end, the mode's end. */
    assert_string_equal(f.calls, "SRTDRTDRTDRTDPFE");
    assert_int_equal(sum.exit_code, FAKE_EXIT);
    assert_string_equal(sum.note, "fake: done");
    assert_int_equal(sum.write_err, 0);
    assert_int_equal(sum.nr_events, 4);
    assert_int_equal(sum.nr_seen, 4);
    /* The default name: the mode's name and its program's pid, here. */
    snprintf(want, sizeof(want), "fake.%d.mscr", FAKE_PID);
    assert_string_equal(sum.out_path, want);
    rec_session_free(s);
    assert_string_equal(f.calls, "SRTDRTDRTDRTDPFEX");
    read_trace(want, kinds, sizeof(kinds), command, sizeof(command));
    assert_string_equal(kinds, "smme");
    assert_memory_equal(command, "/bin/fake\0arg one", 18);
}

static void test_signal_reaches_mode(void **state)
{
    struct fake f = {.until = 1000, .signal_at = 2};
    struct rec_session *s = fake_session(&f, "signalled.mscr");
    struct rec_summary sum;
    char msg[256], kinds[16], command[64];

    (void)state;
    assert_int_equal(rec_session_run(s, &sum, msg, sizeof(msg)), 0);
    assert_int_equal(f.sig, SIGHUP);
    assert_true(f.sig_code <= 0); /* sent by a process, not the terminal */
    assert_int_equal(f.nr_rounds, 2);
    rec_session_free(s);
    read_trace("signalled.mscr", kinds, sizeof(kinds), command, sizeof(command));
    assert_string_equal(kinds, "sm");
    /* Outside the loop the handler tells no mode. */
    f.sig = 0;
    raise(SIGHUP);
    assert_int_equal(f.sig, 0);
}

static void test_start_fails(void **state)
{
    struct fake f = {.until = 4, .fail_start = 1};
    struct rec_session *s = fake_session(&f, "refused.mscr");
    struct rec_summary sum;
    char msg[256];

    (void)state;
    assert_int_equal(rec_session_run(s, &sum, msg, sizeof(msg)), -1);
    assert_string_equal(msg, "fake: refused");
    assert_string_equal(f.calls, "S");
    assert_int_equal(access("refused.mscr", F_OK), -1); /* nothing recorded, nothing left */
    assert_int_equal(errno, ENOENT);
    rec_session_free(s);
    assert_string_equal(f.calls, "SX");
}

static void test_say(void **state)
{
    struct fake f = {0};
    struct rec_session *s = fake_session(&f, "said.mscr");

    (void)state;
    rec_session_say(s, REC_SAY_WARN, "cannot run %s: %s", "x", "y");
    assert_string_equal(f.said, "1 cannot run x: y");
    rec_session_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_loop_order),
        cmocka_unit_test(test_signal_reaches_mode),
        cmocka_unit_test(test_start_fails),
        cmocka_unit_test(test_say),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
