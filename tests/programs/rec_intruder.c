/* SPDX-License-Identifier: MIT */
/* Attacks on a recording's channel (tests/e2e/record_channel.sh), and the
 * program traced meanwhile. Usage:
 *   rec_intruder wait FILE SIZE      wait until FILE exists, then malloc(SIZE)
 *   rec_intruder silent SOCKET N     hold N connections that send nothing
 *                                    (until killed, 60 s at most)
 *   rec_intruder inject SOCKET PID SIZE [unsealed]
 *                                    announce a made-up process image PID,
 *                                    its ring holding one malloc of SIZE,
 *                                    with MEMSCRIBE_SECRET as the secret
 *                                    (none if unset), in a memfd sealed
 *                                    against shrinking unless "unsealed"
 *   rec_intruder segments SOCKET SIZE
 *                                    announce this process in three
 *                                    segments, the second one's hello sent
 *                                    last (mallocs of SIZE, SIZE+1, SIZE+2)
 *   rec_intruder flood SOCKET SECONDS [segment|silent]
 *                                    connect and close at once, again and
 *                                    again, for SECONDS (or until killed);
 *                                    with "segment", each connection first
 *                                    sends a SEGMENT hello for a stream
 *                                    nobody announced (no secret, no memfd);
 *                                    with "silent", each stays open, silent,
 *                                    until 256 newer ones are
 *   rec_intruder spin SECONDS        burn a CPU for SECONDS (or until killed)
 *   rec_intruder storm FILE PAIRS    wait until FILE exists, then malloc and
 *                                    free PAIRS times; print "storm: WALL_MS
 *                                    GAP_MS", GAP_MS the longest time between
 *                                    two checks of the clock, one every 256
 *                                    pairs (a thread waiting for ring room)
 * Exit status 0 when the message went out (refusing it is the recorder's
 * business), 1 on a local failure. */
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "format/fmt_shm.h"

static int connect_to(const char *name)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    size_t len = strlen(name);
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

    if (fd < 0 || len >= sizeof(sa.sun_path) - 1)
        return -1;
    memcpy(sa.sun_path + 1, name, len);
    if (connect(fd, (struct sockaddr *)&sa,
                (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + len)) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static int do_wait(const char *file, size_t size)
{
    void *p;

    while (access(file, F_OK) != 0)
        usleep(20000);
    p = malloc(size);
    free(p);
    return 0;
}

static int do_silent(const char *name, int n)
{
    for (int i = 0; i < n; i++)
        if (connect_to(name) < 0) {
            perror("rec_intruder: connect");
            return 1;
        }
    sleep(60);
    return 0;
}

/* A segment of one 4 KiB ring holding a thread start and one malloc of
 * size, in a memfd (sealed against shrinking if sealed), and its hello in
 * *hello. Returns the memfd, or -1. */
static int make_segment(struct fmt_shm_hello *hello, uint16_t kind, uint32_t index, uint32_t pid,
                        uint64_t size, int sealed)
{
    const uint32_t nr_rings = 1, ring_size = 4096;
    uint64_t seg_size = fmt_shm_segment_bytes(index, nr_rings, ring_size);
    struct fmt_shm_header *h;
    struct fmt_shm_thread *t;
    struct fmt_shm_event *e;
    struct timespec now;
    uint64_t ns;
    int memfd;

    *hello = (struct fmt_shm_hello){.magic = FMT_SHM_HELLO_MAGIC,
                                    .version = FMT_SHM_VERSION,
                                    .kind = kind,
                                    .pid = pid,
                                    .ppid = 1,
                                    .segment_index = index,
                                    .stream_id = 0x1234567 ^ pid};
    clock_gettime(CLOCK_MONOTONIC, &now);
    ns = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
#ifdef FMT_SHM_ENV_SECRET /* (built against the protocol before it had one: none) */
    {
        const char *secret = getenv(FMT_SHM_ENV_SECRET);

        if (secret && fmt_shm_secret_parse(secret, hello->secret) != 0)
            return -1;
    }
#endif
    memfd = (int)syscall(SYS_memfd_create, "intruder", (long)MFD_ALLOW_SEALING);
    if (memfd < 0 || ftruncate(memfd, (off_t)seg_size) != 0 ||
        (sealed && fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) != 0))
        return -1;
    h = mmap(NULL, seg_size, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
    if (h == MAP_FAILED)
        return -1;
    fmt_shm_header_layout(h, index, nr_rings, ring_size);
    h->pid = pid;
    h->stream_id = hello->stream_id;
    h->segment_index = index;
    h->max_frames = 1;
    hello->ts_ns = ns;
    t = (struct fmt_shm_thread *)(void *)fmt_shm_ring_data(h, 0);
    t->h.type = FMT_SHM_REC_THREAD_START;
    t->h.len = fmt_shm_thread_size(0);
    t->ts_ns = ns;
    t->tid = pid + index;
    e = (struct fmt_shm_event *)(void *)((char *)t + t->h.len);
    e->type = FMT_SHM_REC_EVENT;
    e->kind = FMT_EV_MALLOC;
    e->ts_ns = ns + 1;
    e->addr = 0x100000;
    e->size = size;
    atomic_store(&fmt_shm_ring_ctl(h, 0)->head, t->h.len + FMT_SHM_EVENT_SIZE(0));
    return memfd;
}

/* Send hello with memfd on the connected fd, and close it. */
static int send_segment(int fd, struct fmt_shm_hello *hello, int memfd)
{
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } ctl;
    struct iovec iov = {.iov_base = hello, .iov_len = sizeof(*hello)};
    struct msghdr msg = {.msg_iov = &iov,
                         .msg_iovlen = 1,
                         .msg_control = ctl.buf,
                         .msg_controllen = sizeof(ctl.buf)};
    struct cmsghdr *cm;

    memset(ctl.buf, 0, sizeof(ctl.buf));
    cm = CMSG_FIRSTHDR(&msg);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cm), &memfd, sizeof(int));
    if (sendmsg(fd, &msg, 0) != (ssize_t)sizeof(*hello)) {
        perror("rec_intruder: sendmsg");
        return 1;
    }
    close(fd);
    return 0;
}

