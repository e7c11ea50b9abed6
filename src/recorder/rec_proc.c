/* SPDX-License-Identifier: MIT */
/* The recorder's dealings with processes: the listening socket and the
 * hellos on it, starting the program, learning when traced processes end,
 * collecting wait statuses, and RSS samples. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "recorder/rec_proc.h"
#include "util/util_array.h"

int rec_socket_open(char *name, size_t name_size)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    uint64_t nonce = 0;
    size_t len;
    int fd;

    if (getrandom(&nonce, sizeof(nonce), 0) != (ssize_t)sizeof(nonce))
        nonce = (uint64_t)getpid() * 0x9e3779b97f4a7c15ull;
    /* The pid in ten digits: the name is in the traced program's
     * environment, whose size must not depend on the recorder's pid (a
     * program that copies its environment would allocate more when pids
     * wrap from 5 digits to 4). */
    snprintf(name, name_size, "memscribe-%010d-%016llx", (int)getpid(), (unsigned long long)nonce);
    len = strlen(name);
    memcpy(sa.sun_path + 1, name, len);
    fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    if (bind(fd, (struct sockaddr *)&sa,
             (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + len)) != 0 ||
        listen(fd, REC_LISTEN_BACKLOG) != 0) {
        int err = errno;

        close(fd);
        return -err;
    }
    return fd;
}

/* Does the hello carry the recording's secret? Every byte is compared, so
 * the time taken tells a guesser nothing. */
static int rec_hello_authentic(const struct rec_session *s, const struct fmt_shm_hello *hello)
{
    unsigned diff = 0;

    for (unsigned i = 0; i < FMT_SHM_SECRET_BYTES; i++)
        diff |= (unsigned)(hello->secret[i] ^ s->secret[i]);
    return diff == 0;
}

/* Print a line a collector sent: what it would have written on the
 * program's stderr, which may be a data file. Only printable ASCII is
 * shown, and a recording prints REC_MAX_SAYS lines at most. */
static void rec_say(struct rec_session *s, uint32_t pid, const char *text, size_t len)
{
    char line[FMT_SHM_SAY_MAX + 1];

    if (s->nr_says++ == REC_MAX_SAYS)
        fprintf(stderr, "memscribe: collector: further messages are not shown\n");
    if (s->nr_says > REC_MAX_SAYS)
        return;
    for (size_t i = 0; i < len; i++)
        line[i] = text[i] >= 0x20 && text[i] < 0x7f ? text[i] : '?';
    line[len] = 0;
    fprintf(stderr, "memscribe: collector: %s (pid %u)\n", line, pid);
}

/* What an accepted connection has brought so far. */
enum rec_conn_state {
    REC_CONN_SILENT, /* nothing yet */
    REC_CONN_EARLY,  /* an authentic hello, waiting for an earlier segment's */
    REC_CONN_DONE,   /* taken in, refused or closed (and counted): close it */
};

