/* SPDX-License-Identifier: MIT */
/* `memscribe record -- CMD` (rec_session.h): the program started here with
 * the collector preloaded, held until the trace exists, then let go; the
 * recording ends when every process of its tree has ended and its status
 * is record's. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recorder/rec_class.h"
#include "recorder/rec_proc.h"

extern char **environ;

/* What rec_spawn_env() adds at the end of the environment. */
#define REC_ENV_OURS 8

struct rec_spawn {
    const char *prog;
    char *collector;
    char **env;
    struct rec_child child;
};

/* The environment for the program: ours, with the collector first in
 * LD_PRELOAD and the protocol variables set. NULL when out of memory. */
static char **rec_spawn_env(const struct rec_session *s, const char *collector)
{
    size_t n = 0, k = 0;
    char **env;
    const char *old_preload = getenv("LD_PRELOAD"), *only = s->opt.only;

    while (environ[n])
        n++;
    env = calloc(n + REC_ENV_OURS + 1, sizeof(*env));
    if (!env)
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "LD_PRELOAD=", 11) &&
            strncmp(environ[i], FMT_SHM_ENV_SOCKET "=", sizeof(FMT_SHM_ENV_SOCKET)) &&
            strncmp(environ[i], FMT_SHM_ENV_DEPTH "=", sizeof(FMT_SHM_ENV_DEPTH)) &&
            strncmp(environ[i], FMT_SHM_ENV_NO_FOLLOW "=", sizeof(FMT_SHM_ENV_NO_FOLLOW)) &&
            strncmp(environ[i], FMT_SHM_ENV_CLOCK "=", sizeof(FMT_SHM_ENV_CLOCK)) &&
            strncmp(environ[i], FMT_SHM_ENV_ONLY "=", sizeof(FMT_SHM_ENV_ONLY)) &&
            strncmp(environ[i], FMT_SHM_ENV_REACH "=", sizeof(FMT_SHM_ENV_REACH)) &&
            strncmp(environ[i], FMT_SHM_ENV_SECRET "=", sizeof(FMT_SHM_ENV_SECRET)))
            env[k++] = environ[i];
    if (asprintf(&env[k++], "LD_PRELOAD=%s%s%s", collector, old_preload && *old_preload ? ":" : "",
                 old_preload ? old_preload : "") < 0 ||
        asprintf(&env[k++], "%s=%s", FMT_SHM_ENV_SOCKET, s->sock) < 0 ||
        asprintf(&env[k++], "%s=%s", FMT_SHM_ENV_SECRET, s->secret_hex) < 0 ||
        asprintf(&env[k++], "%s=%u", FMT_SHM_ENV_DEPTH, s->opt.depth) < 0 ||
        asprintf(&env[k++], "%s=%d", FMT_SHM_ENV_NO_FOLLOW, s->opt.no_follow) < 0 ||
        asprintf(&env[k++], "%s=%s", FMT_SHM_ENV_CLOCK, s->clock.tsc ? "tsc" : "monotonic") < 0 ||
        asprintf(&env[k++], "%s=%s", FMT_SHM_ENV_ONLY, only ? only : "") < 0 ||
        asprintf(&env[k++], "%s=%d", FMT_SHM_ENV_REACH, s->opt.reach) < 0)
        return NULL;
    env[k] = NULL;
    return env;
}

static void rec_spawn_env_free(char **env)
{
    size_t n = 0;

    if (!env)
        return;
    while (env[n])
        n++;
    /* Our settings are the last entries; the rest belong to environ. */
    for (size_t i = n >= REC_ENV_OURS ? n - REC_ENV_OURS : 0; i < n; i++)
        free(env[i]);
    free(env);
}

static int rec_spawn_start(struct rec_session *s, void *mode, char *msg, size_t msg_size)
{
    struct rec_spawn *m = mode;

    (void)msg;
    (void)msg_size;
    rec_child_go(s, &m->child, m->prog);
    return 0;
}

