/* SPDX-License-Identifier: MIT */
/* Write a synthetic trace whose every string is markup, for the escaping
 * tests of the plots, the flame graph and the HTML report: the command
 * line, the executable, a thread name and a module path (so frames that
 * cannot be symbolized are named after it). Usage: pic_synth OUT.mscr */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "format/fmt_writer.h"

#define MOD_BASE 0x7f0000000000ull

static int die(const char *what, int rc)
{
    fprintf(stderr, "pic_synth: %s: %s\n", what, strerror(rc < 0 ? -rc : rc));
    return 1;
}

int main(int argc, char **argv)
{
    static const char cmd[] = "/bin/evil\0</script><img src=x onerror=alert(1)>";
    static const char module_path[] = "/nonexistent/<img src=x onerror=alert(3)>.so";
    static const char thread_name[] = "<evilthread>t</evilthread>&amp;";
    struct fmt_trace_info info = {.command = cmd, .command_len = sizeof(cmd),
                                  .hostname = "<evilhost>h</evilhost>", .stack_depth = 8};
    struct fmt_module mod = {.base = MOD_BASE, .path = module_path,
                             .path_len = sizeof(module_path) - 1, .nr_segments = 1};
    struct fmt_writer *w;
    uint32_t stacks[3];
    uint64_t ts = 1000;
    int fd, rc;

    if (argc != 2) {
        fprintf(stderr, "usage: pic_synth OUT.mscr\n");
        return 2;
    }
    fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return die(argv[1], errno);
    if ((rc = fmt_writer_create(&w, fd, &info, NULL)))
        return die("create", rc);
    mod.segments[0] = (struct fmt_segment){.vaddr = 0, .memsz = 0x100000, .flags = PF_R | PF_X};

    struct fmt_event ev = {.ts_ns = ts, .kind = FMT_EV_PROCESS_START, .pid = 4242, .tid = 4242,
                           .str = cmd, .str_len = 9, .str2 = cmd, .str2_len = sizeof(cmd)};
    if ((rc = fmt_writer_event(w, &ev)))
        return die("process start", rc);
    ev = (struct fmt_event){.ts_ns = ts, .kind = FMT_EV_THREAD_START, .pid = 4242, .tid = 4242,
                            .str = thread_name, .str_len = sizeof(thread_name) - 1};
    if ((rc = fmt_writer_event(w, &ev)))
        return die("thread start", rc);
    ev = (struct fmt_event){.ts_ns = ts, .kind = FMT_EV_MODULE_LOAD, .pid = 4242, .tid = 4242,
                            .module = &mod};
    if ((rc = fmt_writer_event(w, &ev)))
        return die("module load", rc);
    for (uint32_t i = 0; i < 3; i++) {
        /* leaf first: a function of the module, called from two others. */
        uint64_t frames[3] = {MOD_BASE + 0x1000 + 0x100 * i, MOD_BASE + 0x2000,
                              MOD_BASE + 0x3000};
        if ((rc = fmt_writer_stack(w, 0, frames, 3, &stacks[i])))
            return die("stack", rc);
    }
    /* 30 blocks: stack i gets sizes (i+1)*100; every other one is freed. */
    for (uint32_t n = 0; n < 30; n++) {
        ev = (struct fmt_event){.ts_ns = ts += 1000000, .kind = FMT_EV_MALLOC, .pid = 4242,
                                .tid = 4242, .stack = stacks[n % 3],
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