/* Take the hello off an accepted connection, never waiting for it. */
static enum rec_conn_state rec_take_hello(struct rec_session *s, int conn, uint64_t now_ns)
{
    struct fmt_shm_hello hello;
    char text[FMT_SHM_SAY_MAX];
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } ctl;
    struct iovec iov[2] = {{.iov_base = &hello, .iov_len = sizeof(hello)},
                           {.iov_base = text, .iov_len = sizeof(text)}};
    struct msghdr msg = {
        .msg_iov = iov, .msg_iovlen = 2, .msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf)};
    struct cmsghdr *cm;
    struct stat st;
    int memfd = -1, pidfd = -1, seals = -1;
    ssize_t n;
    void *seg;

    /* A process announces its segments one at a time, each on its own
     * connection, but one accepted before its hello came in waits in
     * s->conns while the next is accepted, hello and all: that one is
     * left waiting too (peeked, the memfd not taken) until the earlier
     * one is in. Refusing it lost every later segment's threads (a
     * col_unwind trace under load: 31,374 allocations of 35,287). Only a
     * hello with the secret waits so: anyone may send one that looks
     * early, to hold a place among the REC_MAX_CONNS. */
    do {
        n = recv(conn, &hello, sizeof(hello), MSG_PEEK | MSG_DONTWAIT);
    } while (n < 0 && errno == EINTR);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return REC_CONN_SILENT;
    if (n <= 0) {
        /* Closed (or reset) before a word: a process that died between
         * connect and send, or someone who only connects. */
        s->ignored.closed++;
        return REC_CONN_DONE;
    }
    if (n == (ssize_t)sizeof(hello) && rec_hello_authentic(s, &hello) &&
        rec_stream_segment_early(s, &hello))
        return REC_CONN_EARLY;
    do {
        n = recvmsg(conn, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
    } while (n < 0 && errno == EINTR);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return REC_CONN_SILENT;
    for (cm = CMSG_FIRSTHDR(&msg); n >= 0 && cm; cm = CMSG_NXTHDR(&msg, cm))
        if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
            cm->cmsg_len >= CMSG_LEN(sizeof(int)))
            memcpy(&memfd, CMSG_DATA(cm), sizeof(int));
    if (n > (ssize_t)sizeof(hello) && !(msg.msg_flags & MSG_TRUNC) && memfd < 0 &&
        hello.kind == FMT_SHM_HELLO_SAY && rec_hello_authentic(s, &hello)) {
        rec_say(s, hello.pid, text, (size_t)n - sizeof(hello));
        return REC_CONN_DONE;
    }
    /* A segment must be sealed against shrinking: a mapping read past a
     * shrunk file's end would be our SIGBUS. */
    if (memfd >= 0)
        seals = fcntl(memfd, F_GET_SEALS);
    if (n != (ssize_t)sizeof(hello) || (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ||
        !rec_hello_authentic(s, &hello) || memfd < 0 || seals < 0 || !(seals & F_SEAL_SHRINK) ||
        fstat(memfd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
        (uint64_t)st.st_size > (1ull << 34)) {
        s->ignored.refused++;
        if (memfd >= 0)
            close(memfd);
        return REC_CONN_DONE;
    }
    seg = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
    close(memfd);
    if (seg == MAP_FAILED) {
        s->ignored.refused++;
        return REC_CONN_DONE;
    }
    if (hello.kind != FMT_SHM_HELLO_SEGMENT)
        pidfd = (int)syscall(SYS_pidfd_open, (long)hello.pid, 0L);
    if (rec_stream_attach(s, &hello, seg, (size_t)st.st_size, pidfd, now_ns) != 0) {
        munmap(seg, (size_t)st.st_size);
        if (pidfd >= 0)
            close(pidfd);
        s->ignored.refused++;
        return REC_CONN_DONE;
    }
    if (hello.kind != FMT_SHM_HELLO_SEGMENT && pidfd < 0) {
        /* Gone already (and maybe reaped): take what it left, once the
         * hellos of its other segments, queued behind this one, are in
         * (rec_check_exits). */
        struct rec_image *img = rec_stream_find_pid(s, hello.pid);

        if (img) {
            img->gone = 1;
            img->gone_ns = rec_clock_now(&s->clock);
        }
    }
    return REC_CONN_DONE;
}

/* Drop waiting connection i: its hello never came in time, or its place
 * is needed. */
static void rec_conn_drop(struct rec_session *s, uint32_t i)
{
    if (s->conns[i].early)
        s->ignored.refused++; /* its earlier segment never came */
    else
        s->ignored.silent++;
    close(s->conns[i].fd);
    s->conns[i] = s->conns[--s->nr_conns];
}

/* A place in s->conns: the oldest silent connection gives up its own (one
 * with an authentic hello only when every one has one). */
static void rec_conn_make_room(struct rec_session *s)
{
    uint32_t v = 0;

    for (uint32_t i = 1; i < s->nr_conns; i++)
        if (s->conns[i].early < s->conns[v].early ||
            (s->conns[i].early == s->conns[v].early && s->conns[i].since_ns < s->conns[v].since_ns))
            v = i;
    rec_conn_drop(s, v);
}

/* Queue a connection of our own behind every one waiting (the marker,
 * struct rec_queue). A full queue refuses it (EAGAIN): it is tried again
 * right after the next accept, which makes room, before a flooder blocked
 * in connect(2) is back to take it. */
static void rec_marker_send(struct rec_session *s, int lfd)
{
    struct rec_queue *q = &s->queue;
    struct sockaddr_un sa;
    socklen_t len = sizeof(sa);

    if (q->marker == REC_MARKER_QUEUED || getsockname(lfd, (struct sockaddr *)&sa, &len) != 0)
        return;
    if (q->marker == REC_MARKER_NONE) {
        q->marker_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (q->marker_fd < 0)
            return;
        q->marker = REC_MARKER_MADE;
    }
    q->marker_ns = rec_clock_now(&s->clock);
    if (connect(q->marker_fd, (struct sockaddr *)&sa, len) == 0)
        q->marker = REC_MARKER_QUEUED;
}

/* Is conn the marker? The kernel sets the peer's pid at connect(2): no
 * other process can make it ours. */
static int rec_conn_is_marker(const struct rec_session *s, int conn)
{
    struct ucred cred;
    socklen_t len = sizeof(cred);

    return s->queue.marker == REC_MARKER_QUEUED &&
           getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && cred.pid == getpid();
}

void rec_socket_accept(struct rec_session *s, int lfd, uint64_t now_ns, uint32_t max)
{
    struct rec_queue *q = &s->queue;

    /* No peer is ever waited for: one that connects and sends nothing
     * waits in s->conns, looked at once a round, for REC_CONN_WAIT_NS. */
    for (uint32_t i = 0; i < s->nr_conns;) {
        enum rec_conn_state state = rec_take_hello(s, s->conns[i].fd, now_ns);

        if (state == REC_CONN_DONE) {
            close(s->conns[i].fd);
            s->conns[i] = s->conns[--s->nr_conns];
        } else if (now_ns - s->conns[i].since_ns > REC_CONN_WAIT_NS) {
            rec_conn_drop(s, i);
        } else {
            s->conns[i++].early = state == REC_CONN_EARLY;
        }
    }
    for (uint32_t nr = 0; nr < max;) {
        enum rec_conn_state state;
        int conn;

        if (q->behind)
            rec_marker_send(s, lfd);
        conn = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

        if (conn < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                /* Everything queued before the pass began is in. */
                q->behind = 0;
                q->in_ns = now_ns;
            }
            return;
        }
        nr++;
        if (rec_conn_is_marker(s, conn)) {
            close(conn);
            close(q->marker_fd);
            q->marker = REC_MARKER_NONE;
            if (q->marker_ns > q->in_ns)
                q->in_ns = q->marker_ns;
            continue;
        }
        state = rec_take_hello(s, conn, now_ns);
        if (state == REC_CONN_DONE) {
            close(conn);
            continue;
        }
        if (s->nr_conns == REC_MAX_CONNS)
            rec_conn_make_room(s);
        s->conns[s->nr_conns].fd = conn;
        s->conns[s->nr_conns].early = state == REC_CONN_EARLY;
        s->conns[s->nr_conns++].since_ns = now_ns;
    }
    q->behind = 1; /* in_ns stays the last time the queue was seen empty */
}