static int rec_spawn_done(struct rec_session *s, void *mode, uint64_t now_ns)
{
    (void)mode;
    (void)now_ns;
    if (!s->no_children || !s->statuses.root_done)
        return 0;
    for (uint32_t i = 0; i < s->nr_images; i++)
        if (s->images[i]->open)
            return 0;
    return 1;
}

/* Forward a signal someone sent us to the program; one from the terminal
 * (si_code > 0) reached the program's process group already. */
static void rec_spawn_on_signal(void *mode, int sig, const siginfo_t *info)
{
    struct rec_spawn *m = mode;

    if (info->si_code <= 0 && m->child.pid > 0)
        kill(m->child.pid, sig);
}

/* The program's exit status, and a word if no process loaded the collector. */
static int rec_spawn_finish(struct rec_session *s, void *mode, char *note, size_t note_size)
{
    struct rec_spawn *m = mode;

    if (s->nr_images == 0 && !m->child.exec_err)
        /* The loader refused LD_PRELOAD (its own message is above), or
         * the program cleared it before running what allocates. */
        snprintf(note, note_size, "no process of %s loaded the collector %s; the trace is empty",
                 m->prog, m->collector);
    return rec_child_exit_code(&m->child, s->statuses.root_status);
}

static void rec_spawn_release(void *mode)
{
    struct rec_spawn *m = mode;

    rec_child_drop(&m->child);
    rec_spawn_env_free(m->env);
    free(m->collector);
    free(m);
}

static const struct rec_mode_ops rec_spawn_ops = {
    .start = rec_spawn_start,
    .done = rec_spawn_done,
    .on_signal = rec_spawn_on_signal,
    .finish = rec_spawn_finish,
    .release = rec_spawn_release,
};

/* May prog be traced, and not overwritten by its own trace? */
static int rec_spawn_check(const struct rec_session *s, const char *prog, char *msg,
                           size_t msg_size)
{
    const char *out = s->opt.out_path;
    struct stat so, sp;

    if (rec_check_program(prog, msg, msg_size) != 0)
        return -1;
    /* Creating the trace replaces the file before the program runs. */
    if (out && stat(out, &so) == 0 && stat(prog, &sp) == 0 && so.st_dev == sp.st_dev &&
        so.st_ino == sp.st_ino) {
        snprintf(msg, msg_size, "-o %s is the program itself; it would be overwritten", out);
        return -1;
    }
    return 0;
}

int rec_mode_spawn(struct rec_session *s, const char *prog, char *const argv[], char *msg,
                   size_t msg_size)
{
    struct rec_spawn *m = calloc(1, sizeof(*m));
    char *collector, rate[24];

    if (!m || rec_session_command_argv(s, argv)) {
        free(m);
        snprintf(msg, msg_size, "out of memory");
        return -1;
    }
    *m = (struct rec_spawn){.prog = prog, .child = {.go_fd = -1, .err_fd = -1}};
    if (rec_spawn_check(s, prog, msg, msg_size) != 0 ||
        !(collector = rec_collector_path(msg, msg_size))) {
        free(m);
        return -1;
    }
    m->collector = rec_collector_for(collector, prog);
    s->mode = &rec_spawn_ops;
    s->mode_arg = m;
    /* Always set: one inherited from our environment must not sample a
     * trace that says it is exact. */
    snprintf(rate, sizeof(rate), "%llu", (unsigned long long)s->opt.sample_bytes);
    setenv(FMT_SHM_ENV_SAMPLE, rate, 1);
    rec_session_begin(s, 0);
    if (rec_session_listen(s, msg, msg_size) != 0)
        return -1;
    if (!(m->env = rec_spawn_env(s, m->collector))) {
        snprintf(msg, msg_size, "out of memory");
        return -1;
    }
    if (rec_child_spawn(&m->child, prog, argv, m->env) != 0) {
        snprintf(msg, msg_size, "cannot start %s: %s", prog, strerror(errno));
        return -1;
    }
    s->root_pid = m->child.pid;
    s->statuses.root = m->child.pid;
    s->own_tree = 1;
    s->name = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
    return 0;
}