static int do_inject(const char *name, uint32_t pid, uint64_t size, int sealed)
{
    struct fmt_shm_hello hello;
    int memfd = make_segment(&hello, FMT_SHM_HELLO_IMAGE, 0, pid, size, sealed), fd;

    if (memfd < 0)
        return 1;
    fd = connect_to(name);
    if (fd < 0) {
        perror("rec_intruder: connect");
        return 1;
    }
    return send_segment(fd, &hello, memfd);
}

/* This process's own image, in three segments whose hellos reach the
 * recorder out of order: segment 1's connection is made first but its
 * hello is sent after segment 2's, as a collector thread descheduled
 * between connect and send does. Each holds one malloc: size, size + 1,
 * size + 2. */
static int do_segments(const char *name, uint64_t size)
{
    struct fmt_shm_hello hello[3];
    uint32_t pid = (uint32_t)getpid();
    int memfd[3], fd0, fd1, fd2;

    for (uint32_t i = 0; i < 3; i++)
        if ((memfd[i] = make_segment(&hello[i], i ? FMT_SHM_HELLO_SEGMENT : FMT_SHM_HELLO_IMAGE, i,
                                     pid, size + i, 1)) < 0)
            return 1;
    if ((fd0 = connect_to(name)) < 0 || send_segment(fd0, &hello[0], memfd[0]) != 0)
        return 1;
    usleep(100000);
    if ((fd1 = connect_to(name)) < 0)
        return 1;
    usleep(100000); /* the recorder takes it in, with no hello yet */
    if ((fd2 = connect_to(name)) < 0 || send_segment(fd2, &hello[2], memfd[2]) != 0)
        return 1;
    usleep(100000);
    if (send_segment(fd1, &hello[1], memfd[1]) != 0)
        return 1;
    usleep(200000); /* alive while the recorder maps all three */
    return 0;
}

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int do_flood(const char *name, double seconds, const char *how)
{
    int segment = !strcmp(how, "segment"), silent = !strcmp(how, "silent"), held[256];
    struct fmt_shm_hello hello = {.magic = FMT_SHM_HELLO_MAGIC,
                                  .version = FMT_SHM_VERSION,
                                  .kind = FMT_SHM_HELLO_SEGMENT,
                                  .pid = (uint32_t)getpid(),
                                  .segment_index = 1,
                                  .stream_id = 0x5eed};
    double end = now_s() + seconds;
    unsigned long n = 0;

    while (now_s() < end) {
        for (int i = 0; i < 64; i++) {
            int fd = connect_to(name);

            if (fd < 0) {
                fprintf(stderr, "rec_intruder: flood: connect failed after %lu\n", n);
                return 1;
            }
            if (segment) {
                hello.stream_id++;
                (void)!send(fd, &hello, sizeof(hello), MSG_NOSIGNAL);
            }
            if (silent) {
                if (n >= 256)
                    close(held[n % 256]);
                held[n % 256] = fd;
            } else {
                close(fd);
            }
            n++;
        }
    }
    printf("flood: %lu connections\n", n);
    return 0;
}

static int do_spin(double seconds)
{
    double end = now_s() + seconds;
    volatile unsigned long x = 0;

    while (now_s() < end)
        for (int i = 0; i < 100000; i++)
            x++;
    return 0;
}

static int do_storm(const char *file, unsigned long pairs)
{
    void *live[16] = {0};
    double start, last, gap = 0;

    while (access(file, F_OK) != 0)
        usleep(5000);
    start = last = now_s();
    for (unsigned long i = 0; i < pairs; i++) {
        free(live[i % 16]);
        live[i % 16] = malloc(16 + i % 256);
        if (i % 256 == 0) {
            double t = now_s();

            if (t - last > gap)
                gap = t - last;
            last = t;
        }
    }
    for (int i = 0; i < 16; i++)
        free(live[i]);
    printf("storm: %.0f %.0f\n", (now_s() - start) * 1e3, gap * 1e3);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "wait"))
        return do_wait(argv[2], strtoul(argv[3], NULL, 10));
    if (argc == 4 && !strcmp(argv[1], "silent"))
        return do_silent(argv[2], atoi(argv[3]));
    if (argc == 4 && !strcmp(argv[1], "segments"))
        return do_segments(argv[2], strtoull(argv[3], NULL, 10));
    if ((argc == 5 || argc == 6) && !strcmp(argv[1], "inject"))
        return do_inject(argv[2], (uint32_t)strtoul(argv[3], NULL, 10), strtoull(argv[4], NULL, 10),
                         argc == 5);
    if ((argc == 4 || argc == 5) && !strcmp(argv[1], "flood"))
        return do_flood(argv[2], atof(argv[3]), argc == 5 ? argv[4] : "");
    if (argc == 3 && !strcmp(argv[1], "spin"))
        return do_spin(atof(argv[2]));
    if (argc == 4 && !strcmp(argv[1], "storm"))
        return do_storm(argv[2], strtoul(argv[3], NULL, 10));
    fprintf(stderr, "usage: rec_intruder wait FILE SIZE | silent SOCKET N | "
                    "inject SOCKET PID SIZE [unsealed] | segments SOCKET SIZE | "
                    "flood SOCKET SECONDS [segment|silent] | spin SECONDS | storm FILE PAIRS\n");
    return 2;
}
