/* SPDX-License-Identifier: MIT */
/* `memscribe record --serve --pid PID -o FILE` (rec_session.h): the
 * recorder a collector started for itself (no wrapper;
 * src/collector/col_selfrec.c), on the socket it hands over. It is
 * nobody's parent, so it cannot wait for the traced tree: it watches the
 * first program's pidfd and, once every image it knows has ended, looks in
 * /proc for a process that may still speak to it before it finishes the
 * trace. Signals are not its to act on: a service manager that stops the
 * program's group gets the trace finished as soon as the program ends. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "recorder/rec_proc.h"
#include "util/util_duration.h"
#include "util/util_size.h"

/* The collector hands over its listening socket on fd 3 and waits for a
 * word on fd 4: "ok", or the reason it will not be traced. */
#define REC_SERVE_LFD 3
#define REC_SERVE_WORD_FD 4
/* How often the tree is looked for in /proc once every image has ended. */
#define REC_SERVE_SCAN_NS (20 * 1000 * 1000ull)

struct rec_serve {
    pid_t root;
    int rootfd; /* pidfd of the first program, -1 if it is gone already */
    char sock[108];
    uint64_t last_scan_ns;
};

/* Take over fd 3 and the socket name and secret from the environment.
 * Returns the listening fd, or -1 with a message in msg. */
static int rec_serve_init(struct rec_serve *sv, struct rec_session *s, pid_t root, char *msg,
                          size_t msg_size)
{
    const char *name = getenv(FMT_SHM_ENV_SOCKET), *secret = getenv(FMT_SHM_ENV_SECRET);
    int acc = 0;
    socklen_t len = sizeof(acc);

    memset(sv, 0, sizeof(*sv));
    sv->rootfd = -1;
    if (!name || !*name || strlen(name) >= sizeof(sv->sock) || !secret ||
        fmt_shm_secret_parse(secret, s->secret) != 0) {
        snprintf(msg, msg_size, "--serve wants %s and %s in its environment", FMT_SHM_ENV_SOCKET,
                 FMT_SHM_ENV_SECRET);
        return -1;
    }
    if (getsockopt(REC_SERVE_LFD, SOL_SOCKET, SO_ACCEPTCONN, &acc, &len) != 0 || !acc) {
        snprintf(msg, msg_size, "--serve wants a listening socket on fd %d", REC_SERVE_LFD);
        return -1;
    }
    listen(REC_SERVE_LFD, REC_LISTEN_BACKLOG); /* the collector's was SOMAXCONN */
    fcntl(REC_SERVE_LFD, F_SETFD, FD_CLOEXEC);
    fcntl(REC_SERVE_LFD, F_SETFL, fcntl(REC_SERVE_LFD, F_GETFL) | O_NONBLOCK);
    strcpy(sv->sock, name);
    /* Out of the environment the helpers this recorder starts inherit (the
     * metrics server, pushes): with the socket's name they would count as
     * processes of the traced tree (rec_serve_tree_alive), and the server
     * lives as long as the recorder does; nor is the secret theirs. */
    unsetenv(FMT_SHM_ENV_SOCKET);
    unsetenv(FMT_SHM_ENV_SECRET);
    sv->root = root;
    sv->rootfd = (int)syscall(SYS_pidfd_open, (long)root, 0L);
    s->root_pid = root;
    return REC_SERVE_LFD;
}

/* Does the file hold `want` (NUL bytes and all)? Read in overlapping
 * pieces, so a file of any size is searched. */
static int rec_file_holds(const char *path, const char *want, size_t want_len)
{
    char buf[65536];
    size_t keep = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC), found = 0;

    if (fd < 0)
        return 0;
    while (!found) {
        ssize_t n = read(fd, buf + keep, sizeof(buf) - keep);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        n += (ssize_t)keep;
        found = memmem(buf, (size_t)n, want, want_len) != NULL;
        keep = (size_t)n < want_len ? (size_t)n : want_len - 1;
        memmove(buf, buf + n - keep, keep);
    }
    close(fd);
    return found;
}

/* Is a process of the traced tree still there, one we have no image of
 * yet? A forked child keeps its parent's segment mapped until its first
 * call ("/memfd:<socket name>"); an exec'd image not yet at its collector
 * has the socket in its environment. */
