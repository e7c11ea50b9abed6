/* SPDX-License-Identifier: MIT */
/* Write synthetic traces for the picture tests.
 *
 *   pic_synth OUT.mscr
 *       every string is markup, for the escaping tests of the plots, the
 *       flame graph and the HTML report: the command line, the executable,
 *       a thread name and a module path (so frames that cannot be
 *       symbolized are named after it);
 *   pic_synth --pairs N --stacks S OUT.mscr
 *       N malloc/free pairs from S distinct stacks, 4096 blocks live at a
 *       time and freed in random order (lifetimes spread over the whole
 *       trace): the heavy case for the report's window pre-aggregation. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/fmt_writer.h"
#include "test_xorshift.h"

#define MOD_BASE 0x7f0000000000ull

static int die(const char *what, int rc)
{
    fprintf(stderr, "pic_synth: %s: %s\n", what, strerror(rc < 0 ? -rc : rc));
    return 1;
}

static uint64_t rnd_state = 88172645463325252ull;
static uint64_t rnd(void)
{
    return test_xorshift64(&rnd_state);
}

#define LIVE 4096

static int write_pairs(const char *path, uint64_t nr_pairs, uint32_t nr_stacks)
{
    static const char cmd[] = "pic_synth\0--pairs";
    struct fmt_trace_info info = {
        .command = cmd, .command_len = sizeof(cmd), .hostname = "h", .stack_depth = 8};
    static uint64_t live[LIVE];
    struct fmt_writer *w;
    uint32_t *stacks = calloc(nr_stacks, sizeof(*stacks));
    uint64_t ts = 0, next_addr = 0x10000;
    int fd, rc;

    if (!stacks)
        return die("stacks", ENOMEM);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return die(path, errno);
    if ((rc = fmt_writer_create(&w, fd, &info, NULL)))
        return die("create", rc);
    for (uint32_t i = 0; i < nr_stacks; i++) {
        /* Distinct leaves under a few shared callers: a bushy tree. */
        uint64_t frames[4] = {0x500000 + 0x10 * (uint64_t)i, 0x400000 + 0x10 * (i % 37),
                              0x300000 + 0x10 * (i % 5), 0x200000};
        if ((rc = fmt_writer_stack(w, 0, frames, 4, &stacks[i])))
            return die("stack", rc);
    }
    for (uint64_t n = 0; n < nr_pairs + LIVE; n++) {
        unsigned slot = (unsigned)(rnd() % LIVE);
        struct fmt_event ev = {.ts_ns = ts += 100, .pid = 1, .tid = 1};

        if (live[slot]) {
            ev.kind = FMT_EV_FREE;
            ev.addr = live[slot];
            live[slot] = 0;
            if ((rc = fmt_writer_event(w, &ev)))
                return die("free", rc);
            ev.ts_ns = ts += 100;
        }
        if (n >= nr_pairs)
            continue; /* the tail frees what is left, but some stay: leaks */
        ev.kind = FMT_EV_MALLOC;
        ev.addr = live[slot] = next_addr += 0x40;
        ev.size = 1 + rnd() % 4096;
        ev.stack = stacks[rnd() % nr_stacks];
        if ((rc = fmt_writer_event(w, &ev)))
            return die("malloc", rc);
    }
    if ((rc = fmt_writer_finish(w)))
        return die("finish", rc);
    fmt_writer_destroy(w);
    free(stacks);
    return close(fd) ? die(path, errno) : 0;
}

int main(int argc, char **argv)
{
    static const char cmd[] = "/bin/evil\0</script><img src=x onerror=alert(1)>";
    static const char module_path[] = "/nonexistent/<img src=x onerror=alert(3)>.so";
    static const char thread_name[] = "<evilthread>t</evilthread>&amp;";
    struct fmt_trace_info info = {.command = cmd,
                                  .command_len = sizeof(cmd),
                                  .hostname = "<evilhost>h</evilhost>",
                                  .stack_depth = 8};
    struct fmt_module mod = {.base = MOD_BASE,
                             .path = module_path,
                             .path_len = sizeof(module_path) - 1,
                             .nr_segments = 1};
    struct fmt_writer *w;
    uint32_t stacks[3];
    uint64_t ts = 1000;
    int fd, rc;

    if (argc == 6 && !strcmp(argv[1], "--pairs") && !strcmp(argv[3], "--stacks")) {
        uint32_t nr_stacks = (uint32_t)strtoul(argv[4], NULL, 10);

        return write_pairs(argv[5], strtoull(argv[2], NULL, 10), nr_stacks ? nr_stacks : 1);
    }
    if (argc != 2) {
        fprintf(stderr, "usage: pic_synth OUT.mscr | pic_synth --pairs N --stacks S OUT.mscr\n");
        return 2;
    }
    fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return die(argv[1], errno);
    if ((rc = fmt_writer_create(&w, fd, &info, NULL)))
        return die("create", rc);
    mod.segments[0] = (struct fmt_segment){.vaddr = 0, .memsz = 0x100000, .flags = PF_R | PF_X};

    struct fmt_event ev = {.ts_ns = ts,
                           .kind = FMT_EV_PROCESS_START,
                           .pid = 4242,
                           .tid = 4242,
                           .str = cmd,
                           .str_len = 9,
                           .str2 = cmd,
                           .str2_len = sizeof(cmd)};
    if ((rc = fmt_writer_event(w, &ev)))
        return die("process start", rc);
    ev = (struct fmt_event){.ts_ns = ts,
                            .kind = FMT_EV_THREAD_START,
                            .pid = 4242,
                            .tid = 4242,
                            .str = thread_name,
                            .str_len = sizeof(thread_name) - 1};
    if ((rc = fmt_writer_event(w, &ev)))
        return die("thread start", rc);
    ev = (struct fmt_event){
        .ts_ns = ts, .kind = FMT_EV_MODULE_LOAD, .pid = 4242, .tid = 4242, .module = &mod};
    if ((rc = fmt_writer_event(w, &ev)))
        return die("module load", rc);
    for (uint32_t i = 0; i < 3; i++) {
        /* leaf first: a function of the module, called from two others. */
        uint64_t frames[3] = {MOD_BASE + 0x1000 + 0x100 * i, MOD_BASE + 0x2000, MOD_BASE + 0x3000};
        if ((rc = fmt_writer_stack(w, 0, frames, 3, &stacks[i])))
            return die("stack", rc);
    }
    /* 30 blocks: stack i gets sizes (i+1)*100; every other one is freed. */
    for (uint32_t n = 0; n < 30; n++) {
        ev = (struct fmt_event){.ts_ns = ts += 1000000,
                                .kind = FMT_EV_MALLOC,
                                .pid = 4242,
                                .tid = 4242,
                                .stack = stacks[n % 3],
                                .addr = 0x10000 + 0x1000 * (uint64_t)n,
                                .size = 100 * (n % 3 + 1)};
        if ((rc = fmt_writer_event(w, &ev)))
            return die("malloc", rc);
        if (n % 2 == 0) {
            ev.kind = FMT_EV_FREE;
            ev.ts_ns = ts += 500000;
            ev.size = 0;
            if ((rc = fmt_writer_event(w, &ev)))
                return die("free", rc);
        }
    }
    if ((rc = fmt_writer_finish(w)))
        return die("finish", rc);
    fmt_writer_destroy(w);
    if (close(fd))
        return die(argv[1], errno);
    return 0;
}