void rec_socket_catch_up(struct rec_session *s, int lfd)
{
    uint64_t until = rec_clock_now(&s->clock);

    for (uint32_t i = 0; i < REC_CATCH_UP_PASSES; i++) {
        rec_socket_accept(s, lfd, rec_clock_now(&s->clock), REC_ACCEPTS_PER_ROUND);
        if (!s->queue.behind || s->queue.in_ns >= until)
            break;
    }
    while (s->nr_conns) /* no later round to speak in */
        rec_conn_drop(s, s->nr_conns - 1);
}

int rec_child_spawn(struct rec_child *c, const char *path, char *const argv[], char *const envp[])
{
    int go[2], err[2];
    pid_t pid;

    *c = (struct rec_child){.pid = -1, .go_fd = -1, .err_fd = -1};
    if (pipe2(go, O_CLOEXEC) != 0)
        return -1;
    if (pipe2(err, O_CLOEXEC) != 0) {
        close(go[0]);
        close(go[1]);
        return -1;
    }
    pid = fork();
    if (pid == 0) {
        char ch;
        int e;

        close(go[1]);
        close(err[0]);
        /* Wait until the trace file exists, so a failure there kills a
         * program that has not run yet. */
        if (read(go[0], &ch, 1) != 1)
            _exit(127);
        signal(SIGXFSZ, SIG_DFL);
        execve(path, argv, envp);
        e = errno;
        (void)!write(err[1], &e, sizeof(e));
        _exit(127);
    }
    close(go[0]);
    close(err[1]);
    if (pid < 0) {
        close(go[1]);
        close(err[0]);
        return -1;
    }
    c->pid = pid;
    c->go_fd = go[1];
    c->err_fd = err[0];
    return 0;
}

