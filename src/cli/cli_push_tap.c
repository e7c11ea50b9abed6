/* SPDX-License-Identifier: MIT */
/* record --push-metrics's tap (cli_push_tap.h). */
#include "cli/cli_push_tap.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"

extern char **environ;

/* `memscribe metrics --push URL [--job J] [--label K=V]... [--check C]...
 * TRACE` started (the checks: the last push's). */
static void push_start(struct rec_session *s, struct cli_push_tap *p, bool last)
{
    char self[PATH_MAX];
    char **argv = calloc(12 + 2 * (CLI_PUSH_MAX_LABELS + (size_t)p->nr_checks), sizeof(*argv));
    int n = 0;
    ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);

    if (len <= 0 || !argv) {
        cli_warn("record: --push-metrics: cannot start the push: %s", strerror(errno));
        free(argv);
        return;
    }
    self[len] = 0;
    argv[n++] = self;
    argv[n++] = "metrics";
    argv[n++] = "--push";
    argv[n++] = (char *)p->url;
    if (p->job) {
        argv[n++] = "--job";
        argv[n++] = (char *)p->job;
    }
    for (unsigned i = 0; i < p->nr_labels; i++) {
        argv[n++] = "--label";
        argv[n++] = (char *)p->labels[i];
    }
    for (unsigned i = 0; last && i < p->nr_checks; i++) {
        argv[n++] = "--check";
        argv[n++] = (char *)p->checks[i];
    }
    argv[n++] = "--";
    argv[n++] = (char *)rec_session_trace_path(s);
    argv[n] = NULL;
    int rc = posix_spawn(&p->pid, self, NULL, NULL, argv, environ);
    free(argv);
    if (rc) {
        p->pid = 0;
        cli_warn("record: --push-metrics: cannot start the push: %s", strerror(rc));
    }
}

/* The push under way ended (or, wait, once it does): 1 if it did, its
 * success in *ok. */
static int push_ended(struct cli_push_tap *p, int wait, int *ok)
{
    int status;
    pid_t r;

    while ((r = waitpid(p->pid, &status, wait ? 0 : WNOHANG)) < 0 && errno == EINTR)
        ;
    if (r == 0)
        return 0;
    *ok = r == p->pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    p->pid = 0;
    return 1;
}

static void push_round(struct rec_session *s, void *tap, uint64_t now_ns)
{
    struct cli_push_tap *p = tap;
    int ok;

    if (p->pid && !push_ended(p, 0, &ok))
        return; /* still under way: this turn is skipped */
    if (!p->every_ns || now_ns - p->last_ns < p->every_ns)
        return;
    p->last_ns = now_ns;
    push_start(s, p, false);
}

static void push_finish(struct rec_session *s, void *tap)
{
    struct cli_push_tap *p = tap;
    int ok = 0;

    if (p->pid)
        push_ended(p, 1, &ok);
    push_start(s, p, true);
    if (p->pid && push_ended(p, 1, &ok) && ok)
        return;
    p->failed = 1;
    cli_warn("record: --push-metrics: the last push to %s failed (above)", p->url);
}

const struct rec_tap_ops cli_push_tap = {.round = push_round, .finish = push_finish};