static int rec_serve_tree_alive(const struct rec_serve *sv)
{
    char env[160], map[160], path[64];
    size_t env_len, map_len;
    DIR *d = opendir("/proc");
    struct dirent *e;
    pid_t self = getpid();
    int alive = 0;

    if (!d)
        return 0;
    env_len = (size_t)snprintf(env, sizeof(env), "%s=%s%c", FMT_SHM_ENV_SOCKET, sv->sock, 0);
    map_len = (size_t)snprintf(map, sizeof(map), "/memfd:%s ", sv->sock);
    while (!alive && (e = readdir(d))) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);

        if (*end || pid <= 0 || pid == self)
            continue;
        snprintf(path, sizeof(path), "/proc/%ld/environ", pid);
        alive = rec_file_holds(path, env, env_len);
        snprintf(path, sizeof(path), "/proc/%ld/maps", pid);
        alive = alive || rec_file_holds(path, map, map_len);
    }
    closedir(d);
    return alive;
}

/* Has the whole traced tree ended (no image open, nothing queued, no
 * process left that could still say hello)? */
static int rec_serve_done(struct rec_session *s, void *mode, uint64_t now_ns)
{
    struct rec_serve *sv = mode;
    struct pollfd pfd = {.fd = sv->rootfd, .events = POLLIN};

    if (sv->rootfd >= 0 && poll(&pfd, 1, 0) != 1)
        return 0; /* the first program runs */
    /* Only an authentic hello waiting: anyone may hold silent connections
     * open, and a process of the tree that connected and has not spoken
     * yet is found in /proc below. */
    for (uint32_t i = 0; i < s->nr_conns; i++)
        if (s->conns[i].early)
            return 0;
    for (uint32_t i = 0; i < s->nr_images; i++)
        if (s->images[i]->open)
            return 0;
    if (now_ns - sv->last_scan_ns < REC_SERVE_SCAN_NS)
        return 0;
    sv->last_scan_ns = now_ns;
    return !rec_serve_tree_alive(sv);
}

/* The trace exists: say "ok" on fd 4 and close it; stderr goes to
 * /dev/null from now on (nobody reads it), and the cwd to "/". */
static int rec_serve_start(struct rec_session *s, void *mode, char *msg, size_t msg_size)
{
    int null = open("/dev/null", O_WRONLY | O_CLOEXEC);

    (void)s;
    (void)mode;
    (void)msg;
    (void)msg_size;
    (void)!write(REC_SERVE_WORD_FD, "ok", 2);
    close(REC_SERVE_WORD_FD);
    if (null >= 0) {
        dup2(null, 2);
        close(null);
    }
    /* Hold no directory the user may want to unmount or remove. */
    (void)!chdir("/");
    return 0;
}

static void rec_serve_release(void *mode)
{
    struct rec_serve *sv = mode;

    if (sv->rootfd >= 0)
        close(sv->rootfd);
    free(sv);
}

static const struct rec_mode_ops rec_serve_ops = {
    .start = rec_serve_start,
    .done = rec_serve_done,
    .release = rec_serve_release,
};

int rec_mode_serve(struct rec_session *s, pid_t pid, char *msg, size_t msg_size)
{
    struct rec_serve *sv;
    const char *v = getenv(FMT_SHM_ENV_SAMPLE);

    /* Until the trace exists, what goes wrong is the collector's to say. */
    if (dup2(REC_SERVE_WORD_FD, 2) < 0 || !(sv = calloc(1, sizeof(*sv)))) {
        snprintf(msg, msg_size, "--serve wants the collector's word pipe on fd %d",
                 REC_SERVE_WORD_FD);
        return -1;
    }
    /* The collector that started us passes the rate it samples at (a
     * whole number, 0: exact; col_selfrec.c). */
    if (!v || util_size_parse(v, &s->opt.sample_bytes))
        s->opt.sample_bytes = 0;
    /* ... and whether the program asks for the scan at exit (MEMSCRIBE_REACH=1,
     * docs/leaks.md "Classes at exit"). */
    v = getenv(FMT_SHM_ENV_REACH);
    s->opt.reach = s->wopt.reach = v && *v == '1';
    /* ... and the period of an aggregated trace (MEMSCRIBE_AGGREGATE, "1s");
     * none that is not one, or not a multiple of the time unit, or with a
     * sample, which cannot say which blocks are transient (docs/aggregate.md). */
    v = getenv(FMT_SHM_ENV_AGGREGATE);
    if (!v || !*v || util_duration_parse(v, &s->opt.aggregate_ns) || s->opt.sample_bytes ||
        (s->opt.aggregate_ns % s->opt.time_unit_ns))
        s->opt.aggregate_ns = 0;
    rec_session_begin(s, 0);
    s->mode = &rec_serve_ops;
    s->mode_arg = sv;
    if ((s->lfd = rec_serve_init(sv, s, pid, msg, msg_size)) < 0)
        return -1;
    s->statuses.root = pid;
    if (!(s->command = rec_proc_cmdline(pid, &s->command_len))) {
        snprintf(msg, msg_size, "out of memory");
        return -1;
    }
    return 0;
}