void rec_child_go(struct rec_session *s, struct rec_child *c, const char *name)
{
    int rc = write(c->go_fd, "g", 1) == 1 ? 0 : -errno;

    close(c->go_fd);
    /* Closed on a successful execve (O_CLOEXEC): nothing to read then. */
    if (read(c->err_fd, &c->exec_err, sizeof(c->exec_err)) != (ssize_t)sizeof(c->exec_err))
        c->exec_err = 0;
    close(c->err_fd);
    c->go_fd = c->err_fd = -1;
    if (rc)
        rec_session_say(s, REC_SAY_WARN, "cannot release %s: %s", name, strerror(-rc));
    if (c->exec_err)
        rec_session_say(s, REC_SAY_WARN, "cannot run %s: %s", name, strerror(c->exec_err));
}

void rec_child_drop(struct rec_child *c)
{
    if (c->go_fd < 0)
        return;
    kill(c->pid, SIGKILL);
    waitpid(c->pid, NULL, 0);
    close(c->go_fd);
    close(c->err_fd);
    c->go_fd = c->err_fd = -1;
}

/* The wait status of a program that ran, as record's exit status: its
 * exit code, 128+N if signal N killed it, 127 if it could not be run. */
int rec_child_exit_code(const struct rec_child *c, int status)
{
    if (c->exec_err)
        return 127;
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return 1;
}

static void rec_status_add(struct rec_statuses *st, pid_t pid, int status)
{
    if (UTIL_ARRAY_RESERVE(st->v, st->cap, (size_t)st->n + 1, 16))
        return;
    st->v[st->n].pid = pid;
    st->v[st->n].status = status;
    st->n++;
}

static int rec_status_take(struct rec_statuses *st, pid_t pid, int *status)
{
    for (uint32_t i = 0; i < st->n; i++)
        if (st->v[i].pid == pid) {
            *status = st->v[i].status;
            st->v[i] = st->v[--st->n];
            return 1;
        }
    return 0;
}

static void rec_status_note(struct rec_statuses *st, pid_t pid, int status)
{
    if (pid == st->root) {
        st->root_status = status;
        st->root_done = 1;
    }
    rec_status_add(st, pid, status);
}

int rec_reap(struct rec_statuses *st)
{
    for (;;) {
        int status;
        pid_t pid = waitpid(-1, &status, WNOHANG | __WALL);

        if (pid > 0) {
            rec_status_note(st, pid, status);
            continue;
        }
        if (pid < 0 && errno == EINTR)
            continue;
        return pid < 0 && errno == ECHILD ? 1 : 0;
    }
}

/* Has the image's process ended? Marks it gone if so, with a time read
 * after the fact: every hello it sent was queued before. */
