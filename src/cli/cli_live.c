/* SPDX-License-Identifier: MIT */
/* record --live's tap (cli_live.h). The server is `memscribe serve` in a
 * process of its own: the recorder never waits for a page's query, and
 * a query's replay of the trace never takes the recorder's core time. */
#include "cli/cli_live.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"

extern char **environ;

/* Read the address serve prints first on its standard output. */
static void read_url(int fd, char *url, size_t size)
{
    size_t len = 0;

    url[0] = 0;
    while (len + 1 < size) {
        struct pollfd p = {fd, POLLIN, 0};
        ssize_t got;

        if (poll(&p, 1, 10000) <= 0 || (got = read(fd, url + len, size - 1 - len)) <= 0)
            break;
        len += (size_t)got;
        url[len] = 0;
        if (strchr(url, '\n'))
            break;
    }
    char *nl = strchr(url, '\n');
    if (nl)
        *nl = 0;
    else
        url[0] = 0;
}

static void live_start(struct rec_session *s, struct cli_live *l)
{
    char self[PATH_MAX], url[512], me[24];
    char *argv[16 + 2 * CLI_LIVE_MAX_LABELS];
    int n = 0, fd[2];
    ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
    posix_spawn_file_actions_t fa;

    l->started = 1;
    if (len <= 0 || pipe2(fd, O_CLOEXEC)) {
        cli_warn("record: --live: cannot start the server: %s", strerror(errno));
        return;
    }
    self[len] = 0;
    argv[n++] = self;
    argv[n++] = "serve";
    if (l->listen) {
        argv[n++] = "--listen";
        argv[n++] = (char *)l->listen;
    }
    if (l->port) {
        argv[n++] = "--port";
        argv[n++] = (char *)l->port;
    }
    if (l->url_file) {
        argv[n++] = "--url-file";
        argv[n++] = (char *)l->url_file;
    }
    if (l->token_file) {
        argv[n++] = "--token-file";
        argv[n++] = (char *)l->token_file;
    }
    for (unsigned i = 0; i < l->nr_labels; i++) {
        argv[n++] = "--metrics-label";
        argv[n++] = (char *)l->labels[i];
    }
    /* the server goes when the recorder does, SIGKILLed or not */
    snprintf(me, sizeof(me), "%d", (int)getpid());
    argv[n++] = "--parent";
    argv[n++] = me;
    argv[n++] = "--";
    argv[n++] = (char *)l->trace;
    argv[n] = NULL;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    int rc = posix_spawn(&l->pid, self, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fd[1]);
    if (rc) {
        l->pid = 0;
        close(fd[0]);
        cli_warn("record: --live: cannot start the server: %s", strerror(rc));
        return;
    }
    rec_session_add_helper(s, l->pid);
    read_url(fd[0], url, sizeof(url));
    close(fd[0]);
    if (!url[0]) {
        cli_warn("record: --live: the server did not start (its message is above); recording "
                 "goes on");
        return;
    }
    char *query = strstr(url, "/?token=");
    if (l->metrics && query && l->token_file)
        fprintf(stderr, "memscribe: record: metrics at %.*s/metrics (the bearer token in %s)\n",
                (int)(query - url), url, l->token_file);
    else if (l->metrics && query)
        fprintf(stderr, "memscribe: record: metrics at %.*s/metrics?token=%s\n", (int)(query - url),
                url, query + 8);
    else
        fprintf(stderr, "memscribe: record: live view at %s\n", url);
}

static void live_round(struct rec_session *s, void *tap, uint64_t now_ns)
{
    struct cli_live *l = tap;

    (void)now_ns;
    if (!l->started) {
        l->trace = rec_session_trace_path(s);
        live_start(s, l);
    }
}

/* Wait up to ms for the server to end: 1 if it did. */
static int server_ended(pid_t pid, int ms)
{
    int status;

    for (int waited = 0;; waited += 50) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid || (r < 0 && errno != EINTR))
            return 1;
        if (waited >= ms)
            return 0;
        poll(NULL, 0, 50);
    }
}

/* The recording ended: the server is told how the program ended (SIGUSR1,
 * its wait status as the signal's value, -1 when not seen), and stays until
 * a page following it has taken the final state (docs/serve.md, "The
 * end"); then it ends by itself, or is stopped after CLI_LIVE_LINGER_MS.
 * A server of --metrics alone (no --live page to follow) stops at once:
 * record's command ends with its program. */
static void live_finish(struct rec_session *s, void *tap)
{
    struct cli_live *l = tap;
    union sigval how = {.sival_int = -1};
    int status;

    if (!l->pid)
        return;
    if (rec_session_program_status(s, &status))
        how.sival_int = status;
    if (l->metrics_only || sigqueue(l->pid, SIGUSR1, how) ||
        !server_ended(l->pid, CLI_LIVE_LINGER_MS)) {
        kill(l->pid, SIGTERM);
        while (waitpid(l->pid, &status, 0) < 0 && errno == EINTR)
            ;
    }
    l->pid = 0;
    if (!l->metrics_only)
        fprintf(stderr,
                "memscribe: record: the live view ended with the recording; `memscribe serve %s` "
                "shows the trace again\n",
                l->trace);
}

const struct rec_tap_ops cli_live_tap = {.round = live_round, .finish = live_finish};