static int rec_image_ended(struct rec_session *s, struct rec_image *img)
{
    struct pollfd pfd = {.fd = img->pidfd, .events = POLLIN};

    if (img->open && !img->gone && img->pidfd >= 0 && poll(&pfd, 1, 0) == 1) {
        img->gone = 1;
        img->gone_ns = rec_clock_now(&s->clock);
    }
    return img->open && img->gone;
}

/* Close every open image whose process has ended: first take in the
 * hellos queued before it ended, since a thread's SEGMENT hello sent just
 * before the process ended may wait behind (its rings would be lost). */
void rec_check_exits(struct rec_session *s, struct rec_statuses *st, int lfd, uint64_t now_ns)
{
    uint32_t ended = 0;

    for (uint32_t i = 0; i < s->nr_images; i++)
        ended += rec_image_ended(s, s->images[i]) ? 1 : 0;
    if (!ended)
        return;
    rec_socket_accept(s, lfd, now_ns, REC_ACCEPTS_PER_ROUND);
    for (uint32_t i = 0; i < s->nr_images; i++) {
        struct rec_image *img = s->images[i];
        int status = 0, known;

        if (!img->open || !img->gone) /* one that ended meanwhile: next round */
            continue;
        if (s->queue.behind && s->queue.in_ns < img->gone_ns)
            continue; /* its last hellos may wait in the queue: a later round */
        known = rec_status_take(st, (pid_t)img->pid, &status);
        if (!known && waitpid((pid_t)img->pid, &status, WNOHANG | __WALL) == (pid_t)img->pid) {
            known = 1;
            if ((pid_t)img->pid == st->root) {
                st->root_status = status;
                st->root_done = 1;
            }
        }
        img->over = 1;
        rec_stream_close(s, img, status, known, now_ns);
    }
}

void rec_sample_rss(struct rec_session *s, uint64_t now_ns, uint64_t period_ns)
{
    long page = sysconf(_SC_PAGESIZE);

    for (uint32_t i = 0; i < s->nr_images; i++) {
        struct rec_image *img = s->images[i];
        char path[64], buf[128];
        unsigned long long size_pages, rss_pages;
        struct fmt_event ev = {0};
        ssize_t n;
        int fd;

        /* Not before its start: a sample dated before the hello (now_ns is
         * the loop's, taken before the hello was read) would come before
         * the image's PROCESS_START, of the process it exec'd from. */
        if (!img->open || now_ns < img->start_ns || now_ns - img->last_rss_ns < period_ns)
            continue;
        img->last_rss_ns = now_ns;
        snprintf(path, sizeof(path), "/proc/%u/statm", img->pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n <= 0)
            continue;
        buf[n] = 0;
        /* No address space left: the process has ended (a zombie, or past
         * exit_mm), and a sample now would come after its exit. */
        if (sscanf(buf, "%llu %llu", &size_pages, &rss_pages) != 2 || !size_pages)
            continue;
        ev.kind = FMT_EV_RSS;
        ev.image = img->index;
        ev.pid = img->pid;
        ev.tid = img->pid;
        ev.thread = img->main_thread;
        ev.size = rss_pages * (unsigned long long)page;
        rec_merge_synth(s, &ev, now_ns, NULL, 0, NULL, 0);
        img->rss_sample_ns = now_ns;
    }
}

char *rec_proc_cmdline(pid_t pid, size_t *len)
{
    char path[64], *buf = NULL;
    size_t cap = 0, n = 0;
    int fd;

    *len = 0;
    snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    for (;;) {
        ssize_t r;

        if (n + 4096 > cap) {
            char *nb = realloc(buf, cap + 65536);

            if (!nb)
                break;
            buf = nb;
            cap += 65536;
        }
        r = fd >= 0 ? read(fd, buf + n, cap - n - 1) : 0;
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    if (fd >= 0)
        close(fd);
    if (buf) {
        buf[n] = 0;
        *len = n;
    }
    return buf;
}
